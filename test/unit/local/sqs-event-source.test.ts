/**
 * The local SQS event source mapping against the local SQS: batches, partial batch failures,
 * function errors and timeouts (messages come back after the visibility timeout), and the
 * queue's redrive to its dead-letter queue.
 */
import { ReceiveMessageCommand, SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmulatedFunction } from "#lib/local/http-api-emulator";
import { type RunningSqsEventSource, startSqsEventSource } from "#lib/local/sqs-event-source";
import { type RunningSqs, startLocalSqs } from "#lib/local/sqs-local";

let sqs: RunningSqs;
beforeAll(async () => {
  sqs = await startLocalSqs({
    namePrefix: "unit",
    queues: [
      { id: "Dead", visibilityTimeoutSeconds: 30, retentionSeconds: 3_600 },
      {
        id: "Work",
        visibilityTimeoutSeconds: 1,
        retentionSeconds: 3_600,
        deadLetter: { queueId: "Dead", maxReceiveCount: 2 },
      },
    ],
  });
});
afterAll(() => sqs.stop());

interface SqsRecord {
  messageId: string;
  body: string;
  attributes: Record<string, string>;
  eventSource: string;
}

function source(
  handler: (records: SqsRecord[]) => unknown,
  timeoutSeconds = 5,
): {
  running: RunningSqsEventSource;
  seen: SqsRecord[][];
} {
  const seen: SqsRecord[][] = [];
  const fn: EmulatedFunction = {
    name: "unit-consumer",
    memoryMb: 128,
    timeoutSeconds,
    handler: async (event) => {
      const records = (event as { Records: SqsRecord[] }).Records;
      seen.push(records);
      return handler(records);
    },
  };
  const started = startSqsEventSource({
    definition: {
      batchSize: 10,
      maxBatchingWindowSeconds: 0,
      maxConcurrency: 2,
      reportBatchItemFailures: true,
    },
    fn,
    client: sqs.client,
    queueUrl: sqs.queueUrls.get("Work") ?? "",
    queueArn: sqs.queueArns.get("Work") ?? "",
    region: "us-east-1",
    waitTimeSeconds: 1,
  });
  // A long poll the client gave up on still waits on the server until its time is over (and would
  // take a message meanwhile, as on SQS): let them end before the next test sends anything.
  const running = {
    stop: async () => {
      await started.stop();
      await new Promise((resolve) => setTimeout(resolve, 1_200));
    },
  };
  return { running, seen };
}

async function send(...bodies: string[]): Promise<void> {
  await sqs.client.send(
    new SendMessageBatchCommand({
      QueueUrl: sqs.queueUrls.get("Work") ?? "",
      Entries: bodies.map((body, index) => ({ Id: String(index), MessageBody: body })),
    }),
  );
}

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const bodies = (seen: SqsRecord[][]) => seen.flat().map((record) => record.body);

describe("the SQS event source emulator", { timeout: 30_000 }, () => {
  it("hands over batches in Lambda's shape and keeps only the messages reported as failed", async () => {
    const failedOnce = new Set<string>();
    const { running, seen } = source((records) => ({
      batchItemFailures: records
        .filter((record) => record.body === "b" && !failedOnce.has(record.messageId))
        .map((record) => {
          failedOnce.add(record.messageId);
          return { itemIdentifier: record.messageId };
        }),
    }));
    await send("a", "b", "c");
    await until(() => bodies(seen).filter((body) => body === "b").length === 2);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await running.stop();
    expect(bodies(seen).sort()).toEqual(["a", "b", "b", "c"]);
    expect(seen[0]?.[0]).toMatchObject({
      eventSource: "aws:sqs",
      attributes: { ApproximateReceiveCount: "1" },
    });
    const retried = seen.flat().filter((record) => record.body === "b")[1];
    expect(retried?.attributes.ApproximateReceiveCount).toBe("2");
  });

  it("returns a whole batch on a function error or an answer naming a message not in it, then dead-letters it", async () => {
    const { running, seen } = source((records) =>
      records.some((record) => record.body === "boom")
        ? Promise.reject(new Error("boom"))
        : { batchItemFailures: [{ itemIdentifier: "not-in-this-batch" }] },
    );
    await send("boom");
    await until(() => bodies(seen).filter((body) => body === "boom").length === 2);
    await send("odd");
    await until(() => bodies(seen).filter((body) => body === "odd").length === 2);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await running.stop();
    // Received twice each (maxReceiveCount 2), then moved to the dead-letter queue.
    expect(bodies(seen).filter((body) => body === "boom")).toHaveLength(2);
    const dead = await sqs.client.send(
      new ReceiveMessageCommand({
        QueueUrl: sqs.queueUrls.get("Dead") ?? "",
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 2,
      }),
    );
    expect((dead.Messages ?? []).map((message) => message.Body).sort()).toEqual(["boom", "odd"]);
  });

  it("treats a function that runs past its timeout as failed", async () => {
    let calls = 0;
    const { running, seen } = source(async () => {
      calls++;
      if (calls === 1) await new Promise((resolve) => setTimeout(resolve, 1_500));
      return { batchItemFailures: [] };
    }, 1);
    await send("slow");
    await until(() => bodies(seen).filter((body) => body === "slow").length === 2);
    await running.stop();
    expect(calls).toBe(2);
  });
});
