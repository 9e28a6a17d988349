/**
 * The console's size the README states is the build's: the first load, gzip-compressed, in whole
 * kilobytes. (In the browser project, whose local runtime has just built the console from its
 * current sources.)
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { isLocal } from "#test/support/harness";
import { firstLoadOf, wholeKilobytes } from "../../console/scripts/first-load-size.ts";

describe.runIf(isLocal)("the console's size in the README", () => {
  it("is the size of the built console's first load", () => {
    const readme = readFileSync(resolve(import.meta.dirname, "../../README.md"), "utf8");
    const stated = /\*\*(\d+) KB gzip\*\* on\s+first load/.exec(readme)?.[1];
    expect(stated, "the README states the console's size as **<n> KB gzip** on first load").toBeDefined();
    expect(`${stated} KB`, "npm run console:build prints the figure to state").toBe(
      wholeKilobytes(firstLoadOf().gzip),
    );
  });
});
