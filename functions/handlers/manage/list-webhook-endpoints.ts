/** GET /manage/webhook-endpoints — the organization's webhook endpoints (never their secrets). */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { listWebhookEndpoints } from "#functions/domain/webhooks";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { toWebhookEndpointView, webhookEndpointView } from "#functions/http/manage-views";

const response = z.object({
  webhook_endpoints: z.array(webhookEndpointView).check(z.describe("Oldest first.")),
});

export const contract = {
  operationId: "manageListWebhookEndpoints",
  summary: "List webhook endpoints",
  description:
    "Where the organization's events are sent: each endpoint's URL, event types, whether it is enabled, and why it was disabled if it was.",
  tags: ["Management: webhooks"],
  auth: "manage",
  access: "viewer",
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller }) => ({
  body: {
    webhook_endpoints: (await listWebhookEndpoints(ctx, { organizationId: caller.organizationId })).map(
      toWebhookEndpointView,
    ),
  },
}));
