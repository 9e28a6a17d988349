/** `npm run openapi`: regenerates docs/openapi.json from the route table and the handlers' schemas. */
import { existsSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";

const target = resolve(import.meta.dirname, "../docs/openapi.json");
// The OpenAPI handler imports the document itself; give it something to import on a first run.
if (!existsSync(target)) writeFileSync(target, "{}\n");
const { buildOpenApiDocument } = await import("#lib/openapi");
writeFileSync(target, `${JSON.stringify(await buildOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${target}`);
