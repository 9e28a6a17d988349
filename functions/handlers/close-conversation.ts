/** POST /api/conversation/{conversation_id}/close — closes the conversation; further messages get 409. */

import * as z from "zod/mini";
import { withContact } from "#functions/domain/contacts";
import { contextFromEnvironment } from "#functions/domain/context";
import { closeConversation } from "#functions/domain/conversations";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { publicConversationView, toPublicConversationView } from "#functions/http/conversation-view";
import { uuid } from "#functions/http/schemas";

const path = z.object({ conversation_id: uuid("The conversation to close.") });
const response = publicConversationView;

export const contract = {
  operationId: "closeConversation",
  summary: "Close a conversation",
  description:
    "Closes the conversation (from `open` or `handoff`); further messages are refused with 409. Closing a closed conversation answers the same 200.",
  tags: ["Conversations"],
  auth: "apiKey",
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => ({
  body: toPublicConversationView(
    await withContact(
      ctx,
      await closeConversation(ctx, {
        organizationId: caller.organizationId,
        conversationId: path.conversation_id,
        cause: "client",
        actor: { kind: "api_key", id: caller.keyId },
      }),
    ),
  ),
}));
