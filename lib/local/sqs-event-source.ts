/**
 * An emulator of Lambda's SQS event source mapping, against the local SQS:
 *  - pollers long-poll the queue (20 s waits), one batch per poller at a time; `maxConcurrency`
 *    pollers, so at most that many batches run at once (Lambda scales its pollers up to the
 *    mapping's maximum concurrency; locally they all start at once);
 *  - a batch is up to `batchSize` messages, gathered for at most `maxBatchingWindowSeconds`;
 *  - the event is Lambda's SQS event (`Records[]` with messageId, receiptHandle, body,
 *    attributes, messageAttributes, md5OfBody, eventSource, eventSourceARN, awsRegion);
 *  - success deletes the batch; with `reportBatchItemFailures`, the listed messages are kept (and
 *    an answer naming a message not in the batch fails the whole batch, as on Lambda); a function
 *    error or timeout keeps them all: they come back after the queue's visibility timeout, and the
 *    queue's redrive policy moves a message received too often to its dead-letter queue.
 */
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { QueueSourceDefinition } from "../event-sources.ts";
import type { EmulatedFunction } from "./http-api-emulator.ts";
import { invokeFunction } from "./lambda-invoke.ts";

export interface SqsEventSourceOptions {
  definition: Pick<
    QueueSourceDefinition,
    "batchSize" | "maxBatchingWindowSeconds" | "maxConcurrency" | "reportBatchItemFailures"
  >;
  fn: EmulatedFunction;
  client: SQSClient;
  queueUrl: string;
  queueArn: string;
  region: string;
  /** Long-poll wait (default 20 s, SQS's maximum). */
  waitTimeSeconds?: number;
  onError?: (message: string, error: unknown) => void;
}

export interface RunningSqsEventSource {
  /** Stops polling and waits for the batches in progress. */
  stop(): Promise<void>;
}

export function startSqsEventSource(options: SqsEventSourceOptions): RunningSqsEventSource {
  const stopping = new AbortController();
  const { definition } = options;
  const pollers = Array.from({ length: Math.max(1, definition.maxConcurrency) }, () => poll());

  async function poll(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        const messages = await receiveBatch();
        if (messages.length > 0) await handle(messages);
      } catch (error) {
        if (stopping.signal.aborted) return;
        options.onError?.("SQS event source poll failed", error);
        await sleep(1_000, stopping.signal);
      }
    }
  }

  async function receiveBatch(): Promise<Message[]> {
    const messages: Message[] = [];
    const windowEnds = Date.now() + definition.maxBatchingWindowSeconds * 1000;
    do {
      const wanted = Math.min(10, definition.batchSize - messages.length);
      const waitSeconds =
        messages.length === 0
          ? (options.waitTimeSeconds ?? 20)
          : Math.max(0, Math.floor((windowEnds - Date.now()) / 1000));
      const result = await options.client.send(
        new ReceiveMessageCommand({
          QueueUrl: options.queueUrl,
          MaxNumberOfMessages: wanted,
          WaitTimeSeconds: waitSeconds,
          MessageSystemAttributeNames: ["All"],
          MessageAttributeNames: ["All"],
        }),
        { abortSignal: stopping.signal },
      );
      messages.push(...(result.Messages ?? []));
      if ((result.Messages ?? []).length === 0 && messages.length > 0) break;
    } while (messages.length > 0 && messages.length < definition.batchSize && Date.now() < windowEnds);
    return messages;
  }

  async function handle(messages: Message[]): Promise<void> {
    const event = {
      Records: messages.map((message) => ({
        messageId: message.MessageId,
        receiptHandle: message.ReceiptHandle,
        body: message.Body ?? "",
        attributes: { ...message.Attributes },
        messageAttributes: Object.fromEntries(
          Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
            name,
            {
              dataType: value.DataType,
              ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
              ...(value.BinaryValue !== undefined
                ? { binaryValue: Buffer.from(value.BinaryValue).toString("base64") }
                : {}),
            },
          ]),
        ),
        md5OfBody: message.MD5OfBody,
        eventSource: "aws:sqs",
        eventSourceARN: options.queueArn,
        awsRegion: options.region,
      })),
    };
    let done: Message[];
    try {
      const result = await invokeFunction(options.fn, event);
      done = succeeded(messages, result);
    } catch (error) {
      options.onError?.(`${options.fn.name} failed; its batch returns to the queue`, error);
      return;
    }
    await deleteMessages(done);
  }

  /** The messages the function finished with. */
  function succeeded(messages: Message[], result: unknown): Message[] {
    if (!definition.reportBatchItemFailures) return messages;
    const failures = (result as { batchItemFailures?: { itemIdentifier?: unknown }[] } | null)
      ?.batchItemFailures;
    if (!Array.isArray(failures) || failures.length === 0) return messages;
    const ids = new Set(messages.map((message) => message.MessageId));
    const failed = new Set<unknown>();
    for (const failure of failures) {
      // An identifier that is not in the batch makes Lambda treat the whole batch as failed.
      if (typeof failure?.itemIdentifier !== "string" || !ids.has(failure.itemIdentifier)) return [];
      failed.add(failure.itemIdentifier);
    }
    return messages.filter((message) => !failed.has(message.MessageId));
  }

  async function deleteMessages(messages: Message[]): Promise<void> {
    for (let start = 0; start < messages.length; start += 10) {
      const batch = messages.slice(start, start + 10);
      await options.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: batch.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.ReceiptHandle ?? "",
          })),
        }),
      );
    }
  }

  return {
    async stop() {
      stopping.abort();
      await Promise.allSettled(pollers);
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
