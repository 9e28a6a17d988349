/** DELETE /manage/webhook-endpoints/{endpoint_id} — removes an endpoint; nothing more is sent to it. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { deleteWebhookEndpoint } from "#functions/domain/webhooks";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { endpointIdParameter } from "#functions/http/webhook-inputs";

const path = z.object({ endpoint_id: endpointIdParameter });
const response = z.never();

export const contract = {
  operationId: "manageDeleteWebhookEndpoint",
  summary: "Delete a webhook endpoint",
  description: "Removes the endpoint with its secrets; its pending deliveries stop.",
  tags: ["Management: webhooks"],
  auth: "manage",
  access: "admin",
  status: 204,
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => {
  await deleteWebhookEndpoint(ctx, { organizationId: caller.organizationId, endpointId: path.endpoint_id });
  return { body: undefined };
});
