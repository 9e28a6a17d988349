/**
 * Visitors' feedback: thumbs on a chatbot reply (POST /api/message/{message_id}/feedback) and a
 * 1–5 rating of the conversation (POST /api/conversation/{conversation_id}/rating). Sending again
 * replaces the earlier one.
 *
 * Feedback is kept on the reply's message item and counted on its conversation (thumbs up and
 * down, and, on a reply of the latest answer, the thumb that decides the outcome: domain/outcomes.ts)
 * in one transaction, conditioned on what was read; a rating is kept on the conversation. The
 * table's stream then carries both to the analytics counters (domain/analytics.ts) and to webhooks
 * (`message.feedback`, `conversation.rated`). A write after the outcome's window first freezes the
 * outcome as it was.
 *
 * Who may: an API key of the organization, or a visitor's token on its own conversation (its
 * contact and chatbot); anything else is answered as an unknown message or conversation.
 */
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { GetCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { readConversationRecord } from "#functions/domain/conversation-states";
import { dueFreeze, freezeClauses } from "#functions/domain/outcomes";
import { AppError } from "#functions/errors";
import type { TransactAction } from "#functions/store/conditions";
import {
  type ConversationRating,
  type ConversationRecord,
  type FeedbackRating,
  keys,
  type MessageFeedback,
  type MessageRecord,
  records,
} from "#functions/store/items";

export const feedbackLimits = { commentLength: 2_000, minScore: 1, maxScore: 5 } as const;

/** A visitor's access token speaks for one contact on one chatbot. */
export interface VisitorScope {
  contactId: string;
  chatbotId: string;
}

const visible = (conversation: ConversationRecord, visitor: VisitorScope | undefined): boolean =>
  !visitor || (conversation.contactId === visitor.contactId && conversation.chatbotId === visitor.chatbotId);

export interface FeedbackInput {
  organizationId: string;
  messageId: string;
  rating: FeedbackRating;
  comment?: string;
  visitor?: VisitorScope;
}

export interface FeedbackResult {
  message: MessageRecord;
  feedback: MessageFeedback;
}

/** Optimistic attempts when the reply or its conversation changes between the read and the write. */
const ATTEMPTS = 5;

/** Gives (or replaces) the feedback on a chatbot reply. */
export async function giveFeedback(ctx: DomainContext, input: FeedbackInput): Promise<FeedbackResult> {
  const reference = await ctx.db.client.send(
    new GetCommand({
      TableName: ctx.db.tableName,
      Key: keys.replyReference(input.organizationId, input.messageId),
    }),
  );
  if (!reference.Item) throw new AppError("message_not_found");
  const where = records.replyReference(reference.Item);
  for (let attempt = 1; ; attempt += 1) {
    const [messageItem, conversation] = await Promise.all([
      ctx.db.client.send(
        new GetCommand({
          TableName: ctx.db.tableName,
          Key: keys.message(input.organizationId, where.conversationId, where.turn, where.index),
          ConsistentRead: true,
        }),
      ),
      readConversationRecord(ctx, input.organizationId, where.conversationId).catch((error: unknown) => {
        if (error instanceof AppError && error.code === "conversation_not_found") return undefined;
        throw error;
      }),
    ]);
    const message = messageItem.Item ? records.message(messageItem.Item) : undefined;
    if (message?.role !== "assistant" || !conversation || !visible(conversation, input.visitor)) {
      throw new AppError("message_not_found");
    }
    const now = ctx.clock();
    const feedback: MessageFeedback = {
      rating: input.rating,
      ...(input.comment ? { comment: input.comment } : {}),
      givenAt: isoTime(now),
    };
    try {
      await writeFeedback(ctx, input.organizationId, conversation, message, feedback, now);
      return { message: { ...message, feedback }, feedback };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException) || attempt >= ATTEMPTS) throw error;
      // The reply's feedback or the conversation changed since they were read: read again.
    }
  }
}

