/** POST /manage/chatbots/{chatbot_id}/widget/identity-secret — a new identity secret, shown once. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { rotateIdentitySecret, type WidgetContext } from "#functions/domain/widget-settings";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter } from "#functions/http/manage-inputs";
import { widgetSecretsCipher } from "#functions/http/widget-secrets";

const path = z.object({ chatbot_id: chatbotIdParameter });
const response = z.object({
  identity_secret: z
    .string()
    .check(
      z.describe(
        "The new identity secret (`cis_…`), in this answer only: your server signs identity tokens (HS256 JWTs) with it. The previous secret keeps verifying for 24 hours.",
      ),
    ),
});

export const contract = {
  operationId: "manageRotateWidgetIdentitySecret",
  summary: "Make a new widget identity secret",
  description:
    "Makes the chatbot's widget identity secret, or a new one: shown in this answer only, stored sealed. Identity tokens signed with the previous secret keep verifying for 24 hours, so your servers can switch without a moment in which visitors cannot be identified.",
  tags: ["Management: widget"],
  auth: "manage",
  access: "admin",
  path,
  status: 201,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const base = contextFromEnvironment();
let widgets: WidgetContext | undefined;

export const handler = apiHandler(contract, async ({ caller, path }) => {
  if (!widgets) {
    const secrets = widgetSecretsCipher();
    widgets = {
      get db() {
        return base.db;
      },
      clock: base.clock,
      ...(secrets ? { secrets } : {}),
    };
  }
  const rotated = await rotateIdentitySecret(widgets, {
    organizationId: caller.organizationId,
    chatbotId: path.chatbot_id,
  });
  return { body: { identity_secret: rotated.identitySecret } };
});
