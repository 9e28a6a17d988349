/**
 * Starts what the integration suite talks to, once per run.
 *
 * Deployed stage (`API_BASE_URL` and `TABLE_NAME` set, AWS credentials in the environment): nothing
 * to start; tests call the stage and seed its table. Tests that need local fakes don't run.
 *
 * Local (default): the fakes that stand in for unreachable services (Bedrock, an https image host,
 * the five shop/parcel platforms of the look-up tools), then the local runtime as its own process,
 * exactly as `npm start -- --ephemeral` runs it, with its logs written to a file so tests can check
 * what was (not) logged. The platforms run here, so the runtime starts no sample shop of its own;
 * tests read their request logs and script their faults over a small control API:
 *   GET  /requests?platform=woocommerce   [{method, path, query: [[name, value], …]}, …]
 *   POST /script {"platform", "faults": Fault[]}
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { type FakeImageServer, sampleImages, startFakeImageServer } from "#test/fakes/image-server";
import { type KeyedBedrock, startKeyedBedrock } from "#test/fakes/keyed-bedrock";
import { startLoopbackRelay } from "#test/fakes/loopback-relay";
import {
  type Fault,
  type PlatformFakes,
  type PlatformName,
  startPlatformFakes,
} from "#test/fakes/platforms/index";
import { startWebhookReceiverHub } from "#test/fakes/webhook-receiver";

export interface TestEnvironment {
  mode: "local" | "deployed";
  baseUrl: string;
  /** Base URL of the streaming endpoint (a function URL; locally the runtime's stream URL). */
  streamUrl: string;
  tableName: string;
  region: string;
  /** Local only. */
  dynamoDbEndpoint?: string;
  bedrockControlUrl?: string;
  imageBaseUrl?: string;
  runtimeLogFile?: string;
  modelSecretsDirectory?: string;
  /** Control API of the platform fakes the runtime's look-up tools reach. */
  platformControlUrl?: string;
  /** The key file the runtime decrypts tool credentials with (seed tools with the same). */
  toolCredentialsKeyFile?: string;
  /** The user pool people sign in to (cognito-local locally; deployed: from COGNITO_* variables). */
  cognito?: {
    endpoint: string;
    region: string;
    userPoolId: string;
    clientId: string;
    /** Local only: where invitations and reset codes land. */
    mailboxFile?: string;
  };
  /** Local only: the demo organization and its console users, as `npm start` seeds them. */
  demoFile?: string;
  /** Webhooks: the runtime's signing-secret key file, delivery queue and local SQS, and the test receivers. */
  webhookSecretsKeyFile?: string;
  webhookQueueUrl?: string;
  sqsEndpoint?: string;
  webhookReceiverUrl?: string;
  /** The timings the runtime's webhook functions run with (compressed). */
  webhookTimings?: Record<string, string>;
  /** Local only: the relay through which the runtime reaches fakes a test file starts (test/fakes/loopback-relay.ts). */
  loopbackRelayUrl?: string;
  /** The knowledge bucket (deployed: KNOWLEDGE_BUCKET), and locally the S3 endpoint it is reached at. */
  knowledgeBucket?: string;
  s3Endpoint?: string;
}

/**
 * Webhook timings for the suite: a day of retries in seconds. Waits of 1–2 s between attempts,
 * each longer wait split into 1 s queue hops (so chained hops are exercised), 3 s per attempt,
 * endpoints disabled after 6 s of failures, an endpoint slow after a 1 s attempt and then limited
 * to two attempts in flight for a minute.
 */
