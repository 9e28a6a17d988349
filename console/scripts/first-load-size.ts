/**
 * What a browser downloads on the console's first load (index.html, its script and style sheet;
 * config.json aside), raw and gzip-compressed. Run after the build (`npm run build`), it prints
 * the figures and fails above the budget; the README states the gzip figure in whole kilobytes,
 * and a test compares the two (test/browser/console-size.test.ts).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

export const consoleDist = resolve(import.meta.dirname, "..", "dist");
export const budgetBytes = 100 * 1024;

export interface FirstLoad {
  files: string[];
  raw: number;
  gzip: number;
  /** All files in dist/assets (some load later, or never). */
  assetFiles: number;
}

export function firstLoadOf(dist = consoleDist): FirstLoad {
  const html = readFileSync(join(dist, "index.html"), "utf8");
  const referenced = [...html.matchAll(/(?:src|href)="\/([^"]+\.(?:js|css))"/g)].map(
    (match) => match[1] ?? "",
  );
  const files = ["index.html", ...referenced];
  let raw = 0;
  let gzip = 0;
  for (const file of files) {
    const content = readFileSync(join(dist, file));
    raw += content.length;
    gzip += gzipSync(content, { level: 9 }).length;
  }
  const assetFiles = readdirSync(join(dist, "assets")).filter((name) =>
    statSync(join(dist, "assets", name)).isFile(),
  ).length;
  return { files, raw, gzip, assetFiles };
}

/** A size as the README states it: whole kilobytes ("47 KB"). */
export const wholeKilobytes = (bytes: number): string => `${Math.round(bytes / 1024)} KB`;

const oneDecimal = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const load = firstLoadOf();
  console.log(
    `console first load: ${load.files.length} files, ${oneDecimal(load.raw)} raw, ${oneDecimal(load.gzip)} gzip, ${wholeKilobytes(load.gzip)} as the README states it (budget ${oneDecimal(budgetBytes)}); ${load.assetFiles} asset files in all`,
  );
  if (load.gzip > budgetBytes) {
    console.error("the console's first load is over its budget");
    process.exit(1);
  }
}
