/** GET /manage/webhook-endpoints/{endpoint_id} — one webhook endpoint (never its secret). */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { getWebhookEndpoint } from "#functions/domain/webhooks";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { toWebhookEndpointView, webhookEndpointView } from "#functions/http/manage-views";
import { endpointIdParameter } from "#functions/http/webhook-inputs";

const path = z.object({ endpoint_id: endpointIdParameter });
const response = webhookEndpointView;

export const contract = {
  operationId: "manageGetWebhookEndpoint",
  summary: "Read a webhook endpoint",
  description: "One endpoint: URL, event types, state, and why it failed or was disabled.",
  tags: ["Management: webhooks"],
  auth: "manage",
  access: "viewer",
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => ({
  body: toWebhookEndpointView(
    await getWebhookEndpoint(ctx, { organizationId: caller.organizationId, endpointId: path.endpoint_id }),
  ),
}));
