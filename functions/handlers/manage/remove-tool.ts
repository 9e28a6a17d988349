/** DELETE /manage/chatbots/{chatbot_id}/tools/{tool_id} — removes a look-up tool and its credentials. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { removeTool } from "#functions/domain/tools";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter, toolIdParameter } from "#functions/http/manage-inputs";

const path = z.object({ chatbot_id: chatbotIdParameter, tool_id: toolIdParameter });
const response = z.never();

export const contract = {
  operationId: "manageRemoveTool",
  summary: "Remove a look-up tool",
  description: "Removes the tool; its credentials go with it.",
  tags: ["Management: tools"],
  auth: "manage",
  access: "admin",
  status: 204,
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => {
  await removeTool(ctx, {
    organizationId: caller.organizationId,
    chatbotId: path.chatbot_id,
    toolId: path.tool_id,
  });
  return { body: undefined };
});
