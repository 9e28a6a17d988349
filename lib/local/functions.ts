/**
 * Bundles every function with the stack's esbuild options and loads each bundle as its own module,
 * as separate Lambdas would be: the local runtime runs the very code that gets deployed.
 */
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { esbuildOptions } from "../bundling.ts";
import type { FunctionDefinition } from "../routes.ts";
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

export async function loadFunctions(
  definitions: readonly FunctionDefinition[],
  bundles: Map<string, string>,
  stage: string,
): Promise<Map<string, EmulatedFunction>> {
  const loaded = new Map<string, EmulatedFunction>();
  for (const definition of definitions) {
    const file = bundles.get(definition.id);
    if (!file) throw new Error(`no bundle for ${definition.id}`);
    // A query string per load keeps module instances apart if the same file is loaded twice.
    const module = (await import(`${pathToFileURL(file).href}?v=${Date.now()}`)) as {
      handler?: LambdaFunction;
    };
    if (typeof module.handler !== "function") throw new Error(`${definition.entry} exports no handler`);
    loaded.set(definition.id, {
      name: `chatbot-api-${stage}-${definition.id}`,
      handler: module.handler,
      timeoutSeconds: definition.timeoutSeconds,
      memoryMb: definition.memoryMb,
    });
  }
  return loaded;
}
