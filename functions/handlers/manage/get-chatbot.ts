/** GET /manage/chatbots/{chatbot_id} — one chatbot's settings. */

import * as z from "zod/mini";
import { getChatbot } from "#functions/domain/chatbots";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter } from "#functions/http/manage-inputs";
import { chatbotView, toChatbotView } from "#functions/http/manage-views";

const path = z.object({ chatbot_id: chatbotIdParameter });
const response = chatbotView;

export const contract = {
  operationId: "manageGetChatbot",
  summary: "Read a chatbot",
  description: "One of the organization's chatbots and its settings.",
  tags: ["Management: chatbots"],
  auth: "manage",
  access: "viewer",
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => ({
  body: toChatbotView(await getChatbot(ctx, caller.organizationId, path.chatbot_id)),
}));
