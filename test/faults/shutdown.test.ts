/**
 * Ctrl-C stops `npm start` (bin/local.ts) cleanly: a terminal sends SIGINT to the whole foreground
 * process group, so DynamoDB Local and cognito-local get it at the same moment as the runtime. They
 * must not be "restarted" by their supervisors, and after the runtime exits nothing of it is left
 * running or listening, even with turns and a stream in flight. The runtime runs as a process group
 * of its own (detached), as a terminal's foreground job does, and the test signals the group.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** The processes of process group `group` still running (ps), as "pid command" lines. */
function groupProcesses(group: number): string[] {
  const lines = execFileSync("ps", ["-eo", "pid=,pgid=,stat=,args="], { encoding: "utf8" }).split("\n");
  return lines
    .map((line) => line.trim().split(/\s+/))
    .filter(([, pgid, stat]) => Number(pgid) === group && !stat?.startsWith("Z"))
    .map(([pid, , , ...args]) => `${pid} ${args.join(" ")}`);
}

async function listening(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

async function waitFor(ready: () => boolean, limitMs: number, check: () => void): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!ready()) {
    check();
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}

describe("Ctrl-C on npm start", () => {
  it("stops supervision first: nothing is restarted, and nothing of the runtime is left running or listening", async () => {
    const work = mkdtempSync(join(tmpdir(), "chatbot-shutdown-"));
    const runtimeFile = join(work, "runtime.json");
    const demoFile = join(work, "demo.json");
    const logFile = join(work, "local.log");
    const child: ChildProcess = spawn(
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
        "--data-directory",
        join(work, "data"),
        "--event-state-directory",
        join(work, "events"),
        "--cognito-directory",
        join(work, "cognito"),
      ],
      {
        cwd: root,
        // Its own process group, as a terminal's foreground job: the group is what Ctrl-C signals.
        detached: true,
        stdio: ["ignore", openSync(logFile, "a"), openSync(logFile, "a")],
        env: { ...process.env },
      },
    );
    const group = child.pid ?? 0;
    const exited = new Promise<number | null>((resolveExit) =>
      child.once("exit", (code) => resolveExit(code)),
    );
    const log = () => readFileSync(logFile, "utf8");
    cleanups.push(() => {
      try {
        process.kill(-group, "SIGKILL");
      } catch {
        // Already gone, as it should be.
      }
      rmSync(work, { recursive: true, force: true });
    });
    await waitFor(
      () => existsSync(runtimeFile) && existsSync(demoFile),
      150_000,
      () => {
        if (child.exitCode !== null) throw new Error(`bin/local.ts exited early:\n${log()}`);
      },
    );
    const runtime = JSON.parse(readFileSync(runtimeFile, "utf8")) as {
      dynamoDbEndpoint: string;
      dynamoDbPid: number;
      streamUrl: string;
      cognito: { endpoint: string };
    };
    const demo = JSON.parse(readFileSync(demoFile, "utf8")) as {
      baseUrl: string;
      apiKey: string;
      chatbotId: string;
    };
    const headers = { authorization: `Bearer ${demo.apiKey}`, "content-type": "application/json" };
    const started = (await (
      await fetch(`${demo.baseUrl}/api/conversation`, {
        method: "POST",
        headers,
        body: JSON.stringify({ chatbot_id: demo.chatbotId }),
      })
    ).json()) as { conversation_id: string };
    expect(started.conversation_id).toBeTruthy();
    expect(await listening(runtime.dynamoDbEndpoint)).toBe(true);
    expect(await listening(runtime.cognito.endpoint)).toBe(true);

    // Work in flight: turns (each writes, so webhook fan-out runs too) and a stream.
    const inFlight = [
      ...Array.from({ length: 6 }, (_, index) =>
        fetch(`${demo.baseUrl}/api/message`, {
          method: "POST",
          headers,
          body: JSON.stringify({ conversation_id: started.conversation_id, message: `Shipping? ${index}` }),
        }),
      ),
      fetch(`${runtime.streamUrl}/api/message/stream`, {
        method: "POST",
        headers,
        body: JSON.stringify({ conversation_id: started.conversation_id, message: "Can I return it?" }),
      }).then((response) => response.text()),
    ].map((request) => request.catch(() => undefined));
    await new Promise((resolveWait) => setTimeout(resolveWait, 150));

    process.kill(-group, "SIGINT");
    const code = await Promise.race([
      exited,
      new Promise<"hung">((resolveWait) => setTimeout(() => resolveWait("hung"), 60_000)),
    ]);
    await Promise.all(inFlight);

    expect(code, log()).toBe(0);
    expect(log()).not.toContain("starting it again");
    expect(log()).not.toContain("restarting it");
    // Give a wrongly restarted child time to appear, then look for anything left of the group.
    await new Promise((resolveWait) => setTimeout(resolveWait, 3_000));
    expect(groupProcesses(group), log()).toEqual([]);
    expect(() => process.kill(runtime.dynamoDbPid, 0)).toThrow();
    expect(await listening(runtime.dynamoDbEndpoint)).toBe(false);
    expect(await listening(runtime.cognito.endpoint)).toBe(false);
    expect(await listening(demo.baseUrl)).toBe(false);
  }, 240_000);
});
