/**
 * A conversation as the public API shows it (GET /api/conversation/{id}, the listing, and the
 * handoff and close answers), shared by those routes and published in the OpenAPI document.
 */
import * as z from "zod/mini";
import type { ConversationWithContact } from "#functions/domain/contacts";
import { systemClock } from "#functions/domain/context";
import type { ConversationFilters } from "#functions/domain/conversation-listing";
import { handoffReasons, OUTCOME_WINDOW_MS, outcomeAt, outcomes } from "#functions/domain/outcomes";
import { contactSummaryView, toContactSummaryView } from "#functions/http/contact-view";
import { isoTimestamp } from "#functions/http/schemas";
import type { ConversationRecord, ConversationStatus } from "#functions/store/items";

export const publicConversationStatus = z.enum(["open", "handoff", "closed"]);

/** The two counts every conversation answer carries, one meaning each (docs/api.md "Message counts"). */
export const messageCounts = {
  message_count: z
    .int()
    .check(
      z.describe(
        "Messages in the conversation's history, every role: the visitor's, the chatbot's, people's replies and status lines (what GET /api/conversation/{conversation_id}/messages lists).",
      ),
    ),
  visitor_message_count: z.int().check(z.describe("Of those, the messages the visitor sent (one per turn).")),
};

export const testMark = z
  .boolean()
  .check(
    z.describe(
      "Test traffic: started from the console's Try it (with a test key), not by a visitor. Never counted in usage.",
    ),
  );

/** A conversation's rating, as every answer shows it. */
export const ratingView = z.object({
  score: z.int().check(z.describe("1 (very unhappy) to 5 (very happy).")),
  comment: z.nullable(z.string()),
  rated_at: isoTimestamp("When the visitor rated it (the latest rating replaces earlier ones)"),
});

export const toRatingView = (
  record: Pick<ConversationRecord, "rating">,
): z.input<typeof ratingView> | null =>
  record.rating
    ? { score: record.rating.score, comment: record.rating.comment ?? null, rated_at: record.rating.ratedAt }
    : null;

/** The outcome fields every conversation answer carries (docs/api.md "Outcomes"). */
export const outcomeFields = {
  outcome: z
    .enum(outcomes)
    .check(
      z.describe(
        "What became of the conversation: resolved, handed_off (to a person), unresolved or abandoned (the visitor wrote nothing). Provisional until outcome_final.",
      ),
    ),
  outcome_final: z
    .boolean()
    .check(
      z.describe(
        `Whether the outcome is final (it never changes then): at a handoff, at the close, or ${OUTCOME_WINDOW_MS / 3_600_000} hours after the last message.`,
      ),
    ),
  outcome_final_at: isoTimestamp(
    "When the outcome became final; while provisional, when it will be unless the conversation goes on",
  ),
  handoff_reason: z.nullable(
    z
      .enum(handoffReasons)
      .check(
        z.describe(
          "Why it was handed to a person (outcome handed_off): visitor_asked, could_not_answer, tool_failed, client, agent.",
        ),
      ),
  ),
  rating: z.nullable(ratingView),
};

export const toOutcomeFields = (record: ConversationRecord, now: number = systemClock()) => {
  const view = outcomeAt(record, now);
  return {
    outcome: view.outcome,
    outcome_final: view.final,
    outcome_final_at: view.finalAt,
    handoff_reason: view.handoffReason,
    rating: toRatingView(record),
  };
};

export const toMessageCounts = (record: ConversationRecord) => ({
  message_count: record.messageCount ?? 0,
  visitor_message_count: record.visitorMessageCount ?? 0,
});

/** Where a conversation comes from: the website widget, or a client of the API. */
export const conversationChannel = z
  .enum(["api", "widget"])
  .check(z.describe("`widget`: started by a visitor in the website widget; `api`: by a client of the API."));

export const channelOf = (record: ConversationRecord): "api" | "widget" => record.channel ?? "api";

export const publicConversationView = z.object({
  conversation_id: z.string(),
  chatbot_id: z.string(),
  contact_id: z.string(),
  contact: contactSummaryView,
  external_id: z.nullable(z.string().check(z.describe("The caller's own identifier, if one was given."))),
  status: publicConversationStatus.check(
    z.describe("open: the chatbot answers; handoff: a person answers; closed: no more messages."),
  ),
  test: testMark,
  created_at: isoTimestamp("When the conversation started"),
  last_message_at: z.nullable(
    isoTimestamp("When the last message (any role) was stored; null before the first"),
  ),
  ...messageCounts,
  ...outcomeFields,
  channel: conversationChannel,
});

export const toPublicConversationView = ({
  conversation: record,
  contact,
}: ConversationWithContact): z.input<typeof publicConversationView> => ({
  conversation_id: record.conversationId,
  chatbot_id: record.chatbotId,
  contact_id: record.contactId,
  contact: toContactSummaryView(record.contactId, contact),
  external_id: record.externalId ?? null,
  status: record.status,
  test: record.test === true,
  created_at: record.createdAt,
  last_message_at:
    (record.messageCount ?? 0) > 0 ? (record.lastMessageAt ?? record.lastActivityAt ?? null) : null,
  ...toMessageCounts(record),
  ...toOutcomeFields(record),
  channel: channelOf(record),
});

/** A listing's query parameters (public or management) as the domain's filters: the ones given only. */
export function conversationFilters(query: {
  chatbot_id?: string | undefined;
  contact_id?: string | undefined;
  external_id?: string | undefined;
  status?: ConversationStatus | undefined;
  from?: string | undefined;
  to?: string | undefined;
}): ConversationFilters {
  return {
    ...(query.chatbot_id ? { chatbotId: query.chatbot_id } : {}),
    ...(query.contact_id ? { contactId: query.contact_id } : {}),
    ...(query.external_id ? { externalId: query.external_id } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.from ? { from: query.from } : {}),
    ...(query.to ? { to: query.to } : {}),
  };
}
