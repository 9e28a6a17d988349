/**
 * The request of a message turn, shared by POST /api/message and POST /api/message/stream (the same
 * body, validated the same way), and the reply message both answer with.
 */
import * as z from "zod/mini";
import type { AttachmentInput } from "#functions/domain/messages";
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

export const messageBody = z
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

export const sourceRef = z
  .object({
    source_id: z.string(),
    title: z.string(),
    url: z.nullable(z.string()),
  })
  .check(z.describe("A knowledge source of the chatbot (a document, web page, Q&A or text)."));

export const messageSources = z
  .array(sourceRef)
  .check(z.describe("The knowledge sources the reply drew on, each once; [] when none."));

/** A reply's feedback from the visitor (POST /api/message/{message_id}/feedback). */
export const feedbackView = z.object({
  rating: z.enum(["up", "down"]),
  comment: z.nullable(z.string()),
  given_at: isoTimestamp("When the visitor gave it (the latest replaces earlier ones)"),
});

export const replyMessage = z.object({
  message_id: z.string(),
  role: z.literal("assistant"),
  content: z.string(),
  created_at: isoTimestamp("When the reply was made"),
  sources: messageSources,
});

/** The validated body's attachments as the turn takes them. */
export function attachmentInputs(body: z.output<typeof messageBody>): AttachmentInput[] {
  return (body.attachments ?? []).map((item) =>
    item.url !== undefined
      ? { type: "image" as const, url: item.url }
      : { type: "image" as const, data: item.data ?? "", media_type: item.media_type ?? "image/png" },
  );
}
