/**
 * The delivery queue: one SQS message per attempt to make. A message names the delivery and the
 * attempt number, and the earliest time it may run (`notBefore`): SQS delays a message at most
 * 15 minutes, so a longer wait is a chain of hops, each re-sent until the time has come.
 *
 * Every message carries its endpoint as MessageGroupId: on a standard queue that makes it a fair
 * queue, so SQS hands out messages of quiet endpoints first while one endpoint has many in flight.
 *
 *   WEBHOOK_QUEUE_URL   the queue (set by the stack; by the local runtime for its local SQS)
 */
import { SendMessageBatchCommand, SQSClient } from "@aws-sdk/client-sqs";
import { awsClientOptions } from "#functions/aws-clients";

export interface DeliveryMessage {
  organizationId: string;
  endpointId: string;
  deliveryId: string;
  /** The attempt this message makes (1-based). */
  attempt: number;
  trigger: "event" | "retry" | "manual";
  /** Epoch ms before which the attempt must not run. */
  notBefore: number;
  /** Epoch ms when this attempt was first queued (bounds how long it may wait for its turn). */
  queuedAt: number;
}

export interface QueuedMessage {
  message: DeliveryMessage;
  /** 0–900 whole seconds. */
  delaySeconds: number;
}

export interface DeliveryQueue {
  send(messages: readonly QueuedMessage[]): Promise<void>;
}

export function createSqsDeliveryQueue(client: SQSClient, queueUrl: string): DeliveryQueue {
  return {
    async send(messages) {
      for (let start = 0; start < messages.length; start += 10) {
        const batch = messages.slice(start, start + 10);
        const result = await client.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map(({ message, delaySeconds }, index) => ({
              Id: String(index),
              MessageBody: JSON.stringify(message),
              DelaySeconds: delaySeconds,
              MessageGroupId: message.endpointId,
            })),
          }),
        );
        if (result.Failed && result.Failed.length > 0) {
          const codes = [...new Set(result.Failed.map((failure) => failure.Code))].join(", ");
          throw new Error(`SQS refused ${result.Failed.length} delivery messages (${codes})`);
        }
      }
    },
  };
}

let fromEnvironment: DeliveryQueue | undefined;

/** The Lambda's queue, named by WEBHOOK_QUEUE_URL (the SDK reads AWS_ENDPOINT_URL_SQS itself). */
export function deliveryQueueFromEnvironment(): DeliveryQueue {
  if (!fromEnvironment) {
    const queueUrl = process.env.WEBHOOK_QUEUE_URL;
    if (!queueUrl) throw new Error("WEBHOOK_QUEUE_URL is not set");
    // Bounded like every other AWS call: a silent queue fails the message, which is then retried.
    fromEnvironment = createSqsDeliveryQueue(new SQSClient(awsClientOptions("request")), queueUrl);
  }
  return fromEnvironment;
}

/** Reads a message body back; undefined when it is not one of ours. */
export function parseDeliveryMessage(body: string): DeliveryMessage | undefined {
  try {
    const value = JSON.parse(body) as Partial<DeliveryMessage>;
    const ok =
      typeof value.organizationId === "string" &&
      typeof value.endpointId === "string" &&
      typeof value.deliveryId === "string" &&
      Number.isInteger(value.attempt) &&
      (value.attempt ?? 0) >= 1 &&
      typeof value.notBefore === "number" &&
      typeof value.queuedAt === "number" &&
      (value.trigger === "event" || value.trigger === "retry" || value.trigger === "manual");
    return ok ? (value as DeliveryMessage) : undefined;
  } catch {
    return undefined;
  }
}
