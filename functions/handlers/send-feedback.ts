/** POST /api/message/{message_id}/feedback — the visitor's thumbs up or down on a chatbot reply. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { feedbackLimits, giveFeedback } from "#functions/domain/feedback";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { feedbackView } from "#functions/http/message-schemas";
import { toFeedbackView } from "#functions/http/message-view";
import { uuid } from "#functions/http/schemas";

const path = z.object({ message_id: uuid("The chatbot reply (a `message_id` of its answer or history).") });
const body = z.object({
  rating: z.enum(["up", "down"]).check(z.describe("up: the reply helped; down: it did not.")),
  comment: z.optional(
    z
      .string()
      .check(
        z.maxLength(feedbackLimits.commentLength),
        z.describe("What the visitor said about the reply (shown to the organization's people)."),
      ),
  ),
});
const response = z.extend(feedbackView, {
  message_id: z.string(),
  conversation_id: z.string(),
});

export const contract = {
  operationId: "sendFeedback",
  summary: "Give feedback on a reply",
  description:
    "The visitor's thumbs up or down (and an optional comment) on one of the chatbot's replies. Sending again replaces it. Only chatbot replies take feedback: any other message, or a message of another organization, is 404 Message not found.",
  tags: ["Feedback"],
  auth: "apiKey",
  widget: "requests",
  path,
  body,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", typeof body, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path, body }) => {
  const { message, feedback } = await giveFeedback(ctx, {
    organizationId: caller.organizationId,
    messageId: path.message_id,
    rating: body.rating,
    ...(body.comment ? { comment: body.comment } : {}),
    // A visitor's token: a reply of its own contact's conversation with its chatbot only.
    ...(caller.visitor ? { visitor: caller.visitor } : {}),
  });
  const view = toFeedbackView({ feedback });
  return {
    body: {
      message_id: message.messageId,
      conversation_id: message.conversationId,
      rating: feedback.rating,
      comment: view?.comment ?? null,
      given_at: feedback.givenAt,
    },
  };
});
