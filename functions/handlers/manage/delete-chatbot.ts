/** DELETE /manage/chatbots/{chatbot_id} — deletes a chatbot with its knowledge and tools. */

import * as z from "zod/mini";
import { deleteChatbot } from "#functions/domain/chatbots";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter } from "#functions/http/manage-inputs";

const path = z.object({ chatbot_id: chatbotIdParameter });
const response = z.never();

export const contract = {
  operationId: "manageDeleteChatbot",
  summary: "Delete a chatbot",
  description:
    "Deletes the chatbot, its knowledge entries and its look-up tools (with their credentials). Its conversations stay readable; new messages to them are refused (409), and no new conversation can start with it (404).",
  tags: ["Management: chatbots"],
  auth: "manage",
  access: "admin",
  status: 204,
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => {
  await deleteChatbot(ctx, caller.organizationId, path.chatbot_id);
  return { body: undefined };
});
