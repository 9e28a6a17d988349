/**
 * A message as clients see it, in one shape wherever they meet it: the public history
 * (GET /api/conversation/{id}/messages) and the `message.created` webhook event; a turn's replies
 * (POST /api/message, the stream's `message.end`) in the reply shape. Internal fields (engine, usage,
 * look-ups, the actor of a change) stay out.
 */
import type { TransitionCause } from "#functions/domain/conversation-states";
import type { ConversationStatus, MessageRecord, StoredAttachment } from "#functions/store/items";

/** A knowledge source a reply drew on, as clients see it. */
export interface SourceView {
  source_id: string;
  title: string;
  url: string | null;
}

export const toSourceViews = (message: Pick<MessageRecord, "sources">): SourceView[] =>
  (message.sources ?? []).map((source) => ({
    source_id: source.sourceId,
    title: source.title,
    url: source.url ?? null,
  }));

/** A reply of a turn as POST /api/message and the stream's `message.end` answer it. */
export interface ReplyView {
  message_id: string;
  role: "assistant";
  content: string;
  created_at: string;
  sources: SourceView[];
}

export const toReplyView = (message: MessageRecord): ReplyView => ({
  message_id: message.messageId,
  role: "assistant",
  content: message.content,
  created_at: message.createdAt,
  sources: toSourceViews(message),
});

export interface PublicMessage {
  message_id: string;
  role: MessageRecord["role"];
  content: string;
  attachments: StoredAttachment[];
  created_at: string;
  /** The knowledge sources the message drew on (replies only; [] otherwise). */
  sources: SourceView[];
  /** Agent messages: the person's display name. */
  agent_name?: string;
  /** System messages: the status change they record. */
  status_change?: { from: ConversationStatus; to: ConversationStatus; cause: TransitionCause };
  /** The visitor's feedback on a chatbot reply (null: none given; other roles: null). */
  feedback: FeedbackView | null;
}

/** A reply's feedback as clients see it. */
export interface FeedbackView {
  rating: "up" | "down";
  comment: string | null;
  given_at: string;
}

export const toFeedbackView = (message: Pick<MessageRecord, "feedback">): FeedbackView | null =>
  message.feedback
    ? {
        rating: message.feedback.rating,
        comment: message.feedback.comment ?? null,
        given_at: message.feedback.givenAt,
      }
    : null;

export const toPublicMessage = (message: MessageRecord): PublicMessage => ({
  message_id: message.messageId,
  role: message.role,
  content: message.content,
  attachments: message.attachments ?? [],
  created_at: message.createdAt,
  sources: toSourceViews(message),
  feedback: toFeedbackView(message),
  ...(message.authorName === undefined ? {} : { agent_name: message.authorName }),
  ...(message.transition
    ? {
        status_change: {
          from: message.transition.from,
          to: message.transition.to,
          cause: message.transition.cause as TransitionCause,
        },
      }
    : {}),
});
