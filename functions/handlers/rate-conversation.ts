/** POST /api/conversation/{conversation_id}/rating — the visitor's satisfaction with a conversation, 1–5. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { feedbackLimits, rateConversation } from "#functions/domain/feedback";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { ratingView, toRatingView } from "#functions/http/conversation-view";
import { uuid } from "#functions/http/schemas";

const path = z.object({ conversation_id: uuid("The conversation to rate.") });
const body = z.object({
  score: z
    .int()
    .check(
      z.gte(feedbackLimits.minScore),
      z.lte(feedbackLimits.maxScore),
      z.describe("1 (very unhappy) to 5 (very happy)."),
    ),
  comment: z.optional(
    z
      .string()
      .check(
        z.maxLength(feedbackLimits.commentLength),
        z.describe("What the visitor said (shown to the organization's people)."),
      ),
  ),
});
const response = z.extend(ratingView, { conversation_id: z.string() });

export const contract = {
  operationId: "rateConversation",
  summary: "Rate a conversation",
  description:
    "The visitor's satisfaction with the conversation, 1–5, with an optional comment (the website widget asks when a conversation ends). Rating again replaces it; any status, closed included.",
  tags: ["Feedback"],
  auth: "apiKey",
  path,
  body,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", typeof body, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path, body }) => {
  const { conversation } = await rateConversation(ctx, {
    organizationId: caller.organizationId,
    conversationId: path.conversation_id,
    score: body.score,
    ...(body.comment ? { comment: body.comment } : {}),
  });
  const rating = toRatingView(conversation);
  if (!rating) throw new Error("a rated conversation without its rating");
  return { body: { conversation_id: conversation.conversationId, ...rating } };
});
