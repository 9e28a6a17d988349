/**
 * `npm start` (bin/local.ts) outlives its database: when DynamoDB Local dies (its Java process
 * killed), the runtime restarts it with its data and says so in its log, or, when the data was in
 * memory and is gone, stops with a clear message and exit status 1. It never goes on serving a
 * broken state. Each test runs `bin/local.ts` as its own process, as a developer would.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

interface Local {
  process: ChildProcess;
  exited: Promise<number | null>;
  runtimeFile: string;
  demo: { baseUrl: string; apiKey: string; chatbotId: string };
  log(): string;
  dynamoDbPid(): number;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startLocal(options: { ephemeral: boolean }): Promise<Local> {
  const work = mkdtempSync(join(tmpdir(), "chatbot-supervision-"));
  const runtimeFile = join(work, "runtime.json");
  const demoFile = join(work, "demo.json");
  const logFile = join(work, "local.log");
  const child = spawn(
    resolve(root, "node_modules/.bin/tsx"),
    [
      "bin/local.ts",
      "--port",
      "0",
      "--build-directory",
      join(work, "build"),
      "--demo-file",
      demoFile,
      "--runtime-file",
      runtimeFile,
      ...(options.ephemeral ? ["--ephemeral"] : ["--data-directory", join(work, "data")]),
    ],
    { cwd: root, stdio: ["ignore", openSync(logFile, "a"), openSync(logFile, "a")], env: { ...process.env } },
  );
  const exited = new Promise<number | null>((resolveExit) => child.once("exit", (code) => resolveExit(code)));
  const log = () => readFileSync(logFile, "utf8");
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((resolveWait) => setTimeout(resolveWait, 10_000))]);
      child.kill("SIGKILL");
    }
    rmSync(work, { recursive: true, force: true });
  });
  await waitFor(
    () => existsSync(runtimeFile) && existsSync(demoFile),
    120_000,
    () => child.exitCode === null || Promise.reject(new Error(`bin/local.ts exited early:\n${log()}`)),
  );
  const readRuntime = () => JSON.parse(readFileSync(runtimeFile, "utf8")) as { dynamoDbPid?: number };
  return {
    process: child,
    exited,
    runtimeFile,
    demo: JSON.parse(readFileSync(demoFile, "utf8")) as Local["demo"],
    log,
    dynamoDbPid: () => {
      const pid = readRuntime().dynamoDbPid;
      if (typeof pid !== "number") throw new Error("runtime.json does not name DynamoDB Local's process");
      return pid;
    },
  };
}

async function waitFor(
  ready: () => boolean,
  limitMs: number,
  check: () => unknown = () => undefined,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!ready()) {
    await check();
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}

async function call(local: Local, method: string, path: string, body?: unknown) {
  const response = await fetch(`${local.demo.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${local.demo.apiKey}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(40_000),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("npm start supervises DynamoDB Local", () => {
  it("restarts it with its data when it dies, says so in the log, and serves on", async () => {
    const local = await startLocal({ ephemeral: false });
    const before = local.dynamoDbPid();

    process.kill(before, "SIGKILL");
    const whileDown = await call(local, "GET", "/api/me");
    await waitFor(() => local.dynamoDbPid() !== before, 60_000);

    expect(whileDown).toEqual({ status: 503, body: { detail: "Service temporarily unavailable" } });
    expect(local.log()).toMatch(
      new RegExp(
        `DynamoDB Local \\(pid ${before}\\) exited unexpectedly \\(signal SIGKILL\\); restarting it`,
      ),
    );
    expect(local.log()).toContain(`DynamoDB Local is back (pid ${local.dynamoDbPid()}), with its data.`);
    // The demo organization, key and chatbot were stored before the kill (DynamoDB Local may lose a
    // transaction it acknowledged in the last moment before a hard kill; what it had stored stays).
    expect((await call(local, "GET", "/api/me")).status).toBe(200);
    const started = await call(local, "POST", "/api/conversation", { chatbot_id: local.demo.chatbotId });
    expect(started.status).toBe(200);
    const turn = await call(local, "POST", "/api/message", {
      conversation_id: started.body.conversation_id,
      message: "How long does shipping take?",
    });
    expect(turn.status).toBe(200);
    expect(local.process.exitCode).toBeNull();
  });

  it("stops with a clear message and exit status 1 when it dies with in-memory data", async () => {
    const local = await startLocal({ ephemeral: true });
    const pid = local.dynamoDbPid();

    process.kill(pid, "SIGKILL");
    const code = await local.exited;

    expect(code).toBe(1);
    expect(local.log()).toContain(
      `DynamoDB Local (pid ${pid}) exited unexpectedly (signal SIGKILL). Its data was in memory (--ephemeral) and is lost`,
    );
  });
});
