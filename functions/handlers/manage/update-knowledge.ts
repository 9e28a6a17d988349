/** PATCH /manage/chatbots/{chatbot_id}/knowledge/{entry_id} — replaces an entry's texts. */

import * as z from "zod/mini";
import { updateKnowledgeEntry } from "#functions/domain/chatbots";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { knowledgeBody, knowledgeInputOf } from "#functions/http/knowledge-input";
import { chatbotIdParameter, entryIdParameter } from "#functions/http/manage-inputs";
import { knowledgeView, toKnowledgeView } from "#functions/http/manage-views";

const path = z.object({ chatbot_id: chatbotIdParameter, entry_id: entryIdParameter });
const body = knowledgeBody;
const response = knowledgeView;

export const contract = {
  operationId: "manageUpdateKnowledge",
  summary: "Change a knowledge entry",
  description: "Replaces the entry with the texts sent (its id and creation time stay).",
  tags: ["Management: knowledge"],
  auth: "manage",
  access: "admin",
  path,
  body,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path, body }) => ({
  body: toKnowledgeView(
    await updateKnowledgeEntry(ctx, {
      organizationId: caller.organizationId,
      chatbotId: path.chatbot_id,
      entryId: path.entry_id,
      entry: knowledgeInputOf(body),
    }),
  ),
}));
