/** `npm run admin -- <group> <command> [options]`: the operator CLI (see lib/admin/cli.ts, or --help). */
import { runCli } from "#lib/admin/cli";
import { localDirectory } from "#lib/local/runtime";

process.exitCode = await runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  localDirectory,
});
