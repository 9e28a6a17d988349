/**
 * A content-addressed cache of the local runtime's function bundles. Every `npm start`, test run and
 * fault-test runtime bundles every function (seventy esbuild builds over the AWS SDK: tens of seconds
 * of CPU and gigabytes of memory at their peak), although between two runs usually only a few source
 * files changed. A bundle is reused only when nothing it was built from changed:
 *
 * - the toolchain: esbuild's version, the bundling code (lib/bundling.ts, lib/sdk-imports.ts), the
 *   package manifest and lock (dependencies, `imports` aliases) and the entry's path;
 * - every input file esbuild read for that bundle (its metafile's inputs), by content hash.
 *
 * A file that did not exist at the last build cannot change how an import resolves unless a listed
 * input or the manifest changes too (imports name files by path, aliases live in package.json), so
 * the inputs and the toolchain decide a bundle. `LOCAL_BUNDLE_CACHE=off` turns the cache off.
 * The CDK stack and the benchmark never use it: they always bundle afresh.
 */
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { version as esbuildVersion, type Metafile } from "esbuild";

const root = resolve(import.meta.dirname, "../..");

/** What every bundle depends on besides its own inputs. */
const toolchainFiles = ["lib/bundling.ts", "lib/sdk-imports.ts", "package.json", "package-lock.json"];

interface Manifest {
  toolchain: string;
  /** Input file (absolute path) → content hash. */
  inputs: Record<string, string>;
}

export interface BundleCache {
  /** Copies a cached bundle of `id` into `outDirectory` if it is still current; false if not. */
  restore(id: string, entry: string, outDirectory: string): boolean;
  /** Keeps `outDirectory` (just built from `entry`) as the cached bundle of `id`. */
  store(id: string, entry: string, outDirectory: string, metafile: Metafile): void;
}

export function bundleCache(directory: string): BundleCache | undefined {
  if (process.env.LOCAL_BUNDLE_CACHE === "off") return undefined;
  // Hashes of the files read in this process: the functions share most of their inputs.
  const hashes = new Map<string, string | undefined>();
  const hashOf = (file: string): string | undefined => {
    if (!hashes.has(file)) {
      hashes.set(
        file,
        existsSync(file) ? createHash("sha256").update(readFileSync(file)).digest("base64url") : undefined,
      );
    }
    return hashes.get(file);
  };
  const toolchainOf = (entry: string): string =>
    createHash("sha256")
      .update(
        JSON.stringify([
          esbuildVersion,
          entry,
          ...toolchainFiles.map((file) => hashOf(resolve(root, file)) ?? ""),
        ]),
      )
      .digest("base64url");
  const manifestFile = (id: string) => join(directory, id, "manifest.json");

  return {
    restore(id, entry, outDirectory) {
      try {
        const manifest = JSON.parse(readFileSync(manifestFile(id), "utf8")) as Manifest;
        if (manifest.toolchain !== toolchainOf(entry)) return false;
        for (const [file, hash] of Object.entries(manifest.inputs)) if (hashOf(file) !== hash) return false;
        cpSync(join(directory, id, "bundle"), outDirectory, { recursive: true });
        return true;
      } catch {
        return false; // no entry yet, or one being replaced: build
      }
    },
    store(id, entry, outDirectory, metafile) {
      const inputs: Record<string, string> = {};
      for (const path of Object.keys(metafile.inputs)) {
        // Virtual modules (a plugin's namespace) are covered by the toolchain's hash.
        if (path.includes(":")) continue;
        // esbuild names inputs relative to its working directory (this process's).
        const file = resolve(path);
        const hash = hashOf(file);
        if (hash === undefined) return; // an input we cannot read back: never cache what we cannot check
        inputs[file] = hash;
      }
      const manifest: Manifest = { toolchain: toolchainOf(entry), inputs };
      // Written aside and renamed, so a runtime starting beside this one never reads half an entry.
      const staging = join(directory, `.${id}-${process.pid}-${Date.now()}`);
      try {
        mkdirSync(staging, { recursive: true });
        cpSync(outDirectory, join(staging, "bundle"), { recursive: true });
        writeFileSync(join(staging, "manifest.json"), JSON.stringify(manifest));
        rmSync(join(directory, id), { recursive: true, force: true });
        renameSync(staging, join(directory, id));
      } catch {
        rmSync(staging, { recursive: true, force: true }); // best effort: the next run builds again
      }
    },
  };
}
