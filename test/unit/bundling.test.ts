/**
 * The bundles as lib/bundling.ts builds them for Lambda: what loads at init, and that every chunk
 * links. Built for real with esbuild; the SDK's credential chain is run from a bundle.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import type { Metafile } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { bundleFunction, handlerFile, outputsReached } from "#lib/bundling";

const root = resolve(import.meta.dirname, "../..");
const work = mkdtempSync(join(tmpdir(), "bundling-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Built {
  directory: string;
  /** Input files (paths under node_modules or the repository) whose code loads at init. */
  atInit: string[];
  /** Every output file, and the input files in it. */
  outputs: Map<string, string[]>;
}

async function build(entry: string, name: string, sdkImports = true): Promise<Built> {
  const directory = join(work, name);
  const result = await bundleFunction(entry, directory, { sdkImports });
  const metafile = result.metafile as Metafile;
  const outputs = metafile.outputs;
  const loaded = outputsReached(metafile, { atInit: true });
  return {
    directory,
    atInit: [...loaded].flatMap((file) => Object.keys(outputs[file]?.inputs ?? {})),
    outputs: new Map(Object.entries(outputs).map(([file, output]) => [file, Object.keys(output.inputs)])),
  };
}

/** Runs a module's text in a fresh Node, with only the environment given (no AWS credentials of ours). */
function runNode(script: string, env: Record<string, string>): string {
  return execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: work, ...env },
  });
}

const sendMessage = resolve(root, "functions/handlers/send-message.ts");
/** Code only the Bedrock client (REST JSON, HTTP/2) and the STS/SSO providers (query, XML) use. */
const lazyOnly = [
  "@smithy/core/dist-es/submodules/protocols/HttpBindingProtocol.js",
  "@smithy/node-http-handler/dist-es/node-http2-handler.js",
  "@aws-sdk/core/dist-es/submodules/protocols/xml/XmlShapeDeserializer.js",
  "@aws-sdk/core/dist-es/submodules/protocols/query/AwsQueryProtocol.js",
];

// Each test bundles the message function (twice in the first): seconds of CPU on a busy machine.
describe("the message function's bundle", { timeout: 60_000 }, () => {
  it("loads at init none of the SDK code that only lazily loaded clients use (esbuild alone would)", async () => {
    const [ours, plain] = await Promise.all([
      build(sendMessage, "send-message"),
      build(sendMessage, "send-message-plain", false),
    ]);
    for (const file of lazyOnly) {
      expect(ours.atInit.some((input) => input.endsWith(file))).toBe(false);
      expect(plain.atInit.some((input) => input.endsWith(file))).toBe(true);
      // Still in the bundle, for the chunks that use it.
      expect([...ours.outputs.values()].flat().some((input) => input.endsWith(file))).toBe(true);
    }
    // The DynamoDB client itself does load at init.
    expect(ours.atInit.some((input) => input.includes("@aws-sdk/client-dynamodb/"))).toBe(true);
  });

  it("keeps the credential providers Lambda never runs in one chunk, apart from the environment's", async () => {
    const ours = await build(sendMessage, "send-message-providers");
    const chunkOf = (pkg: string) =>
      [...ours.outputs].filter(([, inputs]) =>
        inputs.some((input) => input.includes(`node_modules/${pkg}/`)),
      );
    const ini = chunkOf("@aws-sdk/credential-provider-ini");
    expect(ini).toHaveLength(1);
    for (const pkg of [
      "@aws-sdk/credential-provider-sso",
      "@aws-sdk/credential-provider-process",
      "@aws-sdk/credential-provider-web-identity",
      "@smithy/credential-provider-imds",
    ]) {
      // (SSO's own lazy part, loadSso, stays a chunk of its own.)
      expect(chunkOf(pkg).map(([file]) => file)).toContain(ini[0]?.[0]);
    }
    const env = chunkOf("@aws-sdk/credential-provider-env");
    expect(env.length).toBeGreaterThan(0);
    expect(env.map(([file]) => file)).not.toContain(ini[0]?.[0]);
    // None of the grouped ones loads at init (the environment's reader does: Lambda's chain uses it).
    for (const pkg of ["@aws-sdk/credential-provider-ini", "@aws-sdk/credential-provider-sso"]) {
      expect(ours.atInit.some((input) => input.includes(`node_modules/${pkg}/`))).toBe(false);
    }
  });

  it("ships only files something imports (esbuild writes the chunk of a shaken-out import() too)", async () => {
    // Built by esbuild alone, the SDK's browser user-agent parser (bowser) gets such a chunk.
    for (const built of await Promise.all([
      build(sendMessage, "send-message-shipped"),
      build(sendMessage, "send-message-shipped-plain", false),
    ])) {
      const files = readdirSync(built.directory, { recursive: true, encoding: "utf8" }).filter((file) =>
        file.endsWith(".mjs"),
      );
      const texts = new Map(files.map((file) => [file, readFileSync(join(built.directory, file), "utf8")]));
      for (const file of files) {
        if (file === handlerFile) continue;
        const name = basename(file);
        expect(
          [...texts].some(([other, text]) => other !== file && text.includes(name)),
          file,
        ).toBe(true);
      }
      expect([...built.outputs.values()].flat().some((input) => input.includes("node_modules/bowser/"))).toBe(
        false,
      );
    }
  });

  it("has every chunk link and run: no import the rewrite broke", async () => {
    const ours = await build(sendMessage, "send-message-links");
    const files = readdirSync(ours.directory, { recursive: true, encoding: "utf8" }).filter((file) =>
      file.endsWith(".mjs"),
    );
    expect(files.length).toBeGreaterThan(10);
    const output = runNode(
      `globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };
let loaded = 0;
for (const file of ${JSON.stringify(files.map((file) => join(ours.directory, file)))}) { await import(file); loaded++; }
process.stdout.write(String(loaded));`,
      { TABLE_NAME: "bundling-test", AWS_REGION: "eu-west-1" },
    );
    expect(Number(output)).toBe(files.length);
  });
});

describe("the SDK's credential chain, bundled", () => {
  it("takes the environment's credentials, as on Lambda, and reaches a profile file through the grouped chunk", async () => {
    const entry = join(work, "credentials.mjs");
    writeFileSync(
      entry,
      `import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
export async function handler() {
  const credentials = await new DynamoDBClient({ region: "eu-west-1" }).config.credentials();
  return credentials.accessKeyId;
}
`,
    );
    const directory = join(work, "credentials");
    await bundleFunction(entry, directory, { nodePaths: [resolve(root, "node_modules")] });
    const script = `const { handler } = await import(${JSON.stringify(join(directory, handlerFile))}); process.stdout.write(await handler());`;

    expect(
      runNode(script, { AWS_ACCESS_KEY_ID: "AKIDFROMENVIRONMENT", AWS_SECRET_ACCESS_KEY: "secret" }),
    ).toBe("AKIDFROMENVIRONMENT");

    const profiles = join(work, "credentials.ini");
    writeFileSync(
      profiles,
      "[bundled]\naws_access_key_id = AKIDFROMPROFILEFILE\naws_secret_access_key = secret\n",
    );
    expect(
      runNode(script, {
        AWS_SHARED_CREDENTIALS_FILE: profiles,
        AWS_CONFIG_FILE: join(work, "no-config"),
        AWS_PROFILE: "bundled",
        AWS_EC2_METADATA_DISABLED: "true",
      }),
    ).toBe("AKIDFROMPROFILEFILE");
  });
});
