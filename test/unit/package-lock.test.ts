/**
 * A fresh `npm install` leaves package-lock.json as it is committed: the lock records every
 * platform's optional packages (npm writes all of them, whatever the machine), so a first install
 * on a new clone has nothing to add. And on the Node the project runs on (24, `.nvmrc`), npm has no
 * engine to warn about. npm resolves the tree from the committed lock alone (`--package-lock-only`:
 * no node_modules, no scripts), in a copy of the manifests, so the repository is not touched.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { workspaces: string[] };
const copy = mkdtempSync(join(tmpdir(), "package-lock-"));

afterAll(() => rmSync(copy, { recursive: true, force: true }));

describe("a fresh npm install", () => {
  it("leaves package-lock.json byte for byte as committed, with no engine warning on Node 24", () => {
    for (const file of [
      "package.json",
      "package-lock.json",
      ...manifest.workspaces.map((w) => `${w}/package.json`),
    ]) {
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      copyFileSync(join(root, file), join(copy, file));
    }
    // npm runs on the Node that runs this test (the project's, 24), as `npm install` does after `nvm use`.
    const install = spawnSync(
      "npm",
      ["install", "--package-lock-only", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"],
      {
        cwd: copy,
        encoding: "utf8",
        env: { ...process.env, PATH: [dirname(process.execPath), process.env.PATH].join(delimiter) },
      },
    );
    expect(install.status, install.stderr).toBe(0);
    expect(readFileSync(join(copy, "package-lock.json"), "utf8")).toBe(
      readFileSync(join(root, "package-lock.json"), "utf8"),
    );
    if (Number(process.versions.node.split(".")[0]) >= 24) expect(install.stderr).not.toContain("EBADENGINE");
  }, 120_000);
});
