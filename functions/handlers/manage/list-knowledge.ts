/** GET /manage/chatbots/{chatbot_id}/knowledge — what the scripted engine answers from. */

import * as z from "zod/mini";
import { listKnowledgeEntries } from "#functions/domain/chatbots";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter } from "#functions/http/manage-inputs";
import { knowledgeView, toKnowledgeView } from "#functions/http/manage-views";

const path = z.object({ chatbot_id: chatbotIdParameter });
const response = z.object({ entries: z.array(knowledgeView) });

export const contract = {
  operationId: "manageListKnowledge",
  summary: "List knowledge entries",
  description: "A chatbot's question/answer pairs and text snippets (at most 500).",
  tags: ["Management: knowledge"],
  auth: "manage",
  access: "viewer",
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => ({
  body: {
    entries: (await listKnowledgeEntries(ctx, caller.organizationId, path.chatbot_id))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.entryId.localeCompare(b.entryId))
      .map(toKnowledgeView),
  },
}));
