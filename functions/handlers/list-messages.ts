/** GET /api/conversation/{conversation_id}/messages — a conversation's history, paginated. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { listMessages } from "#functions/domain/history";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { ratingView, toRatingView } from "#functions/http/conversation-view";
import { feedbackView, messageSources } from "#functions/http/message-schemas";
import { toPublicMessage } from "#functions/http/message-view";
import { isoTimestamp, uuid } from "#functions/http/schemas";

export const historyLimits = { defaultPageSize: 20, maxPageSize: 100, cursorLength: 200 } as const;

const path = z.object({ conversation_id: uuid("The conversation whose messages to list.") });

/** Query values arrive as text; `limit` is validated as the integer it stands for (http/parameters.ts). */
const query = z.object({
  limit: z._default(
    z
      .int()
      .check(
        z.gte(1),
        z.lte(historyLimits.maxPageSize),
        z.describe(
          `Messages per page, 1–${historyLimits.maxPageSize} (default ${historyLimits.defaultPageSize}).`,
        ),
      ),
    historyLimits.defaultPageSize,
  ),
  cursor: z.optional(
    z
      .string()
      .check(z.maxLength(historyLimits.cursorLength), z.describe("`next_cursor` of the previous page.")),
  ),
});

const storedAttachment = z.object({
  type: z.literal("image"),
  url: z.optional(z.string().check(z.describe("The image's URL, for images sent by URL."))),
  media_type: z.optional(z.string()),
  sha256: z.optional(
    z.string().check(z.describe("Images sent as data are kept as a reference: their SHA-256…")),
  ),
  size: z.optional(z.number().check(z.describe("…and size in bytes, not their bytes."))),
});

const statusChange = z
  .object({
    from: z.enum(["open", "handoff", "closed"]),
    to: z.enum(["open", "handoff", "closed"]),
    cause: z
      .enum(["client", "visitor", "engine", "agent", "inactivity"])
      .check(
        z.describe(
          "client: an API call; visitor: the visitor asked for a person; engine: the chatbot's model decided; agent: a person; inactivity: the chatbot's timeout.",
        ),
      ),
  })
  .check(z.describe("System messages: the status change they record."));

const historyMessage = z.object({
  message_id: z.string(),
  role: z
    .enum(["user", "assistant", "agent", "system"])
    .check(
      z.describe(
        "user: the visitor; assistant: the chatbot; agent: a person of the organization; system: a status change.",
      ),
    ),
  content: z.string(),
  attachments: z.array(storedAttachment),
  created_at: isoTimestamp("When the message was stored"),
  agent_name: z.optional(z.string().check(z.describe("Agent messages: the person's display name."))),
  status_change: z.optional(statusChange),
  sources: messageSources,
  feedback: z.nullable(feedbackView),
});

const response = z.object({
  conversation_id: z.string(),
  rating: z.nullable(ratingView),
  messages: z.array(historyMessage).check(z.describe("Oldest first.")),
  has_more: z.boolean(),
  next_cursor: z.nullable(z.string()),
});

export const contract = {
  operationId: "listMessages",
  summary: "List a conversation's messages",
  description:
    "The messages of one conversation (the visitor's, the chatbot's, people's replies and status changes), oldest first, a page at a time.",
  tags: ["Messages"],
  auth: "apiKey",
  widget: "requests",
  path,
  query,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", undefined, typeof query, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path, query }) => {
  const page = await listMessages(ctx, {
    organizationId: caller.organizationId,
    conversationId: path.conversation_id,
    ...(caller.visitor ? { visitor: caller.visitor } : {}),
    limit: query.limit,
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  });
  return {
    body: {
      conversation_id: page.conversationId,
      rating: toRatingView(page.conversation),
      messages: page.messages.map(toPublicMessage),
      has_more: page.nextCursor !== null,
      next_cursor: page.nextCursor,
    },
  };
});
