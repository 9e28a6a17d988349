/** POST /manage/conversations/{conversation_id}/reply — a person's reply to the visitor (role `agent`). */

import * as z from "zod/mini";
import { withContact } from "#functions/domain/contacts";
import { contextFromEnvironment } from "#functions/domain/context";
import { replyAsAgent } from "#functions/domain/conversation-states";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { actingAgent, asManagement } from "#functions/http/conversation-agent";
import { messageLimits } from "#functions/http/limits";
import { conversationIdParameter } from "#functions/http/manage-inputs";
import { conversationView, toConversationView } from "#functions/http/manage-views";
import { isoTimestamp } from "#functions/http/schemas";

const path = z.object({ conversation_id: conversationIdParameter });
const body = z.object({
  message: z
    .string()
    .check(
      z.minLength(1),
      z.maxLength(messageLimits.textLength),
      z.describe("The reply's text, shown to the visitor."),
    ),
  display_name: z.optional(
    z
      .string()
      .check(
        z.minLength(1),
        z.maxLength(120),
        z.describe(
          "Manage keys only: the name shown on the reply (default `Support team`). People always reply under their own display name.",
        ),
      ),
  ),
});
const response = z.object({
  conversation: conversationView,
  message: z.object({
    message_id: z.string(),
    role: z.literal("agent"),
    content: z.string(),
    agent_name: z.string(),
    created_at: isoTimestamp("When the reply was stored"),
  }),
});

export const contract = {
  operationId: "manageReplyToConversation",
  summary: "Reply to the visitor as a person",
  description:
    "Stores a reply with role `agent` and the person's display name. In `open`, replying takes the conversation over first (it moves to `handoff`, so the chatbot stops answering over the person); a closed conversation is a 409 `conflict`.",
  tags: ["Management: conversations"],
  auth: "manage",
  access: "admin",
  path,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path, body }) => {
  const outcome = await asManagement(
    replyAsAgent(ctx, {
      organizationId: caller.organizationId,
      conversationId: path.conversation_id,
      text: body.message,
      agent: await actingAgent(ctx, caller, body.display_name),
    }),
  );
  const reply = outcome.messages.at(-1);
  if (!reply) throw new Error("an agent reply wrote no message");
  return {
    body: {
      conversation: toConversationView(await withContact(ctx, outcome.conversation)),
      message: {
        message_id: reply.messageId,
        role: "agent" as const,
        content: reply.content,
        agent_name: reply.authorName ?? "",
        created_at: reply.createdAt,
      },
    },
  };
});