export const testWebhookTimings = {
  WEBHOOK_RETRY_SCHEDULE: "1,1,2,2,2,2,2",
  WEBHOOK_TIMEOUT_MS: "3000",
  WEBHOOK_DISABLE_AFTER_SECONDS: "6",
  WEBHOOK_MAX_QUEUE_DELAY_SECONDS: "1",
  WEBHOOK_SLOW_ATTEMPT_MS: "1000",
  WEBHOOK_SLOW_PENALTY_SECONDS: "60",
  WEBHOOK_MAX_IN_FLIGHT: "2",
  WEBHOOK_DEFER_SECONDS: "1",
};

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
    const streamUrl = process.env.STREAM_URL;
    if (!streamUrl) throw new Error("API_BASE_URL is set: STREAM_URL must name the stage's stream URL too");
    const region = process.env.AWS_REGION ?? "us-east-1";
    const userPoolId = process.env.COGNITO_USER_POOL_ID;
    const clientId = process.env.COGNITO_CLIENT_ID;
    const knowledgeBucket = process.env.KNOWLEDGE_BUCKET;
    project.provide("environment", {
      mode: "deployed",
      ...(knowledgeBucket ? { knowledgeBucket } : {}),
      baseUrl: baseUrl.replace(/\/$/, ""),
      streamUrl: streamUrl.replace(/\/$/, ""),
      tableName,
      region,
      ...(userPoolId && clientId
        ? {
            cognito: {
              endpoint: `https://cognito-idp.${region}.amazonaws.com/`,
              region,
              userPoolId,
              clientId,
            },
          }
        : {}),
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
      // `/redirect?to=<url>`: a redirect hop, for the outbound-address guard's tests.
      const target = new URL(req.url ?? "/", "https://images.test").searchParams.get("to");
      if (req.url?.startsWith("/redirect?") && target) return res.writeHead(302, { location: target }).end();
      const name = (req.url ?? "").replace(/^\//, "");
      const image = sampleImages[name.replace(/\.\w+$/, "") as keyof typeof sampleImages];
      if (!image) return res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(image);
    });
    const platforms = await startPlatformFakes();
    stops.push(() => platforms.stop());
    const platformControl = await startPlatformControl(platforms);
    stops.push(
      () =>
        new Promise((resolveClose) => {
          platformControl.closeAllConnections();
          platformControl.close(() => resolveClose());
        }),
    );
    const receivers = await startWebhookReceiverHub();
    stops.push(() => receivers.close());
    const relay = await startLoopbackRelay();
    stops.push(() => relay.close());
    const toolKeyFile = join(work, "tool-credentials.key");
    const webhookKeyFile = join(work, "webhook-secrets.key");
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
      [
        "bin/local.ts",
        "--ephemeral",
        "--port",
        "0",
        "--demo-file",
        demoFile,
        "--runtime-file",
        runtimeFile,
        "--mailbox-file",
        join(work, "mailbox.jsonl"),
      ],
      {
        cwd: root,
        stdio: ["ignore", log, log],
        env: {
          ...process.env,
          AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url,
          // The image fake, the webhook receivers and the relay to test files' own fakes (model
          // servers); the runtime adds the platform fakes from the origin overrides.
          OUTBOUND_ALLOW_PRIVATE: `127.0.0.1:${images.port},127.0.0.1:${receivers.port},127.0.0.1:${relay.port}`,
          // The Bedrock models the stage offers (the keyed fake answers any id a test scripts).
          BEDROCK_MODEL_IDS: "anthropic.claude-engine-test-v1,eu.anthropic.claude-engine-test-v1:0",
          IMAGE_FETCH_CA_FILE: caFile,
          MODEL_SECRETS: `local:${secrets}`,
          LOG_LEVEL: "debug",
          TOOL_HTTP_ORIGIN_OVERRIDES: JSON.stringify(platforms.originOverrides),
          TOOL_CREDENTIALS_KEY_FILE: toolKeyFile,
          WEBHOOK_SECRETS_KEY_FILE: webhookKeyFile,
          ...testWebhookTimings,
          // A chatbot's inactivity timeout in seconds instead of minutes, waited in 1 s queue hops.
          INACTIVITY_MINUTE_SECONDS: "1",
          INACTIVITY_MAX_HOP_SECONDS: "1",
          // A short turn budget so the timeout tests take seconds, not the production 20 s.
          TURN_BUDGET_MS: "3000",
          // A stalled stream is given up after 1.5 s (10 s in production), well inside that budget.
          MODEL_STREAM_IDLE_MS: "1500",
        },
      },
    );
    const child = runtime;
    await waitFor(
      () => existsSync(demoFile) && existsSync(runtimeFile),
      300_000,
      () => {
        if (child.exitCode !== null) {
          throw new Error(`the local runtime exited (${child.exitCode}):\n${readFileSync(logFile, "utf8")}`);
        }
      },
    );
    const info = JSON.parse(readFileSync(runtimeFile, "utf8")) as {
      baseUrl: string;
      streamUrl: string;
      tableName: string;
      dynamoDbEndpoint: string;
      cognito: {
        endpoint: string;
        region: string;
        userPoolId: string;
        clientId: string;
        mailboxFile: string;
      };
      environment: Record<string, string>;
    };
    project.provide("environment", {
      mode: "local",
      baseUrl: info.baseUrl,
      streamUrl: info.streamUrl,
      tableName: info.tableName,
      region: "us-east-1",
      dynamoDbEndpoint: info.dynamoDbEndpoint,
      bedrockControlUrl: bedrock.controlUrl,
      imageBaseUrl: `https://127.0.0.1:${images.port}`,
      runtimeLogFile: logFile,
      modelSecretsDirectory: secrets,
      platformControlUrl: `http://127.0.0.1:${(platformControl.address() as AddressInfo).port}`,
      toolCredentialsKeyFile: toolKeyFile,
      cognito: info.cognito,
      demoFile,
      webhookSecretsKeyFile: webhookKeyFile,
      ...(info.environment.WEBHOOK_QUEUE_URL ? { webhookQueueUrl: info.environment.WEBHOOK_QUEUE_URL } : {}),
      ...(info.environment.AWS_ENDPOINT_URL_SQS
        ? { sqsEndpoint: info.environment.AWS_ENDPOINT_URL_SQS }
        : {}),
      webhookReceiverUrl: receivers.baseUrl,
      loopbackRelayUrl: relay.url,
      webhookTimings: testWebhookTimings,
      ...(info.environment.KNOWLEDGE_BUCKET ? { knowledgeBucket: info.environment.KNOWLEDGE_BUCKET } : {}),
      ...(info.environment.AWS_ENDPOINT_URL_S3 ? { s3Endpoint: info.environment.AWS_ENDPOINT_URL_S3 } : {}),
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

/** The platform fakes' request logs and fault scripts, for test files running in other workers. */
async function startPlatformControl(platforms: PlatformFakes): Promise<Server> {
  const names = new Set<string>(["woocommerce", "shopify", "lightspeed", "sendcloud", "picqer"]);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://control");
      res.setHeader("content-type", "application/json");
      const platform = url.searchParams.get("platform") ?? "";
      if (req.method === "GET" && url.pathname === "/requests" && names.has(platform)) {
        const log = platforms[platform as PlatformName].requests.map((request) => ({
          method: request.method,
          path: request.path,
          query: [...request.query.entries()],
        }));
        res.end(JSON.stringify(log));
        return;
      }
      if (req.method === "POST" && url.pathname === "/script") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          platform: string;
          faults: Fault[];
        };
        if (names.has(body.platform)) {
          platforms[body.platform as PlatformName].script(...body.faults);
          res.end("{}");
          return;
        }
      }
      res.statusCode = 404;
      res.end("{}");
    });
  });
  await new Promise<void>((resolveListen) => server.listen(0, "127.0.0.1", resolveListen));
  return server;
}

async function waitFor(ready: () => boolean, timeoutMs: number, check: () => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    check();
    if (Date.now() > deadline) throw new Error("timed out waiting for the local runtime");
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}
