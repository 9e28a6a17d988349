/**
 * WebhookDelivery: delivery-queue messages in, one attempt each (webhooks/delivery.ts), all of a
 * batch at once so one slow endpoint does not hold the others' attempts back. A message whose
 * processing failed is reported back alone (partial batch response): only it becomes visible
 * again for another try; the others are done.
 */
import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { contextFromEnvironment } from "#functions/domain/context";
import { log, withRequestScope } from "#functions/log";
import { recordWebhookDelivery, type WebhookDeliveryOutcome } from "#functions/observability/metrics";
import {
  type AttemptOutcome,
  type DeliveryContext,
  describeDeliveryError,
  processDeliveryMessage,
} from "#functions/webhooks/delivery";
import { createSecretOpener, webhookSecretsCipher } from "#functions/webhooks/environment";
import { createWebhookPoster, outboundPolicyFromEnvironment } from "#functions/webhooks/outbound";
import { deliveryQueueFromEnvironment, parseDeliveryMessage } from "#functions/webhooks/queue";
import { timingsFromEnvironment } from "#functions/webhooks/timings";

let context: DeliveryContext | undefined;
function deliveryContext(): DeliveryContext {
  if (!context) {
    const post = createWebhookPoster(outboundPolicyFromEnvironment());
    context = {
      ...contextFromEnvironment(),
      get queue() {
        return deliveryQueueFromEnvironment();
      },
      timings: timingsFromEnvironment(),
      openSecret: createSecretOpener(webhookSecretsCipher()),
      post,
    };
  }
  return context;
}

/** The attempts' outcomes the metrics count; the rest are a message's hops, waits and duplicates. */
const countedOutcomes = new Set<AttemptOutcome>(["delivered", "retry_scheduled", "failed", "dropped"]);

export const handler = async (event: SQSEvent, lambda: Context): Promise<SQSBatchResponse> =>
  withRequestScope(lambda.awsRequestId, async () => {
    const ctx = deliveryContext();
    const failed: SQSBatchResponse["batchItemFailures"] = [];
    await Promise.all(
      event.Records.map(async (record) => {
        const message = parseDeliveryMessage(record.body);
        if (!message) {
          log.warn("delivery queue message is not a delivery; dropped", { messageId: record.messageId });
          return;
        }
        try {
          const outcome = await processDeliveryMessage(ctx, message);
          if (countedOutcomes.has(outcome)) recordWebhookDelivery(outcome as WebhookDeliveryOutcome);
        } catch (error) {
          log.error("webhook attempt could not be completed; the queue retries it", {
            deliveryId: message.deliveryId,
            attempt: message.attempt,
            ...describeDeliveryError(error),
          });
          failed.push({ itemIdentifier: record.messageId });
        }
      }),
    );
    return { batchItemFailures: failed };
  });
