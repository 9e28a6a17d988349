/** GET /api/conversation/{conversation_id} — one conversation with its status (a conversation of the caller's organization). */

import * as z from "zod/mini";
import { withContact } from "#functions/domain/contacts";
import { contextFromEnvironment } from "#functions/domain/context";
import { readConversationRecord } from "#functions/domain/conversation-states";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { publicConversationView, toPublicConversationView } from "#functions/http/conversation-view";
import { uuid } from "#functions/http/schemas";

const path = z.object({ conversation_id: uuid("The conversation to read.") });
const response = publicConversationView;

export const contract = {
  operationId: "getConversation",
  summary: "Read a conversation",
  description: "The conversation's chatbot, contact, external id, status, and message count.",
  tags: ["Conversations"],
  auth: "apiKey",
  widget: "requests",
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => ({
  body: toPublicConversationView(
    await withContact(
      ctx,
      await readConversationRecord(ctx, caller.organizationId, path.conversation_id, caller.visitor),
    ),
  ),
}));
