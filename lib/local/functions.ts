/**
 * Bundles every function with the stack's esbuild options and loads each bundle as its own module,
 * as separate Lambdas would be: the local runtime runs the very code that gets deployed. Loaded up
 * front by default; with `coldStarts`, each on its first invocation, as Lambda does (its init time
 * is then part of that first request, and recorded).
 */
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { esbuildOptions } from "../bundling.ts";
import type { FunctionDefinition } from "../routes.ts";
import { installLambdaStreamingGlobals } from "./function-url-emulator.ts";
import type { EmulatedFunction, LambdaFunction } from "./http-api-emulator.ts";

const root = resolve(import.meta.dirname, "../..");

export async function bundleFunctions(
  definitions: readonly FunctionDefinition[],
  outDirectory: string,
): Promise<Map<string, string>> {
  mkdirSync(outDirectory, { recursive: true });
  await build({
    ...esbuildOptions,
    entryPoints: Object.fromEntries(
      definitions.map((definition) => [definition.id, resolve(root, definition.entry)]),
    ),
    outdir: outDirectory,
    outExtension: { ".js": ".mjs" },
    metafile: false,
  });
  return new Map(
    definitions.map((definition) => [definition.id, resolve(outDirectory, `${definition.id}.mjs`)]),
  );
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
