/** GET /manage/chatbots/{chatbot_id}/widget — a chatbot's website widget settings. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { getWidgetSettings } from "#functions/domain/widget-settings";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter } from "#functions/http/manage-inputs";
import { toWidgetView, widgetView } from "#functions/http/widget-views";

const path = z.object({ chatbot_id: chatbotIdParameter });
const response = widgetView;

export const contract = {
  operationId: "manageGetWidget",
  summary: "Read a chatbot's widget settings",
  description:
    "Whether the website widget is on, the origins allowed to start visitor sessions, identity verification, appearance, the daily message budget, and when the identity secret was made (never the secret). A chatbot whose widget was never set up shows the defaults.",
  tags: ["Management: widget"],
  auth: "manage",
  access: "viewer",
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => ({
  body: toWidgetView(await getWidgetSettings(ctx, caller.organizationId, path.chatbot_id)),
}));
