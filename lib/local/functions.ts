/**
 * Bundles every function with the stack's esbuild options and loads each bundle as its own module,
 * as separate Lambdas would be: the local runtime runs the very code that gets deployed. Loaded up
 * front by default; with `coldStarts`, each on its first invocation, as Lambda does (its init time
 * is then part of that first request, and recorded).
 */
import { mkdirSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Metafile } from "esbuild";
import { bundleFunction, handlerFile } from "../bundling.ts";
import type { FunctionDefinition } from "../routes.ts";
import { bundleCache } from "./bundle-cache.ts";
import { installLambdaStreamingGlobals } from "./function-url-emulator.ts";
import type { EmulatedFunction, LambdaFunction } from "./http-api-emulator.ts";

const root = resolve(import.meta.dirname, "../..");

/**
 * Bundles each function into a directory of its own (`<id>/index.mjs` and its chunks), as the
 * stack does: functions share no module instances, as separate Lambdas share none. A function
 * whose inputs did not change since it was last bundled is copied from the bundle cache
 * (`.local/bundle-cache`, see bundle-cache.ts) instead.
 */
export async function bundleFunctions(
  definitions: readonly FunctionDefinition[],
  outDirectory: string,
  cacheDirectory: string = resolve(root, ".local/bundle-cache"),
): Promise<Map<string, string>> {
  mkdirSync(outDirectory, { recursive: true });
  const cache = bundleCache(cacheDirectory);
  const bundles = new Map<string, string>();
  await Promise.all(
    definitions.map(async (definition) => {
      const directory = resolve(outDirectory, definition.id);
      const entry = resolve(root, definition.entry);
      // Chunk names carry content hashes: stale ones would pile up.
      rmSync(directory, { recursive: true, force: true });
      if (!cache?.restore(definition.id, entry, directory)) {
        rmSync(directory, { recursive: true, force: true }); // whatever a failed restore left
        const result = await bundleFunction(entry, directory);
        cache?.store(definition.id, entry, directory, result.metafile as Metafile);
      }
      bundles.set(definition.id, resolve(directory, handlerFile));
    }),
  );
  return bundles;
}

/** How long each function's init (module load) took, by function id, once it happened. */
export type InitDurations = Map<string, number>;

export async function loadFunctions(
  definitions: readonly FunctionDefinition[],
  bundles: Map<string, string>,
  stage: string,
  options: { coldStarts?: boolean; initDurations?: InitDurations } = {},
): Promise<Map<string, EmulatedFunction>> {
  // The Node.js runtime's globals for streaming functions, there before any bundle loads.
  installLambdaStreamingGlobals();
  const loaded = new Map<string, EmulatedFunction>();
  for (const definition of definitions) {
    const file = bundles.get(definition.id);
    if (!file) throw new Error(`no bundle for ${definition.id}`);
    const load = async (): Promise<LambdaFunction> => {
      const started = performance.now();
      // A query string per load keeps module instances apart if the same file is loaded twice.
      const module = (await import(`${pathToFileURL(file).href}?v=${Date.now()}`)) as {
        handler?: LambdaFunction;
      };
      if (typeof module.handler !== "function") throw new Error(`${definition.entry} exports no handler`);
      options.initDurations?.set(definition.id, performance.now() - started);
      return module.handler;
    };
    const fn: EmulatedFunction = {
      name: `chatbot-api-${stage}-${definition.id}`,
      handler: () => {
        throw new Error(`${definition.id} was invoked before its init`);
      },
      timeoutSeconds: definition.timeoutSeconds,
      memoryMb: definition.memoryMb,
    };
    if (options.coldStarts) {
      let initialised: Promise<void> | undefined;
      fn.init = () => {
        initialised ??= load().then((handler) => {
          fn.handler = handler;
        });
        return initialised;
      };
    } else {
      fn.handler = await load();
    }
    loaded.set(definition.id, fn);
  }
  return loaded;
}
