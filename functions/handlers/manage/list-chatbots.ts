/** GET /manage/chatbots — the organization's chatbots with their settings. */

import * as z from "zod/mini";
import { listChatbots } from "#functions/domain/chatbots";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotView, toChatbotView } from "#functions/http/manage-views";

const response = z.object({ chatbots: z.array(chatbotView).check(z.describe("Oldest first.")) });

export const contract = {
  operationId: "manageListChatbots",
  summary: "List chatbots",
  description: "The organization's chatbots and their settings.",
  tags: ["Management: chatbots"],
  auth: "manage",
  access: "viewer",
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller }) => ({
  body: { chatbots: (await listChatbots(ctx, caller.organizationId)).map(toChatbotView) },
}));
