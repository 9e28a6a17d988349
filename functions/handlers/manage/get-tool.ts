/** GET /manage/chatbots/{chatbot_id}/tools/{tool_id} — one look-up tool (credentials masked). */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { getTool } from "#functions/domain/tools";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter, toolIdParameter } from "#functions/http/manage-inputs";
import { toolView, toToolView } from "#functions/http/manage-views";

const path = z.object({ chatbot_id: chatbotIdParameter, tool_id: toolIdParameter });
const response = toolView;

export const contract = {
  operationId: "manageGetTool",
  summary: "Read a look-up tool",
  description:
    "One look-up tool of the chatbot: template, settings, what it collects, masked credential hints.",
  tags: ["Management: tools"],
  auth: "manage",
  access: "viewer",
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => ({
  body: toToolView(
    await getTool(ctx, {
      organizationId: caller.organizationId,
      chatbotId: path.chatbot_id,
      toolId: path.tool_id,
    }),
  ),
}));
