/** POST /manage/conversations/{conversation_id}/hand-back — the person hands the conversation back to the chatbot (handoff → open). */

import * as z from "zod/mini";
import { withContact } from "#functions/domain/contacts";
import { contextFromEnvironment } from "#functions/domain/context";
import { changeStatus } from "#functions/domain/conversation-states";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { actingAgent, asManagement } from "#functions/http/conversation-agent";
import { conversationIdParameter } from "#functions/http/manage-inputs";
import { conversationView, toConversationView } from "#functions/http/manage-views";

const path = z.object({ conversation_id: conversationIdParameter });
const response = conversationView;

export const contract = {
  operationId: "manageHandBackConversation",
  summary: "Hand a conversation back to the chatbot",
  description:
    "Moves the conversation from `handoff` back to `open`: the chatbot answers again. Handing back an open conversation answers the same; a closed one is a 409 `conflict`.",
  tags: ["Management: conversations"],
  auth: "manage",
  access: "admin",
  path,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => {
  const outcome = await asManagement(
    changeStatus(ctx, {
      organizationId: caller.organizationId,
      conversationId: path.conversation_id,
      to: "open",
      cause: "agent",
      actor: await actingAgent(ctx, caller),
    }),
  );
  return { body: toConversationView(await withContact(ctx, outcome.conversation)) };
});
