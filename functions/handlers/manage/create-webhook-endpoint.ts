/** POST /manage/webhook-endpoints — registers an endpoint; its signing secret is in this answer only. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { createWebhookEndpoint } from "#functions/domain/webhooks";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { toWebhookEndpointView, webhookEndpointView } from "#functions/http/manage-views";
import {
  endpointDescription,
  endpointEvents,
  endpointUrl,
  lazyWebhooksContext,
} from "#functions/http/webhook-inputs";

const body = z.object({
  url: endpointUrl,
  events: endpointEvents,
  enabled: z._default(z.boolean(), true),
  description: z.optional(endpointDescription),
});

const response = z.extend(webhookEndpointView, {
  secret: z
    .string()
    .check(
      z.describe(
        "The signing secret (`whsec_…`) for verifying deliveries (Standard Webhooks). Shown this once; rotate to get a new one.",
      ),
    ),
});

export const contract = {
  operationId: "manageCreateWebhookEndpoint",
  summary: "Register a webhook endpoint",
  description:
    "Registers an https endpoint on a public address for the event types given (at most 20 endpoints). The answer holds its signing secret, the only time it is shown.",
  tags: ["Management: webhooks"],
  auth: "manage",
  access: "admin",
  status: 201,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, undefined, typeof response>;

const webhooks = lazyWebhooksContext(contextFromEnvironment());

export const handler = apiHandler(contract, async ({ caller, body }) => {
  const created = await createWebhookEndpoint(webhooks(), {
    organizationId: caller.organizationId,
    url: body.url,
    events: body.events,
    enabled: body.enabled,
    ...(body.description === undefined ? {} : { description: body.description }),
  });
  return { body: { ...toWebhookEndpointView(created.endpoint), secret: created.secret } };
});
