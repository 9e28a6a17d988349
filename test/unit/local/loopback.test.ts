/**
 * The local runtime's DynamoDB Local and local SQS (fauxqs, also its S3) answer on 127.0.0.1 and
 * refuse connections on this machine's other addresses: neither is reachable from the network.
 * On a machine with a JRE but no javac, DynamoDB Local still starts (then on every interface, and
 * the runtime says so), as the README's prerequisites promise.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { connect } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startDynamoDbLocal } from "#lib/local/dynamodb-local";
import { dynamoDbLocalCommand } from "#lib/local/loopback";
import { startLocalSqs } from "#lib/local/sqs-local";

/** This machine's first address that is not a loopback one (IPv4), if it has one. */
const outside = Object.values(networkInterfaces())
  .flat()
  .find((address) => address && !address.internal && address.family === "IPv4")?.address;

/** Whether a TCP connection to host:port is accepted ("open") or refused ("refused"). */
function tryConnect(host: string, port: number): Promise<"open" | "refused"> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve("open");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED") resolve("refused");
      else reject(error);
    });
  });
}

describe.runIf(outside)(`the local servers, seen from ${outside ?? "no other address"}`, () => {
  it("DynamoDB Local listens on 127.0.0.1 only (with a JDK, as here)", async () => {
    expect(dynamoDbLocalCommand([]).loopback, "javac compiles the loopback launcher").toBe(true);
    const database = await startDynamoDbLocal();
    try {
      const port = Number(new URL(database.endpoint).port);
      expect(await tryConnect("127.0.0.1", port)).toBe("open");
      expect(await tryConnect(outside ?? "", port)).toBe("refused");
    } finally {
      await database.stop();
    }
  }, 60_000);

  it("the local SQS (and S3) listens on 127.0.0.1 only", async () => {
    const sqs = await startLocalSqs({ queues: [], namePrefix: "loopback-test" });
    try {
      const port = Number(new URL(sqs.endpoint).port);
      expect(await tryConnect("127.0.0.1", port)).toBe("open");
      expect(await tryConnect(outside ?? "", port)).toBe("refused");
    } finally {
      await sqs.stop();
    }
  });
});

describe("DynamoDB Local on a machine without javac (a JRE only)", () => {
  it("starts from its own jar, answers, and says that it listens on every interface", async () => {
    // A PATH whose only program is java, and a temporary folder with no launcher compiled yet.
    const java = execFileSync("sh", ["-c", "command -v java"], { encoding: "utf8" }).trim();
    const jreOnly = mkdtempSync(join(tmpdir(), "jre-only-"));
    symlinkSync(java, join(jreOnly, "java"));
    const saved = { PATH: process.env.PATH, TMPDIR: process.env.TMPDIR };
    process.env.PATH = join(jreOnly);
    process.env.TMPDIR = jreOnly;
    const lines: string[] = [];
    try {
      expect(dynamoDbLocalCommand([]).loopback).toBe(false);
      const database = await startDynamoDbLocal({ log: (line) => lines.push(line) });
      try {
        const port = Number(new URL(database.endpoint).port);
        expect(await tryConnect("127.0.0.1", port)).toBe("open");
        if (outside) expect(await tryConnect(outside, port)).toBe("open");
      } finally {
        await database.stop();
      }
      expect(lines).toEqual([
        "no javac (a JDK) found: DynamoDB Local listens on every interface of this machine, not only 127.0.0.1",
      ]);
    } finally {
      process.env.PATH = saved.PATH;
      if (saved.TMPDIR === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved.TMPDIR;
      rmSync(jreOnly, { recursive: true, force: true });
    }
  }, 60_000);
});
