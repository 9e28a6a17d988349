/** GET /manage/webhook-endpoints/{endpoint_id}/deliveries — an endpoint's deliveries and their attempts, newest first. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { listWebhookDeliveries } from "#functions/domain/webhooks";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { pageQuery, toWebhookDeliveryView, webhookDeliveryView } from "#functions/http/manage-views";
import { endpointIdParameter } from "#functions/http/webhook-inputs";

const path = z.object({ endpoint_id: endpointIdParameter });
const query = z.object(pageQuery);
const response = z.object({
  deliveries: z.array(webhookDeliveryView).check(z.describe("Newest first.")),
  has_more: z.boolean(),
  next_cursor: z.nullable(z.string()),
});

export const contract = {
  operationId: "manageListWebhookDeliveries",
  summary: "List an endpoint's deliveries",
  description:
    "Every event sent (or being sent) to the endpoint, newest first, with each attempt: time, status or error, latency and the first 1 KB of the answer. Kept 30 days.",
  tags: ["Management: webhooks"],
  auth: "manage",
  access: "viewer",
  path,
  query,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, typeof query, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path, query }) => {
  const page = await listWebhookDeliveries(ctx, {
    organizationId: caller.organizationId,
    endpointId: path.endpoint_id,
    limit: query.limit,
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  });
  return {
    body: {
      deliveries: page.deliveries.map(toWebhookDeliveryView),
      has_more: page.hasMore,
      next_cursor: page.nextCursor,
    },
  };
});
