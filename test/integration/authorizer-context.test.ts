/**
 * The API behind a gateway that hands the authorizer's context over as strings. HTTP API payload
 * 2.0 is observed to keep JSON types, but no AWS document promises it; the integrations must
 * answer the same either way. This starts a second local runtime (as `npm start -- --ephemeral
 * --authorizer-context strings` does) and sends it the requests whose answers use the numbers.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "#functions/domain/api-keys";
import { systemClock } from "#functions/domain/context";
import { createOrganization } from "#functions/domain/organizations";
import { createDb } from "#functions/store/dynamodb";
import { isLocal } from "#test/support/harness";

const root = resolve(import.meta.dirname, "../..");

describe.runIf(isLocal)("a gateway that hands the authorizer's context over as strings", () => {
  let runtime: ChildProcess | undefined;
  let work = "";
  let baseUrl = "";
  let log = "";
  let seedKey: (rateLimit: number) => Promise<string>;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "chatbot-api-strings-"));
    const demoFile = join(work, "demo.json");
    const runtimeFile = join(work, "runtime.json");
    const child = spawn(
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
        "--authorizer-context",
        "strings",
      ],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LOG_LEVEL: "warn" } },
    );
    runtime = child;
    child.stdout?.on("data", (chunk: Buffer) => {
      log += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      log += chunk.toString();
    });
    const deadline = Date.now() + 240_000;
    while (!(existsSync(demoFile) && existsSync(runtimeFile))) {
      if (child.exitCode !== null) throw new Error(`the runtime exited (${child.exitCode}):\n${log}`);
      if (Date.now() > deadline) throw new Error(`the runtime did not start:\n${log}`);
      await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    }
    const info = JSON.parse(readFileSync(runtimeFile, "utf8")) as {
      baseUrl: string;
      tableName: string;
      dynamoDbEndpoint: string;
    };
    baseUrl = info.baseUrl;
    const db = createDb(
      info.tableName,
      new DynamoDBClient({
        endpoint: info.dynamoDbEndpoint,
        region: "us-east-1",
        credentials: { accessKeyId: "local", secretAccessKey: "local" },
      }),
    );
    seedKey = async (rateLimit) => {
      const ctx = { db, clock: systemClock };
      const organization = await createOrganization(ctx, { name: "Strings shop", rateLimit });
      return (await createApiKey(ctx, { organizationId: organization.organizationId, name: "test" })).apiKey;
    };
  }, 250_000);

  afterAll(async () => {
    if (runtime && runtime.exitCode === null) {
      const exited = new Promise((resolveExit) => runtime?.once("exit", resolveExit));
      runtime.kill("SIGTERM");
      // Its own shutdown stops DynamoDB Local; a kill before that would leave Java running.
      await Promise.race([exited, new Promise((resolveWait) => setTimeout(resolveWait, 30_000))]);
      runtime.kill("SIGKILL");
    }
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const me = (key: string) => fetch(`${baseUrl}/api/me`, { headers: { authorization: `Bearer ${key}` } });

  it("answers a valid key with its organization and numeric rate-limit headers", async () => {
    const key = await seedKey(5);
    const response = await me(key);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      organization_name: "Strings shop",
      rate_limit: { limit: 5 },
    });
    expect(response.headers.get("x-ratelimit-limit")).toBe("5");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("4");
    expect(response.headers.get("x-ratelimit-reset")).toMatch(/^\d{10}$/);
  });

  it("refuses an exhausted key with 429 and the whole seconds to wait", async () => {
    const key = await seedKey(1);
    expect((await me(key)).status).toBe(200);
    const refused = await me(key);
    expect(refused.status).toBe(429);
    const detail = ((await refused.json()) as { detail: { limit: number; retry_after: number } }).detail;
    expect(detail).toMatchObject({ limit: 1 });
    expect(Number.isInteger(detail.retry_after) && detail.retry_after >= 1).toBe(true);
    expect(refused.headers.get("retry-after")).toBe(String(detail.retry_after));
  });

  it("still answers an unknown key with the contract's 401", async () => {
    const response = await me("cbk_unknown");
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ detail: "Invalid API key" });
  });
});
