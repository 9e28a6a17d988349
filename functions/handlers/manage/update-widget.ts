/** PUT /manage/chatbots/{chatbot_id}/widget — changes a chatbot's website widget settings. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { updateWidgetSettings } from "#functions/domain/widget-settings";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter } from "#functions/http/manage-inputs";
import { toWidgetChanges, toWidgetView, widgetChanges, widgetView } from "#functions/http/widget-views";

const path = z.object({ chatbot_id: chatbotIdParameter });
const body = widgetChanges;
const response = widgetView;

export const contract = {
  operationId: "manageUpdateWidget",
  summary: "Change a chatbot's widget settings",
  description:
    "Sets the fields given (the others keep their value; within `appearance` too). Allowed origins are stored normalised (lower case, no default port). A change made meanwhile by someone else is a 409: read and try again.",
  tags: ["Management: widget"],
  auth: "manage",
  access: "admin",
  path,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path, body }) => ({
  body: toWidgetView(
    await updateWidgetSettings(ctx, {
      organizationId: caller.organizationId,
      chatbotId: path.chatbot_id,
      changes: toWidgetChanges(body),
    }),
  ),
}));
