/** `tsx bin/bundle-function.ts <entry> <outDirectory>`: one function's bundle, for CDK's local bundling. */
import { bundleFunction } from "#lib/bundling";

const [entry, outDirectory] = process.argv.slice(2);
if (!entry || !outDirectory) {
  process.stderr.write("usage: bundle-function <entry> <outDirectory>\n");
  process.exit(2);
}
await bundleFunction(entry, outDirectory);
