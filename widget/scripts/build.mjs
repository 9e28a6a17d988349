/**
 * Builds the widget with esbuild into dist/: widget.js (the loader: all a page loads until the
 * visitor opens the chat) and widget/panel-<hash>.js (the panel, loaded on first open; named by its
 * content, so it can be cached for a year). Prints the sizes, gzip and brotli, before and after
 * opening, writes them to dist/sizes.json, and fails above the budget: 10 KB gzip before opening,
 * 30 KB gzip in all.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = join(import.meta.dirname, "..");
const dist = join(root, "dist");
export const budget = { beforeOpenGzip: 10 * 1024, totalGzip: 30 * 1024 };

rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, "widget"), { recursive: true });

const common = {
  bundle: true,
  minify: true,
  target: ["es2020", "chrome90", "firefox101", "safari16"],
  legalComments: "none",
  logLevel: "warning",
};

const panel = await build({
  ...common,
  entryPoints: [join(root, "src/panel.ts")],
  format: "esm",
  outdir: join(dist, "widget"),
  entryNames: "panel-[hash]",
  metafile: true,
});
const panelFile = Object.keys(panel.metafile.outputs).find((output) => output.endsWith(".js"));
if (!panelFile) throw new Error("esbuild wrote no panel");
const panelPath = `widget/${basename(panelFile)}`;

await build({
  ...common,
  entryPoints: [join(root, "src/loader.ts")],
  format: "iife",
  outfile: join(dist, "widget.js"),
  define: { PANEL_PATH: JSON.stringify(panelPath) },
});

const sizes = (files) => {
  const content = Buffer.concat(files.map((file) => readFileSync(join(dist, file))));
  return {
    raw: content.length,
    gzip: gzipSync(content, { level: 9 }).length,
    brotli: brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
};
const report = {
  panel: panelPath,
  beforeOpen: sizes(["widget.js"]),
  total: sizes(["widget.js", panelPath]),
  budget,
};
writeFileSync(join(dist, "sizes.json"), `${JSON.stringify(report, null, 2)}\n`);
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
const line = (name, size) => `${name}: ${kb(size.raw)} raw, ${kb(size.gzip)} gzip, ${kb(size.brotli)} brotli`;
console.log(`widget ${line("before open", report.beforeOpen)} (budget ${kb(budget.beforeOpenGzip)} gzip)`);
console.log(`widget ${line("in all", report.total)} (budget ${kb(budget.totalGzip)} gzip)`);
if (report.beforeOpen.gzip > budget.beforeOpenGzip || report.total.gzip > budget.totalGzip) {
  console.error("the widget is over its size budget");
  process.exit(1);
}
