/** DELETE /manage/chatbots/{chatbot_id}/knowledge/{entry_id} — removes a knowledge entry. */

import * as z from "zod/mini";
import { removeKnowledgeEntry } from "#functions/domain/chatbots";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter, entryIdParameter } from "#functions/http/manage-inputs";

const path = z.object({ chatbot_id: chatbotIdParameter, entry_id: entryIdParameter });
const response = z.never();

export const contract = {
  operationId: "manageRemoveKnowledge",
  summary: "Remove a knowledge entry",
  description: "Removes the entry; the chatbot no longer answers from it.",
  tags: ["Management: knowledge"],
  auth: "manage",
  access: "admin",
  status: 204,
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => {
  await removeKnowledgeEntry(ctx, {
    organizationId: caller.organizationId,
    chatbotId: path.chatbot_id,
    entryId: path.entry_id,
  });
  return { body: undefined };
});
