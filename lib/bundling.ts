/**
 * How every Lambda is bundled, in one place: the CDK stack (NodejsFunction, local esbuild, no
 * Docker), the local runtime (which runs the very bundles) and the benchmark all use these options.
 */
import type { BuildOptions } from "esbuild";

/** Node 24 on Lambda; ESM so top-level await and tree shaking work; the AWS SDK bundled (pinned). */
export const esbuildOptions = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  minify: true,
  // Prefer ES modules so the SDK and zod tree-shake.
  mainFields: ["module", "main"],
  // Some CommonJS dependencies call require(); ESM bundles need it defined.
  banner: { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" },
  legalComments: "none",
  sourcemap: false,
  logLevel: "error",
} as const satisfies BuildOptions;
