/**
 * How every Lambda is bundled, in one place: the CDK stack (local esbuild, no Docker), the local
 * runtime (which runs the very bundles) and the benchmark all use these options.
 *
 * Each function is its own bundle: `index.mjs` and, split off it, chunks it imports only when it
 * needs them (`import()`: a model engine and its SDK client, image fetching, the look-up tools, the
 * SDK's own rarely used credential providers). What a request does not use is never read or run,
 * so a function starts with only what every request needs. (In one file, esbuild would instead wrap
 * such modules in lazy initialisers, and wrapped modules are not tree-shaken: measured, the message
 * function grew by 100 KB and started no faster.)
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type BuildOptions, build, type Metafile } from "esbuild";
import { sdkImportsPlugin } from "./sdk-imports.ts";

/**
 * Some CommonJS dependencies call require(); an ES module has none, so the files that need it define
 * it. Only those: creating a require costs about 0.15 ms per file at a cold start, and of a message
 * function's fifty files three use it (dropUnusedRequire).
 */
const requireBanner = "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);";

/** Node 24 on Lambda; ESM so top-level await, tree shaking and splitting work; the AWS SDK bundled (pinned). */
export const esbuildOptions = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  minify: true,
  splitting: true,
  entryNames: "index",
  chunkNames: "chunks/[name]-[hash]",
  outExtension: { ".js": ".mjs" },
  // Prefer ES modules so the SDK and zod tree-shake.
  mainFields: ["module", "main"],
  banner: { js: requireBanner },
  legalComments: "none",
  sourcemap: false,
  logLevel: "error",
} as const satisfies BuildOptions;

/** The file Lambda loads: `index.mjs` exports `handler`. */
export const handlerFile = "index.mjs";

/** One instance for every build in a process: it caches what it learnt of the SDK's files. */
const sdkImportsOnce = sdkImportsPlugin();

/** Bundles one function's entry into `outDirectory` (index.mjs and its chunks), as the stack deploys it. */
export async function bundleFunction(
  entry: string,
  outDirectory: string,
  /** `sdkImports: false` builds as esbuild alone would (the benchmark's floor, compared). */
  extra: Pick<BuildOptions, "nodePaths"> & { sdkImports?: boolean } = {},
): Promise<Awaited<ReturnType<typeof build>>> {
  const { sdkImports = true, ...options } = extra;
  const result = await build({
    ...esbuildOptions,
    entryPoints: [entry],
    outdir: outDirectory,
    plugins: sdkImports ? [sdkImportsOnce] : [],
    ...options,
    metafile: true,
  });
  const metafile = result.metafile as Metafile;
  dropUnreachableFiles(metafile);
  dropUnusedRequire(outDirectory, metafile);
  return result;
}

/**
 * Deletes the output files nothing imports. esbuild writes a chunk for each `import()` before tree
 * shaking, so one whose call was shaken out is still written, though never loaded: the SDK's
 * browser user-agent parser (bowser, 33 KB) was in every function that uses the SDK.
 */
function dropUnreachableFiles(metafile: Metafile): void {
  const reached = outputsReached(metafile, { atInit: false });
  for (const file of Object.keys(metafile.outputs)) {
    if (reached.has(file)) continue;
    rmSync(resolve(file));
    delete metafile.outputs[file];
  }
}

/**
 * The output files `index.mjs` reaches (paths as the metafile names them): through its static
 * imports alone, what a cold start loads (`atInit`), or through `import()` too, all that can load.
 */
export function outputsReached(metafile: Metafile, { atInit }: { atInit: boolean }): Set<string> {
  const outputs = metafile.outputs;
  const reached = new Set<string>();
  const visit = (file: string) => {
    if (reached.has(file) || !outputs[file]) return;
    reached.add(file);
    for (const imported of outputs[file].imports) {
      if (!imported.external && (!atInit || imported.kind === "import-statement")) visit(imported.path);
    }
  };
  for (const file of Object.keys(outputs)) {
    if (file.endsWith(`/${handlerFile}`) || file === handlerFile) visit(file);
  }
  return reached;
}

/** Bundles made by `bundleFunctionSync`'s child process, by entry: its directory. */
const bundledAhead = new Map<string, string>();

/**
 * The same, for CDK's local bundling, which is synchronous, while esbuild runs plugins only in an
 * asynchronous build. So a child process (through tsx, as `cdk.json` runs the app) bundles: on the
 * first call, this entry and every one in `alongside` (the stack's other functions) at once, in
 * parallel; later calls copy their bundle from there. One process per function would start tsx,
 * esbuild and the plugin's reading of the SDK sixty times.
 */
export function bundleFunctionSync(
  entry: string,
  outDirectory: string,
  alongside: readonly string[] = [],
): void {
  if (!bundledAhead.has(entry)) {
    const entries = [...new Set([entry, ...alongside])].filter((each) => !bundledAhead.has(each));
    const root = resolve(import.meta.dirname, "..");
    const work = mkdtempSync(join(tmpdir(), "chatbot-bundles-"));
    process.once("exit", () => rmSync(work, { recursive: true, force: true }));
    execFileSync(
      process.execPath,
      ["--import", "tsx", join(root, "bin/bundle-functions.ts"), work, ...entries],
      {
        cwd: root,
        stdio: "inherit",
      },
    );
    for (const [position, each] of entries.entries()) bundledAhead.set(each, join(work, String(position)));
  }
  cpSync(bundledAhead.get(entry) as string, outDirectory, { recursive: true });
}

/**
 * Takes the require banner out of every output file that never names `require` otherwise (esbuild
 * applies a banner to all files alike). A file that mentions the word anywhere keeps it, so a
 * mention in a string only costs the saving. Keeps the metafile's sizes true.
 */
function dropUnusedRequire(outDirectory: string, metafile: Metafile): void {
  for (const entry of readdirSync(outDirectory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".mjs")) continue;
    const file = join(entry.parentPath, entry.name);
    const code = readFileSync(file, "utf8");
    if (!code.startsWith(requireBanner) || /\brequire\b/.test(code.slice(requireBanner.length))) continue;
    const stripped = code.slice(requireBanner.length);
    writeFileSync(file, stripped);
    const output = Object.entries(metafile.outputs).find(([path]) => resolve(path) === file);
    if (output) output[1].bytes = Buffer.byteLength(stripped);
  }
}
