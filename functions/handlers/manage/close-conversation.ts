/** POST /manage/conversations/{conversation_id}/close — closes a conversation; repeating it is harmless. */

import * as z from "zod/mini";
import { withContact } from "#functions/domain/contacts";
import { contextFromEnvironment } from "#functions/domain/context";
import { closeConversation } from "#functions/domain/conversations";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { actingAgent } from "#functions/http/conversation-agent";
import { conversationIdParameter } from "#functions/http/manage-inputs";
import { conversationView, toConversationView } from "#functions/http/manage-views";

const path = z.object({ conversation_id: conversationIdParameter });
const response = conversationView;

export const contract = {
  operationId: "manageCloseConversation",
  summary: "Close a conversation",
  description:
    "Closes the conversation (from `open` or `handoff`): further visitor messages are refused (409). Closing a closed conversation answers the same.",
  tags: ["Management: conversations"],
  auth: "manage",
  access: "admin",
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => ({
  body: toConversationView(
    await withContact(
      ctx,
      await closeConversation(ctx, {
        organizationId: caller.organizationId,
        conversationId: path.conversation_id,
        cause: "agent",
        actor: await actingAgent(ctx, caller),
      }),
    ),
  ),
}));
