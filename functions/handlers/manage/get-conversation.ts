/** GET /manage/conversations/{conversation_id} — a conversation with its transcript, a page at a time. */

import * as z from "zod/mini";
import { withContact } from "#functions/domain/contacts";
import { contextFromEnvironment } from "#functions/domain/context";
import { listMessages } from "#functions/domain/history";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { conversationIdParameter } from "#functions/http/manage-inputs";
import {
  conversationStatus,
  conversationView,
  pageQuery,
  toConversationView,
} from "#functions/http/manage-views";
import { feedbackView, messageSources } from "#functions/http/message-schemas";
import { toFeedbackView, toSourceViews } from "#functions/http/message-view";
import { isoTimestamp } from "#functions/http/schemas";

const path = z.object({ conversation_id: conversationIdParameter });
const query = z.object(pageQuery);

const transcriptMessage = z.object({
  message_id: z.string(),
  role: z.enum(["user", "assistant", "agent", "system"]),
  content: z.string(),
  attachments: z.array(z.record(z.string(), z.unknown())),
  created_at: isoTimestamp("When the message was stored"),
  fallback: z.boolean().check(z.describe("An assistant message that is the fallback reply.")),
  agent_name: z.nullable(z.string().check(z.describe("Agent messages: the person's display name."))),
  status_change: z.nullable(
    z
      .object({
        from: conversationStatus,
        to: conversationStatus,
        cause: z.string(),
        actor: z.object({ kind: z.string(), id: z.nullable(z.string()), name: z.nullable(z.string()) }),
        reason: z.nullable(z.string()),
      })
      .check(z.describe("System messages: the status change, its cause and who made it.")),
  ),
  lookups: z
    .array(
      z.object({
        tool_id: z.string(),
        tool_name: z.string(),
        platform: z.string(),
        outcome: z
          .string()
          .check(z.describe("found, not_found, auth_failed, rate_limited, timeout or unavailable")),
        latency_ms: z.int(),
        cached: z.boolean(),
      }),
    )
    .check(z.describe("The look-ups the turn made (on its first reply): never values or found data.")),
  sources: messageSources,
  feedback: z.nullable(feedbackView),
});

const response = z.extend(conversationView, {
  messages: z.array(transcriptMessage).check(z.describe("The transcript, oldest first.")),
  has_more: z.boolean(),
  next_cursor: z.nullable(z.string()),
});

export const contract = {
  operationId: "manageGetConversation",
  summary: "Read a conversation",
  description:
    "The conversation and a page of its transcript (oldest first; pass `next_cursor` for the rest).",
  tags: ["Management: conversations"],
  auth: "manage",
  access: "viewer",
  path,
  query,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, typeof query, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path, query }) => {
  const page = await listMessages(ctx, {
    organizationId: caller.organizationId,
    conversationId: path.conversation_id,
    limit: query.limit,
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  });
  return {
    body: {
      ...toConversationView(await withContact(ctx, page.conversation)),
      messages: page.messages.map((message) => ({
        message_id: message.messageId,
        role: message.role,
        content: message.content,
        attachments: message.attachments,
        created_at: message.createdAt,
        fallback: message.fallback === true,
        agent_name: message.authorName ?? null,
        status_change: message.transition
          ? {
              from: message.transition.from,
              to: message.transition.to,
              cause: message.transition.cause,
              actor: {
                kind: message.transition.actor.kind,
                id: message.transition.actor.id ?? null,
                name: message.transition.actor.name ?? null,
              },
              reason: message.transition.reason ?? null,
            }
          : null,
        lookups: (message.lookups ?? []).map((lookup) => ({
          tool_id: lookup.toolId,
          tool_name: lookup.toolName,
          platform: lookup.platform,
          outcome: lookup.outcome,
          latency_ms: lookup.latencyMs,
          cached: lookup.cached === true,
        })),
        sources: toSourceViews(message),
        feedback: toFeedbackView(message),
      })),
      has_more: page.nextCursor !== null,
      next_cursor: page.nextCursor,
    },
  };
});
