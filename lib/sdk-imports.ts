/**
 * An esbuild plugin that shapes how the AWS SDK splits into chunks, so that a cold start loads only
 * what a request needs. Two rewrites of the SDK's own files as esbuild loads them:
 *
 * 1. **Direct imports.** An import of names from a barrel (an index that only re-exports) goes
 *    straight to the files that define them. esbuild splits code by file: a file reachable from
 *    index.mjs is loaded at init, with every statement any chunk uses, and a barrel makes every
 *    file it re-exports reachable. So the DynamoDB client, importing `@smithy/core/protocols` for
 *    one class, brought to init the REST, XML and HTTP/2 code that only the lazily loaded Bedrock
 *    client and the credential providers use. Only pure barrels (nothing but `export … from`) of
 *    packages that declare `sideEffects` are rewritten, and a file their `sideEffects` names is
 *    still imported for its effect. Whatever the plugin cannot follow keeps its import as it was.
 * 2. **One lazy chunk for the credential providers Lambda never runs.** The SDK imports each
 *    provider (SSO, INI files, STS web identity, process, container and instance metadata, login)
 *    on demand. Each is a dynamic entry, and esbuild cuts the code they share with index.mjs into
 *    many small chunks, each one more module to load at init (measured: 19 modules instead of 14
 *    for the message function, and more CPU at init than the bytes saved). On Lambda the chain ends
 *    at the environment's credentials, which keep their own small chunk; the others now load
 *    together, from one chunk, if ever.
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { Plugin, PluginBuild } from "esbuild";

/** Where a barrel's exported name is defined: the file, and its name there. */
interface Origin {
  file: string;
  name: string;
}

interface Barrel {
  names: Map<string, Origin>;
  /** Files behind the barrel that their package says have side effects. */
  effects: Set<string>;
}

const sdkFile = /[\\/]node_modules[\\/](?:@aws-sdk|@smithy)[\\/].*\.m?js$/;

/** The credential providers a Lambda function never reaches (its chain ends at the environment's). */
const unusedOnLambda = [
  "@smithy/credential-provider-imds",
  "@aws-sdk/nested-clients/sts",
  "@aws-sdk/nested-clients/sso-oidc",
  "@aws-sdk/nested-clients/signin",
  "@aws-sdk/credential-provider-ini",
  "@aws-sdk/credential-provider-sso",
  "@aws-sdk/credential-provider-process",
  "@aws-sdk/credential-provider-http",
  "@aws-sdk/credential-provider-web-identity",
  "@aws-sdk/credential-provider-login",
];
const importOfUnused = new RegExp(
  `import\\("(${unusedOnLambda.map((name) => name.replace(/[/.-]/g, "\\$&")).join("|")})"\\)`,
  "g",
);
const providersModule = "sdk-credential-providers-unused-on-lambda";
const reExport = /export\s*\{([^}]*)\}\s*from\s*"([^"]+)"\s*;?/g;
const reExportAll = /export\s*\*\s*from\s*"([^"]+)"\s*;?/g;
const namedImport = /import\s*\{([^}]*)\}\s*from\s*"([^"]+)"\s*;?/g;
const comments = /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g;

/** `a, b as c` → [[a, a], [b, c]]: [name there, name here]. */
function specifiers(list: string): [string, string][] {
  return list
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [name = "", alias] = part.split(/\s+as\s+/);
      return [name.trim(), (alias ?? name).trim()];
    });
}

