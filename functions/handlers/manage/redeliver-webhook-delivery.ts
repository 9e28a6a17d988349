/** POST /manage/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/redeliver — one more attempt, now. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { redeliverWebhookDelivery } from "#functions/domain/webhooks";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { toWebhookDeliveryView, webhookDeliveryView } from "#functions/http/manage-views";
import {
  deliveryIdParameter,
  endpointIdParameter,
  lazyWebhooksContext,
} from "#functions/http/webhook-inputs";

const path = z.object({ endpoint_id: endpointIdParameter, delivery_id: deliveryIdParameter });
const response = webhookDeliveryView;

export const contract = {
  operationId: "manageRedeliverWebhookDelivery",
  summary: "Redeliver an event",
  description:
    "Sends a delivered or failed delivery once more, right away, with the same `webhook-id` (no automatic retries follow). A delivery still being retried, or one to a disabled endpoint, is a 409.",
  tags: ["Management: webhooks"],
  auth: "manage",
  access: "admin",
  status: 202,
  path,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const webhooks = lazyWebhooksContext(contextFromEnvironment());

export const handler = apiHandler(contract, async ({ caller, path }) => ({
  body: toWebhookDeliveryView(
    await redeliverWebhookDelivery(webhooks(), {
      organizationId: caller.organizationId,
      endpointId: path.endpoint_id,
      deliveryId: path.delivery_id,
    }),
  ),
}));