async function writeFeedback(
  ctx: DomainContext,
  organizationId: string,
  conversation: ConversationRecord,
  message: MessageRecord,
  feedback: MessageFeedback,
  now: number,
): Promise<void> {
  const before = message.feedback?.rating;
  const up = (feedback.rating === "up" ? 1 : 0) - (before === "up" ? 1 : 0);
  const down = (feedback.rating === "down" ? 1 : 0) - (before === "down" ? 1 : 0);
  // Only a thumb on the latest answer decides the outcome.
  const latest = conversation.lastAnswerTurn === message.turn;
  const freeze = freezeClauses(dueFreeze(conversation, now));
  const sets = [...(latest ? ["lastAnswerFeedback = :rating"] : []), ...freeze.set];
  const adds = [...(up !== 0 ? ["feedbackUp :up"] : []), ...(down !== 0 ? ["feedbackDown :down"] : [])];
  const conversationKey = keys.conversation(organizationId, conversation.conversationId);
  // The answer and the turn read are still the latest: the outcome's facts are as read.
  const unchanged = "attribute_exists(PK) AND turns = :turns";
  const conversationChange: TransactAction =
    sets.length === 0 && adds.length === 0
      ? {
          ConditionCheck: {
            TableName: ctx.db.tableName,
            Key: conversationKey,
            ConditionExpression: unchanged,
            ExpressionAttributeValues: { ":turns": conversation.turns },
          },
        }
      : {
          Update: {
            TableName: ctx.db.tableName,
            Key: conversationKey,
            UpdateExpression: [
              sets.length > 0 ? `SET ${sets.join(", ")}` : "",
              adds.length > 0 ? `ADD ${adds.join(", ")}` : "",
            ]
              .filter(Boolean)
              .join(" "),
            ConditionExpression: unchanged,
            ExpressionAttributeValues: {
              ":turns": conversation.turns,
              ...(latest ? { ":rating": feedback.rating } : {}),
              ...(up !== 0 ? { ":up": up } : {}),
              ...(down !== 0 ? { ":down": down } : {}),
              ...freeze.values,
            },
          },
        };
  await ctx.db.client.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Update: {
            TableName: ctx.db.tableName,
            Key: keys.message(organizationId, message.conversationId, message.turn, message.index),
            UpdateExpression: "SET feedback = :feedback",
            // The feedback read is still the one there, so the counts move from it.
            ConditionExpression: message.feedback
              ? "feedback.givenAt = :seenAt"
              : "attribute_exists(PK) AND attribute_not_exists(feedback)",
            ExpressionAttributeValues: {
              ":feedback": feedback,
              ...(message.feedback ? { ":seenAt": message.feedback.givenAt } : {}),
            },
          },
        },
        conversationChange,
      ],
    }),
  );
}

export interface RatingInput {
  organizationId: string;
  conversationId: string;
  score: number;
  comment?: string;
  visitor?: VisitorScope;
}

/** Rates (or rates again) a conversation: the visitor's satisfaction with it, 1–5. */
export async function rateConversation(
  ctx: DomainContext,
  input: RatingInput,
): Promise<{ conversation: ConversationRecord; rating: ConversationRating }> {
  for (let attempt = 1; ; attempt += 1) {
    const conversation = await readConversationRecord(ctx, input.organizationId, input.conversationId);
    if (!visible(conversation, input.visitor)) throw new AppError("conversation_not_found");
    const now = ctx.clock();
    const rating: ConversationRating = {
      score: input.score,
      ...(input.comment ? { comment: input.comment } : {}),
      ratedAt: isoTime(now),
    };
    const freeze = freezeClauses(dueFreeze(conversation, now));
    try {
      await ctx.db.client.send(
        new UpdateCommand({
          TableName: ctx.db.tableName,
          Key: keys.conversation(input.organizationId, input.conversationId),
          UpdateExpression: `SET rating = :rating${freeze.set.map((clause) => `, ${clause}`).join("")}`,
          ConditionExpression: "attribute_exists(PK) AND turns = :turns",
          ExpressionAttributeValues: { ":rating": rating, ":turns": conversation.turns, ...freeze.values },
        }),
      );
      return { conversation: { ...conversation, rating }, rating };
    } catch (error) {
      const refused = (error as { name?: string }).name === "ConditionalCheckFailedException";
      if (!refused || attempt >= ATTEMPTS) throw error;
    }
  }
}
