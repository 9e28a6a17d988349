/**
 * Prints what a browser downloads on the console's first load (index.html, its script and style
 * sheet, config.json aside), raw and gzip-compressed, and fails above the budget.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

const dist = join(import.meta.dirname, "..", "dist");
const budgetBytes = 100 * 1024;
const html = readFileSync(join(dist, "index.html"), "utf8");
const referenced = [...html.matchAll(/(?:src|href)="\/([^"]+\.(?:js|css))"/g)].map((match) => match[1]);
const files = ["index.html", ...referenced];
let raw = 0;
let gzip = 0;
for (const file of files) {
  const content = readFileSync(join(dist, file));
  raw += content.length;
  gzip += gzipSync(content, { level: 9 }).length;
}
const all = readdirSync(join(dist, "assets")).map((name) => statSync(join(dist, "assets", name)).size);
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
console.log(
  `console first load: ${files.length} files, ${kb(raw)} raw, ${kb(gzip)} gzip (budget ${kb(budgetBytes)}); ${all.length} asset files in all`,
);
if (gzip > budgetBytes) {
  console.error("the console's first load is over its budget");
  process.exit(1);
}
