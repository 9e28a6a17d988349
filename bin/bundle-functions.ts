/**
 * `tsx bin/bundle-functions.ts <outDirectory> <entry>...`: each entry's bundle into
 * `<outDirectory>/<its position>`, all in this one process (CDK's synchronous local bundling calls
 * it once per synth: lib/bundling.ts).
 */
import { join } from "node:path";
import { bundleFunction } from "#lib/bundling";

const [outDirectory, ...entries] = process.argv.slice(2);
if (!outDirectory || entries.length === 0) {
  process.stderr.write("usage: bundle-functions <outDirectory> <entry>...\n");
  process.exit(2);
}
await Promise.all(
  entries.map((entry, position) => bundleFunction(entry, join(outDirectory, String(position)))),
);
