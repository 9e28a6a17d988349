/** PATCH /manage/webhook-endpoints/{endpoint_id} — changes URL, event types, enabled or description. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { updateWebhookEndpoint } from "#functions/domain/webhooks";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { toWebhookEndpointView, webhookEndpointView } from "#functions/http/manage-views";
import {
  endpointDescription,
  endpointEvents,
  endpointIdParameter,
  endpointUrl,
  lazyWebhooksContext,
} from "#functions/http/webhook-inputs";

const path = z.object({ endpoint_id: endpointIdParameter });
const body = z.object({
  url: z.optional(endpointUrl),
  events: z.optional(endpointEvents),
  enabled: z.optional(
    z.boolean().check(z.describe("Enabling a disabled endpoint clears why it was disabled.")),
  ),
  description: z.optional(endpointDescription),
});
const response = webhookEndpointView;

export const contract = {
  operationId: "manageUpdateWebhookEndpoint",
  summary: "Change a webhook endpoint",
  description:
    "Changes the fields sent. Enabling a disabled endpoint clears its failure streak. Changed meanwhile by someone else: 409.",
  tags: ["Management: webhooks"],
  auth: "manage",
  access: "admin",
  path,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const webhooks = lazyWebhooksContext(contextFromEnvironment());

export const handler = apiHandler(contract, async ({ caller, path, body }) => ({
  body: toWebhookEndpointView(
    await updateWebhookEndpoint(webhooks(), {
      organizationId: caller.organizationId,
      endpointId: path.endpoint_id,
      ...(body.url === undefined ? {} : { url: body.url }),
      ...(body.events === undefined ? {} : { events: body.events }),
      ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
      ...(body.description === undefined ? {} : { description: body.description }),
    }),
  ),
}));
