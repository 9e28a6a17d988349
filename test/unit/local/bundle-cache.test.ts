/**
 * The local runtime's bundle cache: a bundle is reused only while every file it was built from is
 * unchanged, and what is reused is exactly what was built. Built for real with esbuild.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bundleFunctions } from "#lib/local/functions";
import type { FunctionDefinition } from "#lib/routes";

const work = mkdtempSync(join(tmpdir(), "bundle-cache-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const helper = join(work, "helper.ts");
const entry = join(work, "entry.ts");
writeFileSync(helper, 'export const greeting = "first";\n');
writeFileSync(
  entry,
  'import { greeting } from "./helper.ts";\nexport const handler = async () => greeting;\n',
);
const definition: FunctionDefinition = {
  id: "Probe",
  stack: "PublicApi",
  entry,
  memoryMb: 128,
  timeoutSeconds: 3,
  table: [],
};
const cacheDirectory = join(work, "cache");

async function bundleOnce(name: string): Promise<string> {
  const bundles = await bundleFunctions([definition], join(work, name), cacheDirectory);
  return readFileSync(bundles.get("Probe") as string, "utf8");
}

describe("the local runtime's bundle cache", () => {
  it("reuses a bundle whose inputs are unchanged, and rebuilds when one of them changes", async () => {
    const first = await bundleOnce("build-1");
    expect(first).toContain("first");
    const manifest = JSON.parse(readFileSync(join(cacheDirectory, "Probe/manifest.json"), "utf8")) as {
      inputs: Record<string, string>;
    };
    expect(Object.keys(manifest.inputs)).toEqual(expect.arrayContaining([entry, helper]));

    // Unchanged inputs: the very bytes built before.
    expect(await bundleOnce("build-2")).toBe(first);

    // A changed dependency (not the entry) makes a new bundle.
    writeFileSync(helper, 'export const greeting = "second";\n');
    const rebuilt = await bundleOnce("build-3");
    expect(rebuilt).toContain("second");
    expect(rebuilt).not.toContain("first");
  });

  it("builds afresh with LOCAL_BUNDLE_CACHE=off, and writes no cache entry", async () => {
    const before = readFileSync(join(cacheDirectory, "Probe/manifest.json"), "utf8");
    writeFileSync(helper, 'export const greeting = "third";\n');
    process.env.LOCAL_BUNDLE_CACHE = "off";
    try {
      expect(await bundleOnce("build-4")).toContain("third");
    } finally {
      delete process.env.LOCAL_BUNDLE_CACHE;
    }
    expect(readFileSync(join(cacheDirectory, "Probe/manifest.json"), "utf8")).toBe(before);
  });
});
