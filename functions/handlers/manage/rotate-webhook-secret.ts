/** POST /manage/webhook-endpoints/{endpoint_id}/rotate-secret — a new signing secret, the old ones overlapping. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { rotateWebhookSecret } from "#functions/domain/webhooks";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { toWebhookEndpointView, webhookEndpointView } from "#functions/http/manage-views";
import { endpointIdParameter, lazyWebhooksContext } from "#functions/http/webhook-inputs";

const path = z.object({ endpoint_id: endpointIdParameter });
const response = z.extend(webhookEndpointView, {
  secret: z.string().check(z.describe("The new signing secret (`whsec_…`), shown this once.")),
});

export const contract = {
  operationId: "manageRotateWebhookSecret",
  summary: "Rotate a webhook endpoint's secret",
  description:
    "Makes a new signing secret (in this answer only). The previous secrets keep signing for an overlap (24 hours; until `previous_secret_expires_at`): deliveries carry one signature per secret meanwhile, so receivers can switch without missing one.",
  tags: ["Management: webhooks"],
  auth: "manage",
  access: "admin",
  path,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const webhooks = lazyWebhooksContext(contextFromEnvironment());

export const handler = apiHandler(contract, async ({ caller, path }) => {
  const rotated = await rotateWebhookSecret(webhooks(), {
    organizationId: caller.organizationId,
    endpointId: path.endpoint_id,
  });
  return { body: { ...toWebhookEndpointView(rotated.endpoint), secret: rotated.secret } };
});
