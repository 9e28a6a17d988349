/**
 * Starts what the integration suite talks to, once per run.
 *
 * Deployed stage (`API_BASE_URL` and `TABLE_NAME` set, AWS credentials in the environment): nothing
 * to start; tests call the stage and seed its table. Tests that need local fakes don't run.
 *
 * Local (default): the fakes that stand in for unreachable services (Bedrock, an https image host),
 * then the local runtime as its own process, exactly as `npm start -- --ephemeral` runs it, with its
 * logs written to a file so tests can check what was (not) logged.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { type FakeImageServer, sampleImages, startFakeImageServer } from "#test/fakes/image-server";
import { type KeyedBedrock, startKeyedBedrock } from "#test/fakes/keyed-bedrock";

export interface TestEnvironment {
  mode: "local" | "deployed";
  baseUrl: string;
  tableName: string;
  region: string;
  /** Local only. */
  dynamoDbEndpoint?: string;
  bedrockControlUrl?: string;
  imageBaseUrl?: string;
  runtimeLogFile?: string;
  modelSecretsDirectory?: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    environment: TestEnvironment;
  }
}

const root = resolve(import.meta.dirname, "../..");

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const baseUrl = process.env.API_BASE_URL;
  if (baseUrl) {
    const tableName = process.env.TABLE_NAME;
    if (!tableName) throw new Error("API_BASE_URL is set: TABLE_NAME must name the stage's table too");
    project.provide("environment", {
      mode: "deployed",
      baseUrl: baseUrl.replace(/\/$/, ""),
      tableName,
      region: process.env.AWS_REGION ?? "us-east-1",
    });
    return async () => undefined;
  }

  const work = mkdtempSync(join(tmpdir(), "chatbot-api-it-"));
  const stops: (() => Promise<void>)[] = [];
  let runtime: ChildProcess | undefined;
  try {
    const bedrock: KeyedBedrock = await startKeyedBedrock();
    stops.push(() => bedrock.close());
    const images: FakeImageServer = await startFakeImageServer();
    stops.push(() => images.close());
    images.handle((req, res) => {
      const name = (req.url ?? "").replace(/^\//, "");
      const image = sampleImages[name.replace(/\.\w+$/, "") as keyof typeof sampleImages];
      if (!image) return res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(image);
    });
    const caFile = join(work, "image-ca.pem");
    writeFileSync(caFile, images.ca);
    const secrets = join(work, "secrets");

    const demoFile = join(work, "demo.json");
    const runtimeFile = join(work, "runtime.json");
    // Kept after the run (in the git-ignored .local/) so a failure can be investigated.
    mkdirSync(resolve(root, ".local"), { recursive: true });
    const logFile = resolve(root, ".local/test-runtime.log");
    writeFileSync(logFile, "");
    const log = openSync(logFile, "a");
    runtime = spawn(
      resolve(root, "node_modules/.bin/tsx"),
      ["bin/local.ts", "--ephemeral", "--port", "0", "--demo-file", demoFile, "--runtime-file", runtimeFile],
      {
        cwd: root,
        stdio: ["ignore", log, log],
        env: {
          ...process.env,
          AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url,
          IMAGE_FETCH_ALLOW_PRIVATE: `127.0.0.1:${images.port}`,
          IMAGE_FETCH_CA_FILE: caFile,
          MODEL_SECRETS: `local:${secrets}`,
          LOG_LEVEL: "debug",
        },
      },
    );
    const child = runtime;
    await waitFor(
      () => existsSync(demoFile) && existsSync(runtimeFile),
      90_000,
      () => {
        if (child.exitCode !== null) {
          throw new Error(`the local runtime exited (${child.exitCode}):\n${readFileSync(logFile, "utf8")}`);
        }
      },
    );
    const info = JSON.parse(readFileSync(runtimeFile, "utf8")) as {
      baseUrl: string;
      tableName: string;
      dynamoDbEndpoint: string;
    };
    project.provide("environment", {
      mode: "local",
      baseUrl: info.baseUrl,
      tableName: info.tableName,
      region: "us-east-1",
      dynamoDbEndpoint: info.dynamoDbEndpoint,
      bedrockControlUrl: bedrock.controlUrl,
      imageBaseUrl: `https://127.0.0.1:${images.port}`,
      runtimeLogFile: logFile,
      modelSecretsDirectory: secrets,
    });
  } catch (error) {
    runtime?.kill("SIGKILL");
    for (const stop of stops) await stop();
    throw error;
  }

  return async () => {
    if (runtime && runtime.exitCode === null) {
      const exited = new Promise((resolveExit) => runtime?.once("exit", resolveExit));
      runtime.kill("SIGTERM");
      await Promise.race([exited, new Promise((resolveWait) => setTimeout(resolveWait, 10_000))]);
      runtime.kill("SIGKILL");
    }
    for (const stop of stops.reverse()) await stop();
    rmSync(work, { recursive: true, force: true });
  };
}

async function waitFor(ready: () => boolean, timeoutMs: number, check: () => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    check();
    if (Date.now() > deadline) throw new Error("timed out waiting for the local runtime");
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}
