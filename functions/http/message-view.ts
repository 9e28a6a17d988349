/**
 * A message as clients see it, in one shape wherever they meet it: the public history
 * (GET /api/conversation/{id}/messages) and the `message.created` webhook event. Internal fields
 * (engine, usage, look-ups, the actor of a change) stay out.
 */
import type { TransitionCause } from "#functions/domain/conversation-states";
import type { ConversationStatus, MessageRecord, StoredAttachment } from "#functions/store/items";

export interface PublicMessage {
  message_id: string;
  role: MessageRecord["role"];
  content: string;
  attachments: StoredAttachment[];
  created_at: string;
  /** Agent messages: the person's display name. */
  agent_name?: string;
  /** System messages: the status change they record. */
  status_change?: { from: ConversationStatus; to: ConversationStatus; cause: TransitionCause };
}

export const toPublicMessage = (message: MessageRecord): PublicMessage => ({
  message_id: message.messageId,
  role: message.role,
  content: message.content,
  attachments: message.attachments ?? [],
  created_at: message.createdAt,
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
