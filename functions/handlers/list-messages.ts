/** GET /api/conversation/{conversation_id}/messages — a conversation's history, paginated (CONTRACT.md §7). */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { listMessages } from "#functions/domain/history";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { isoTimestamp, uuid } from "#functions/http/schemas";
import { pydanticIssue } from "#functions/http/validation";

export const historyLimits = { defaultPageSize: 20, maxPageSize: 100, cursorLength: 200 } as const;

const path = z.object({ conversation_id: uuid("The conversation whose messages to list.") });

/** Query strings arrive as text; `limit` is parsed here so a bad value gets Pydantic's `int_parsing`. */
const limit = z.pipe(
  z.optional(
    z
      .string()
      .check(
        z.describe(
          `Messages per page, 1–${historyLimits.maxPageSize} (default ${historyLimits.defaultPageSize}).`,
        ),
      ),
  ),
  z.transform((value: string | undefined, ctx) => {
    if (value === undefined) return historyLimits.defaultPageSize;
    const parsed = /^\s*[+-]?\d+\s*$/.test(value) ? Number(value) : Number.NaN;
    if (Number.isNaN(parsed)) {
      ctx.issues.push({
        code: "custom",
        input: value,
        message: "not an integer",
        params: pydanticIssue(
          "int_parsing",
          "Input should be a valid integer, unable to parse string as an integer",
        ),
      });
      return z.NEVER;
    }
    if (parsed < 1 || parsed > historyLimits.maxPageSize) {
      const tooSmall = parsed < 1;
      ctx.issues.push({
        code: "custom",
        input: value,
        message: "out of range",
        params: tooSmall
          ? pydanticIssue("greater_than_equal", "Input should be greater than or equal to 1", { ge: 1 })
          : pydanticIssue(
              "less_than_equal",
              `Input should be less than or equal to ${historyLimits.maxPageSize}`,
              {
                le: historyLimits.maxPageSize,
              },
            ),
      });
      return z.NEVER;
    }
    return parsed;
  }),
);

const query = z.object({
  limit,
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

const historyMessage = z.object({
  message_id: z.string(),
  role: z.enum(["user", "assistant"]),
  content: z.string(),
  attachments: z.array(storedAttachment),
  created_at: isoTimestamp("When the message was stored"),
});

const response = z.object({
  conversation_id: z.string(),
  messages: z.array(historyMessage).check(z.describe("Oldest first.")),
  has_more: z.boolean(),
  next_cursor: z.nullable(z.string()),
});

export const contract = {
  operationId: "listMessages",
  summary: "List a conversation's messages",
  description:
    "The visitor's and the chatbot's messages of one conversation, oldest first, a page at a time.",
  tags: ["Messages"],
  auth: "apiKey",
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
    limit: query.limit,
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  });
  return {
    body: {
      conversation_id: page.conversationId,
      messages: page.messages.map((message) => ({
        message_id: message.messageId,
        role: message.role,
        content: message.content,
        attachments: message.attachments,
        created_at: message.createdAt,
      })),
      has_more: page.nextCursor !== null,
      next_cursor: page.nextCursor,
    },
  };
});
