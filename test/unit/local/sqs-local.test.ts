/**
 * The local SQS keeps its queues between runs (`.local/`); a run whose queue definitions changed since
 * (another dead-letter queue, another visibility timeout) must start and bring the kept queues up to
 * date, as a CloudFormation update would, not refuse to start.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { afterAll, describe, expect, it } from "vitest";
import type { QueueDefinition } from "#lib/event-sources";
import { startLocalSqs } from "#lib/local/sqs-local";

const dataDirectory = mkdtempSync(join(tmpdir(), "sqs-local-"));
afterAll(() => rmSync(dataDirectory, { recursive: true, force: true }));

const queues = (deadLetterQueueId: string, visibilityTimeoutSeconds: number): QueueDefinition[] => [
  { id: "OldDead", visibilityTimeoutSeconds: 30, retentionSeconds: 3_600 },
  { id: "NewDead", visibilityTimeoutSeconds: 30, retentionSeconds: 3_600 },
  {
    id: "Work",
    visibilityTimeoutSeconds,
    retentionSeconds: 3_600,
    deadLetter: { queueId: deadLetterQueueId, maxReceiveCount: 3 },
  },
];

describe("the local SQS's kept queues", { timeout: 30_000 }, () => {
  it("starts when a kept queue's settings changed and applies the new ones", async () => {
    const first = await startLocalSqs({ namePrefix: "kept", dataDirectory, queues: queues("OldDead", 30) });
    await first.stop();

    const second = await startLocalSqs({ namePrefix: "kept", dataDirectory, queues: queues("NewDead", 45) });
    try {
      const { Attributes } = await second.client.send(
        new GetQueueAttributesCommand({
          QueueUrl: second.queueUrls.get("Work"),
          AttributeNames: ["RedrivePolicy", "VisibilityTimeout"],
        }),
      );
      expect(JSON.parse(Attributes?.RedrivePolicy ?? "{}").deadLetterTargetArn).toBe(
        second.queueArns.get("NewDead"),
      );
      expect(Attributes?.VisibilityTimeout).toBe("45");
    } finally {
      await second.stop();
    }
  });
});
