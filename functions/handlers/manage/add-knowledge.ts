/** POST /manage/chatbots/{chatbot_id}/knowledge — adds a question/answer pair or a text snippet. */

import * as z from "zod/mini";
import { addKnowledgeEntry } from "#functions/domain/chatbots";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { knowledgeBody, knowledgeInputOf } from "#functions/http/knowledge-input";
import { chatbotIdParameter } from "#functions/http/manage-inputs";
import { knowledgeView, toKnowledgeView } from "#functions/http/manage-views";

const path = z.object({ chatbot_id: chatbotIdParameter });
const body = knowledgeBody;
const response = knowledgeView;

export const contract = {
  operationId: "manageAddKnowledge",
  summary: "Add a knowledge entry",
  description: "Adds a question/answer pair (`kind: qa`) or a text snippet (`kind: snippet`) to a chatbot.",
  tags: ["Management: knowledge"],
  auth: "manage",
  access: "admin",
  status: 201,
  path,
  body,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path, body }) => ({
  body: toKnowledgeView(
    await addKnowledgeEntry(ctx, {
      organizationId: caller.organizationId,
      chatbotId: path.chatbot_id,
      entry: knowledgeInputOf(body),
    }),
  ),
}));
