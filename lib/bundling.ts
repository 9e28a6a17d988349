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
import { type BuildOptions, build, buildSync } from "esbuild";

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
  // Some CommonJS dependencies call require(); ESM bundles need it defined (in every chunk).
  banner: { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" },
  legalComments: "none",
  sourcemap: false,
  logLevel: "error",
} as const satisfies BuildOptions;

/** The file Lambda loads: `index.mjs` exports `handler`. */
export const handlerFile = "index.mjs";

/** Bundles one function's entry into `outDirectory` (index.mjs and its chunks), as the stack deploys it. */
export function bundleFunctionSync(entry: string, outDirectory: string): void {
  buildSync({ ...esbuildOptions, entryPoints: [entry], outdir: outDirectory });
}

export async function bundleFunction(
  entry: string,
  outDirectory: string,
  extra: Pick<BuildOptions, "metafile" | "nodePaths"> = {},
): Promise<Awaited<ReturnType<typeof build>>> {
  return build({ ...esbuildOptions, entryPoints: [entry], outdir: outDirectory, ...extra });
}