/** The names a plain module exports (a non-barrel behind `export *`), or undefined if unsure. */
function declaredExports(source: string): Set<string> | undefined {
  const code = source.replace(comments, "");
  if (/export\s*\*/.test(code) || /export\s+default\b/.test(code)) return undefined;
  const names = new Set<string>();
  for (const match of code.matchAll(
    /export\s+(?:async\s+)?(?:const|let|var|function\*?|class)\s+([\w$]+)/g,
  )) {
    if (match[1]) names.add(match[1]);
  }
  for (const match of code.matchAll(/export\s*\{([^}]*)\}(?!\s*from)/g)) {
    for (const [, exported] of specifiers(match[1] ?? "")) names.add(exported);
  }
  // `export const { a, b } = …` and the like are beyond this reader.
  if (/export\s+(?:const|let|var)\s*[{[]/.test(code)) return undefined;
  return names;
}

interface PackageInfo {
  root: string;
  /** false: no file has effects; a list: those files do; undefined: any might (not rewritten). */
  sideEffects: false | string[] | undefined;
}

export function sdkImportsPlugin(): Plugin {
  const barrels = new Map<string, Promise<Barrel | undefined>>();
  const packages = new Map<string, PackageInfo | undefined>();

  const packageOf = (file: string): PackageInfo | undefined => {
    let directory = dirname(file);
    while (directory !== dirname(directory)) {
      if (packages.has(directory)) return packages.get(directory);
      try {
        const manifest = JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as {
          name?: string;
          sideEffects?: unknown;
        };
        if (manifest.name) {
          const sideEffects =
            manifest.sideEffects === false
              ? false
              : Array.isArray(manifest.sideEffects)
                ? manifest.sideEffects.filter((entry): entry is string => typeof entry === "string")
                : undefined;
          const info: PackageInfo = { root: directory, sideEffects };
          packages.set(directory, info);
          return info;
        }
      } catch {
        // No package.json here: look further up.
      }
      directory = dirname(directory);
    }
    return undefined;
  };

  const hasEffects = (file: string): boolean => {
    const info = packageOf(file);
    if (!info || info.sideEffects === undefined) return true;
    if (info.sideEffects === false) return false;
    const path = `./${relative(info.root, file).split("\\").join("/")}`;
    // A glob is not matched here: it counts as naming the file, the safe side.
    return info.sideEffects.some((entry) => entry.includes("*") || entry === path || entry === path.slice(2));
  };

  const resolved = new Map<string, Promise<string | undefined>>();
  const resolve = (build: PluginBuild, spec: string, from: string): Promise<string | undefined> => {
    const key = `${dirname(from)}\0${spec}`;
    let pending = resolved.get(key);
    if (!pending) {
      pending = build
        .resolve(spec, { kind: "import-statement", resolveDir: dirname(from) })
        .then((result) =>
          result.errors.length === 0 && !result.external && result.path ? result.path : undefined,
        );
      resolved.set(key, pending);
    }
    return pending;
  };
  /** Each SDK file's rewritten text (undefined: unchanged), once per process: every function loads them. */
  const rewritten = new Map<string, Promise<string | undefined>>();

  /** `reading`: the barrels being read on the way here; one that re-exports itself is not followed. */
  const barrelAt = (
    build: PluginBuild,
    file: string,
    reading: ReadonlySet<string> = new Set(),
  ): Promise<Barrel | undefined> => {
    if (reading.has(file)) return Promise.resolve(undefined);
    let pending = barrels.get(file);
    if (!pending) {
      pending = readBarrel(build, file, new Set([...reading, file]));
      barrels.set(file, pending);
    }
    return pending;
  };

  /** A pure barrel's names, followed to their defining files; undefined if `file` is not one. */
  const readBarrel = async (
    build: PluginBuild,
    file: string,
    reading: ReadonlySet<string>,
  ): Promise<Barrel | undefined> => {
    const info = packageOf(file);
    if (!info || info.sideEffects === undefined) return undefined;
    const source = readFileSync(file, "utf8");
    const code = source.replace(comments, "");
    if (code.replace(reExport, "").replace(reExportAll, "").trim() !== "") return undefined;
    const barrel: Barrel = { names: new Map(), effects: new Set() };
    const follow = async (target: string, name: string): Promise<Origin> => {
      const inner = await barrelAt(build, target, reading);
      return inner?.names.get(name) ?? { file: target, name };
    };
    for (const match of code.matchAll(reExport)) {
      const target = await resolve(build, match[2] ?? "", file);
      if (!target) return undefined;
      const inner = await barrelAt(build, target, reading);
      if (inner) for (const effect of inner.effects) barrel.effects.add(effect);
      else if (hasEffects(target)) barrel.effects.add(target);
      for (const [name, exported] of specifiers(match[1] ?? "")) {
        if (name === "default") return undefined;
        barrel.names.set(exported, await follow(target, name));
      }
    }
    for (const match of code.matchAll(reExportAll)) {
      const target = await resolve(build, match[1] ?? "", file);
      if (!target) return undefined;
      const inner = await barrelAt(build, target, reading);
      if (inner) {
        for (const effect of inner.effects) barrel.effects.add(effect);
        for (const [name, origin] of inner.names) if (!barrel.names.has(name)) barrel.names.set(name, origin);
        continue;
      }
      const names = declaredExports(readFileSync(target, "utf8"));
      if (!names) return undefined;
      if (hasEffects(target)) barrel.effects.add(target);
      for (const name of names) if (!barrel.names.has(name)) barrel.names.set(name, { file: target, name });
    }
    return barrel;
  };

  return {
    name: "sdk-imports",
    setup(build) {
      build.onResolve({ filter: new RegExp(`^${providersModule}$`) }, () => ({
        path: providersModule,
        namespace: providersModule,
      }));
      build.onLoad({ filter: /.*/, namespace: providersModule }, () => ({
        // Each provider's namespace under its name, as `import(name)` would have given it.
        contents: `${unusedOnLambda.map((name, i) => `import * as p${i} from ${JSON.stringify(name)};`).join("\n")}
export default { ${unusedOnLambda.map((name, i) => `${JSON.stringify(name)}: p${i}`).join(", ")} };`,
        resolveDir: dirname(fileURLToPath(import.meta.url)),
        loader: "js",
      }));
      build.onLoad({ filter: sdkFile }, async (args) => {
        let pending = rewritten.get(args.path);
        if (!pending) {
          pending = rewrite(build, args.path);
          rewritten.set(args.path, pending);
        }
        const contents = await pending;
        return contents === undefined
          ? undefined
          : { contents, loader: "js", resolveDir: dirname(args.path) };
      });
    },
  };

  async function rewrite(build: PluginBuild, path: string): Promise<string | undefined> {
    const original = readFileSync(path, "utf8");
    if (!original.includes("import")) return undefined;
    const source = original.replace(
      importOfUnused,
      (_call, name: string) =>
        `import(${JSON.stringify(providersModule)}).then((all) => all.default[${JSON.stringify(name)}])`,
    );
    let changed = source !== original;
    const replacements: [string, string][] = [];
    for (const match of source.matchAll(namedImport)) {
      const [statement, list = "", spec = ""] = match;
      const target = await resolve(build, spec, path);
      const barrel = target ? await barrelAt(build, target) : undefined;
      if (!barrel) continue;
      const byFile = new Map<string, string[]>();
      const kept: string[] = [];
      for (const [name, local] of specifiers(list)) {
        const origin = barrel.names.get(name);
        if (!origin) {
          kept.push(name === local ? name : `${name} as ${local}`);
          continue;
        }
        const list = byFile.get(origin.file) ?? [];
        list.push(origin.name === local ? local : `${origin.name} as ${local}`);
        byFile.set(origin.file, list);
      }
      const lines = [...barrel.effects].map((file) => `import ${JSON.stringify(file)};`);
      for (const [file, names] of byFile)
        lines.push(`import { ${names.join(", ")} } from ${JSON.stringify(file)};`);
      if (kept.length > 0) lines.push(`import { ${kept.join(", ")} } from ${JSON.stringify(spec)};`);
      // On one line, as the import was: a `//` comment ending in it cannot uncover code.
      replacements.push([statement, lines.join(" ")]);
      changed = true;
    }
    if (!changed) return undefined;
    let contents = source;
    for (const [from, to] of replacements) contents = contents.replace(from, to);
    return contents;
  }
}
