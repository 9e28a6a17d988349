/** GET /manage/chatbots/{chatbot_id}/tools — a chatbot's look-up tools (credentials masked). */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { listTools } from "#functions/domain/tools";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter } from "#functions/http/manage-inputs";
import { toolView, toToolView } from "#functions/http/manage-views";

const path = z.object({ chatbot_id: chatbotIdParameter });
const response = z.object({ tools: z.array(toolView) });

export const contract = {
  operationId: "manageListTools",
  summary: "List a chatbot's look-up tools",
  description: "The chatbot's look-up tools, oldest first. Credentials appear only as masked hints.",
  tags: ["Management: tools"],
  auth: "manage",
  access: "viewer",
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => ({
  body: { tools: (await listTools(ctx, caller.organizationId, path.chatbot_id)).map(toToolView) },
}));
