/**
 * A local SQS: fauxqs, a pure-JS server speaking SQS's JSON protocol (so the real
 * `@aws-sdk/client-sqs` talks to it; the same server speaks S3's REST API, see s3-local.ts) with delays, visibility timeouts, long polling that answers as
 * soon as a message is there, and dead-letter redrive; optionally kept on disk between runs. The
 * queues are created from lib/event-sources.ts, the definitions the stack deploys.
 */
import { mkdirSync } from "node:fs";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueNameExists,
  SetQueueAttributesCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { startFauxqs } from "fauxqs";
import type { QueueDefinition } from "../event-sources.ts";
import { localCredentials, localRegion } from "./dynamodb-local.ts";
import { onLoopback } from "./loopback.ts";

export interface RunningSqs {
  endpoint: string;
  client: SQSClient;
  /** Queue URL by queue definition id. */
  queueUrls: Map<string, string>;
  queueArns: Map<string, string>;
  stop(): Promise<void>;
}

/**
 * fauxqs answers in SQS's JSON protocol with the query-compatible code
 * (`AWS.SimpleQueueService.QueueNameExists`), which the SDK does not map to its modelled class.
 */
const isQueueNameExists = (error: unknown) =>
  error instanceof QueueNameExists || (error instanceof Error && error.name.endsWith("QueueNameExists"));

export const localQueueName = (prefix: string, definition: QueueDefinition) => `${prefix}-${definition.id}`;

export async function startLocalSqs(options: {
  queues: readonly QueueDefinition[];
  namePrefix: string;
  /** Keep queues and messages here between runs; absent: in memory. */
  dataDirectory?: string;
  /** Keep S3 objects here, as files, between runs (the same server emulates S3: lib/local/s3-local.ts). */
  s3Directory?: string;
}): Promise<RunningSqs> {
  if (options.dataDirectory) mkdirSync(options.dataDirectory, { recursive: true });
  if (options.s3Directory) mkdirSync(options.s3Directory, { recursive: true });
  // fauxqs always listens on 0.0.0.0: kept to 127.0.0.1 (loopback.ts).
  const server = await onLoopback(() =>
    startFauxqs({
      port: 0,
      logger: false,
      ...(options.dataDirectory ? { dataDir: options.dataDirectory } : {}),
      ...(options.s3Directory ? { s3StorageDir: options.s3Directory } : {}),
    }),
  );
  const endpoint = `http://127.0.0.1:${server.port}`;
  const client = new SQSClient({ endpoint, region: localRegion, credentials: localCredentials });
  const queueUrls = new Map<string, string>();
  const queueArns = new Map<string, string>();
  try {
    // Dead-letter queues first: a redrive policy names its target's ARN.
    const ordered = [...options.queues].sort((a, b) => Number(!!a.deadLetter) - Number(!!b.deadLetter));
    for (const definition of ordered) {
      const attributes: Record<string, string> = {
        VisibilityTimeout: String(definition.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(definition.retentionSeconds),
        SqsManagedSseEnabled: "true",
      };
      if (definition.deadLetter) {
        const target = queueArns.get(definition.deadLetter.queueId);
        if (!target) throw new Error(`dead-letter queue ${definition.deadLetter.queueId} is not defined`);
        attributes.RedrivePolicy = JSON.stringify({
          deadLetterTargetArn: target,
          maxReceiveCount: definition.deadLetter.maxReceiveCount,
        });
      }
      const name = localQueueName(options.namePrefix, definition);
      let url: string;
      try {
        url =
          (await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl ??
          "";
      } catch (error) {
        // Kept from an earlier run with other settings: bring it up to date.
        if (!isQueueNameExists(error)) throw error;
        url = (await client.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl ?? "";
        await client.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: attributes }));
      }
      // fauxqs names queues `http://sqs.<region>.localhost:<port>/…`; the same path on the endpoint
      // itself reaches the same queue, and then a queue URL's origin is the client's endpoint, as on AWS.
      url = `${endpoint}${new URL(url).pathname}`;
      const arn = await client.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }),
      );
      queueUrls.set(definition.id, url);
      queueArns.set(definition.id, arn.Attributes?.QueueArn ?? "");
    }
  } catch (error) {
    client.destroy();
    await server.stop();
    throw error;
  }
  return {
    endpoint,
    client,
    queueUrls,
    queueArns,
    stop: async () => {
      client.destroy();
      await server.stop();
    },
  };
}
