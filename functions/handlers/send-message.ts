/** POST /api/message — the visitor's message in, the chatbot's reply out (SPEC.md §4, CONTRACT.md §4). */

import * as z from "zod/mini";
import { agentServicesFromEnvironment } from "#functions/agent/services";
import { contextFromEnvironment } from "#functions/domain/context";
import { sendMessage, type TurnContext, type TurnResult } from "#functions/domain/messages";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { idempotencyMiddleware } from "#functions/http/idempotency";
import { attachmentLimits, messageLimits } from "#functions/http/limits";
import { isoTimestamp, uuid } from "#functions/http/schemas";
import { pydanticIssue } from "#functions/http/validation";

const mediaType = z.enum(["image/png", "image/jpeg", "image/gif", "image/webp"]);

const attachment = z
  .object({
    type: z.literal("image").check(z.describe("Always `image`.")),
    url: z.optional(
      z
        .url()
        .check(
          z.maxLength(attachmentLimits.urlLength),
          z.describe(
            `An https URL of the image, fetched once from a public address (at most ${attachmentLimits.fetchedImageBytes} bytes, ${attachmentLimits.fetchTimeoutMs} ms).`,
          ),
        ),
    ),
    data: z.optional(
      z
        .base64()
        .check(
          z.maxLength(attachmentLimits.inlineBase64Length),
          z.describe(
            `The image itself, base64-encoded (at most ${attachmentLimits.inlineBase64Length} characters, about ${Math.floor((attachmentLimits.inlineBase64Length * 3) / 4 / 1024)} KiB). Needs media_type. Use a URL for larger images.`,
          ),
        ),
    ),
    media_type: z.optional(mediaType.check(z.describe("Type of `data`."))),
  })
  .check(
    z.superRefine((item, ctx) => {
      if ((item.url === undefined) === (item.data === undefined)) {
        ctx.issues.push({
          code: "custom",
          input: item,
          path: [],
          message: "either url or data",
          params: pydanticIssue(
            "value_error",
            "Value error, an image attachment needs exactly one of `url` or `data`",
          ),
        });
      } else if (item.url !== undefined && !item.url.startsWith("https://")) {
        ctx.issues.push({
          code: "custom",
          input: item.url,
          path: ["url"],
          message: "https only",
          params: pydanticIssue("url_scheme", "URL scheme should be 'https'", {
            expected_schemes: "'https'",
          }),
        });
      } else if (item.data !== undefined && item.media_type === undefined) {
        ctx.issues.push({
          code: "custom",
          input: item,
          path: ["media_type"],
          message: "media_type required",
          params: pydanticIssue("missing", "Field required"),
        });
      }
    }),
  );

const body = z
  .object({
    conversation_id: uuid("Value returned by POST /api/conversation."),
    message: z
      .string()
      .check(
        z.maxLength(messageLimits.textLength),
        z.describe("Text of the visitor's message. May be empty only when attachments are sent."),
      ),
    attachments: z.optional(
      z.nullable(
        z
          .array(attachment)
          .check(z.maxLength(attachmentLimits.perMessage), z.describe("Images sent with the message.")),
      ),
    ),
  })
  .check(
    z.superRefine((value, ctx) => {
      if (value.message.trim() === "" && (value.attachments ?? []).length === 0) {
        ctx.issues.push({
          code: "custom",
          input: value.message,
          path: ["message"],
          message: "empty",
          params: pydanticIssue("string_too_short", "String should have at least 1 character", {
            min_length: 1,
          }),
        });
      }
    }),
  );

const replyMessage = z.object({
  message_id: z.string(),
  role: z.literal("assistant"),
  content: z.string(),
  created_at: isoTimestamp("When the reply was made"),
});

const response = z.object({
  conversation_id: z.string(),
  messages: z
    .array(replyMessage)
    .check(z.describe("The chatbot's reply messages for this turn, oldest first; at least one.")),
});

export const contract = {
  operationId: "sendMessage",
  summary: "Send a message",
  description:
    "Sends the visitor's message (text and images) in a conversation and returns the chatbot's reply. The message is stored before the chatbot runs; if the model or a tool fails or is slow, the reply is the chatbot's fallback text. Send an `Idempotency-Key` header to retry safely.",
  tags: ["Messages"],
  auth: "apiKey",
  idempotent: true,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", typeof body, undefined, undefined, typeof response>;

const ctx: TurnContext = Object.assign(contextFromEnvironment("turn"), {
  agent: agentServicesFromEnvironment(),
  ...(process.env.TURN_BUDGET_MS ? { turnBudgetMs: Number(process.env.TURN_BUDGET_MS) } : {}),
});

const render = (turn: TurnResult) => ({
  body: {
    conversation_id: turn.conversationId,
    messages: turn.messages.map((message) => ({
      message_id: message.messageId,
      role: "assistant" as const,
      content: message.content,
      created_at: message.createdAt,
    })),
  },
});

export const handler = apiHandler(
  contract,
  async ({ caller, body, remainingTimeMs, idempotency }) => {
    const turn = await sendMessage(ctx, {
      organizationId: caller.organizationId,
      conversationId: body.conversation_id,
      message: body.message,
      attachments: (body.attachments ?? []).map((item) =>
        item.url !== undefined
          ? { type: "image" as const, url: item.url }
          : { type: "image" as const, data: item.data ?? "", media_type: item.media_type ?? "image/png" },
      ),
      remainingTimeMs: remainingTimeMs(),
      ...(idempotency ? { fence: idempotency.fence(render) } : {}),
    });
    return render(turn);
  },
  { idempotency: (route) => idempotencyMiddleware(route, () => ctx) },
);
