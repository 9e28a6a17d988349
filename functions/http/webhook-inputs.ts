/**
 * Webhook endpoint fields as the management API takes them, and the context the webhook routes
 * work in: the signing-secret cipher (KMS on AWS, a key file locally), the delivery queue, the
 * outbound policy and timings, all from the environment, made on first use.
 */
import * as z from "zod/mini";
import type { DomainContext } from "#functions/domain/context";
import { type WebhooksContext, webhookLimits } from "#functions/domain/webhooks";
import { uuid } from "#functions/http/schemas";
import { webhookSecretsCipher } from "#functions/webhooks/environment";
import { webhookEventTypes } from "#functions/webhooks/events";
import { outboundPolicyFromEnvironment } from "#functions/webhooks/outbound";
import { deliveryQueueFromEnvironment } from "#functions/webhooks/queue";
import { timingsFromEnvironment } from "#functions/webhooks/timings";

export const endpointUrl = z
  .string()
  .check(
    z.maxLength(webhookLimits.urlLength),
    z.describe("An https URL on a public address (checked now, and again at each delivery)."),
  );

export const endpointEvents = z
  .array(z.enum(webhookEventTypes))
  .check(z.minLength(1), z.maxLength(webhookEventTypes.length), z.describe("The event types to receive."));

export const endpointDescription = z
  .string()
  .check(z.maxLength(webhookLimits.descriptionLength), z.describe("What the endpoint is for."));

export const endpointIdParameter = uuid("The webhook endpoint.");
export const deliveryIdParameter = uuid("The delivery.");

/** The webhook routes' context; each part is made on first use, from the stack's environment. */
export function lazyWebhooksContext(ctx: DomainContext): () => WebhooksContext {
  let made: WebhooksContext | undefined;
  return () => {
    if (!made) {
      const secrets = webhookSecretsCipher();
      made = {
        get db() {
          return ctx.db;
        },
        clock: ctx.clock,
        ...(secrets ? { secrets } : {}),
        get queue() {
          return deliveryQueueFromEnvironment();
        },
        outbound: outboundPolicyFromEnvironment(),
        timings: { secretOverlapSeconds: timingsFromEnvironment().secretOverlapSeconds },
      };
    }
    return made;
  };
}
