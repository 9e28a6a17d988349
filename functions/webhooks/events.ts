/**
 * Webhook events, derived from changes to the table's items (its stream), never emitted by the
 * request path: a turn writes what it writes anyway, and the events follow from it.
 *
 *   Conversation inserted                       → conversation.created
 *   Conversation status changed                 → conversation.handoff (to handoff),
 *                                                 conversation.resumed (handoff → open),
 *                                                 conversation.closed (to closed)
 *   Message inserted (any role)                 → message.created
 *   Message inserted with `lookups`             → one lookup.completed per look-up
 *   Message's feedback given or replaced        → message.feedback
 *   Conversation rated (or rated again)         → conversation.rated
 *
 * An event's id (the `webhook-id` every attempt carries) is a hash of the item's key and the
 * change: the insert itself, or the stream record's sequence number for a status change (a
 * conversation can be handed off twice). Processing the same stream record again, after a retried
 * batch or a replay, gives the same ids; two different changes never share one.
 */
import { createHash } from "node:crypto";
import { toPublicMessage } from "#functions/http/message-view";
import {
  type ConversationRecord,
  conversationPartitionIds,
  entities,
  type Item,
  type LookupSummary,
  records,
} from "#functions/store/items";

export const webhookEventTypes = [
  "conversation.created",
  "message.created",
  "conversation.handoff",
  "conversation.resumed",
  "conversation.closed",
  "lookup.completed",
  "message.feedback",
  "conversation.rated",
] as const;

export type WebhookEventType = (typeof webhookEventTypes)[number];

/** One change to one item, as a stream record tells it (images already unmarshalled). */
export interface ItemChange {
  eventName: "INSERT" | "MODIFY" | "REMOVE";
  keys: { PK: string; SK: string };
  newImage?: Item;
  oldImage?: Item;
  sequenceNumber: string;
  /** Epoch ms; the stream's own (coarse) time, used only when the item carries none. */
  approximateCreationMs: number;
}

export interface WebhookEvent {
  id: string;
  type: WebhookEventType;
  organizationId: string;
  conversationId: string;
  /** Absent when the item did not name it (older messages): the fan-out looks it up. */
  chatbotId?: string;
  /** ISO 8601 UTC: when the change happened. */
  timestamp: string;
  /** The event's own fields, after the organization, chatbot and conversation ids. */
  details: Record<string, unknown>;
}

/** `evt_` and 24 base64url characters (144 bits) of a hash of the change. */
export function eventId(...parts: readonly string[]): string {
  const digest = createHash("sha256").update(parts.join("\n"), "utf8").digest();
  return `evt_${digest.subarray(0, 18).toString("base64url")}`;
}

const statusEvents: Record<string, WebhookEventType | undefined> = {
  handoff: "conversation.handoff",
  closed: "conversation.closed",
};

export function deriveEvents(change: ItemChange): WebhookEvent[] {
  const image = change.newImage;
  if (!image) return [];
  if (image.entity === entities.conversation) return conversationEvents(change, image);
  if (image.entity === entities.message && change.eventName === "INSERT") return messageEvents(change, image);
  if (image.entity === entities.message && change.eventName === "MODIFY")
    return feedbackEvents(change, image);
  return [];
}

/** A reply's feedback given or replaced (its `givenAt` moved). */
function feedbackEvents(change: ItemChange, image: Item): WebhookEvent[] {
  const ids = conversationPartitionIds(change.keys.PK);
  const message = records.message(image);
  const before = change.oldImage ? records.message(change.oldImage).feedback : undefined;
  const feedback = message.feedback;
  if (!ids || !feedback || feedback.givenAt === before?.givenAt) return [];
  return [
    {
      organizationId: ids.organizationId,
      conversationId: ids.conversationId,
      ...(message.chatbotId ? { chatbotId: message.chatbotId } : {}),
      id: eventId(change.keys.PK, change.keys.SK, "message.feedback", feedback.givenAt),
      type: "message.feedback",
      timestamp: feedback.givenAt,
      details: {
        message_id: message.messageId,
        rating: feedback.rating,
        comment: feedback.comment ?? null,
        given_at: feedback.givenAt,
        previous_rating: before?.rating ?? null,
      },
    },
  ];
}

function conversationEvents(change: ItemChange, image: Item): WebhookEvent[] {
  const conversation = records.conversation(image);
  const base = {
    organizationId: conversation.organizationId,
    conversationId: conversation.conversationId,
    chatbotId: conversation.chatbotId,
  };
  if (change.eventName === "INSERT") {
    return [
      {
        ...base,
        id: eventId(change.keys.PK, change.keys.SK, "conversation.created"),
        type: "conversation.created",
        timestamp: conversation.createdAt,
        details: {
          contact_id: conversation.contactId,
          external_id: conversation.externalId ?? null,
          status: conversation.status,
          channel: conversation.channel ?? "api",
          created_at: conversation.createdAt,
        },
      },
    ];
  }
  if (change.eventName !== "MODIFY") return [];
  return [...statusChangeEvents(change, image, base), ...ratingEvents(change, conversation, base)];
}

/** The conversation was rated, or rated again (its rating's time moved). */
function ratingEvents(
  change: ItemChange,
  conversation: ConversationRecord,
  base: Pick<WebhookEvent, "organizationId" | "conversationId" | "chatbotId">,
): WebhookEvent[] {
  const rating = conversation.rating;
  const before = change.oldImage ? records.conversation(change.oldImage).rating : undefined;
  if (!rating || rating.ratedAt === before?.ratedAt) return [];
  return [
    {
      ...base,
      id: eventId(change.keys.PK, change.keys.SK, "conversation.rated", rating.ratedAt),
      type: "conversation.rated",
      timestamp: rating.ratedAt,
      details: {
        score: rating.score,
        comment: rating.comment ?? null,
        rated_at: rating.ratedAt,
        previous_score: before?.score ?? null,
      },
    },
  ];
}

/** The conversation's status changed. */
function statusChangeEvents(
  change: ItemChange,
  image: Item,
  base: Pick<WebhookEvent, "organizationId" | "conversationId" | "chatbotId">,
): WebhookEvent[] {
  const before = change.oldImage?.status;
  const after: unknown = image.status;
  if (typeof after !== "string" || before === after) return [];
  const type = after === "open" && before === "handoff" ? "conversation.resumed" : statusEvents[after];
  if (!type) return [];
  const changedAt =
    typeof image.statusChangedAt === "string"
      ? image.statusChangedAt
      : new Date(change.approximateCreationMs).toISOString();
  return [
    {
      ...base,
      id: eventId(change.keys.PK, change.keys.SK, type, change.sequenceNumber),
      type,
      timestamp: changedAt,
      details: {
        status: after,
        previous_status: typeof before === "string" ? before : null,
        channel: typeof image.channel === "string" ? image.channel : "api",
        changed_at: changedAt,
        // The first handoff's reason decides the conversation's outcome (domain/outcomes.ts); a
        // later handoff (after a hand-back) carries null.
        ...(type === "conversation.handoff"
          ? {
              handoff_reason:
                typeof image.handoffReason === "string" && image.handoffAt === changedAt
                  ? image.handoffReason
                  : null,
            }
          : {}),
      },
    },
  ];
}

function messageEvents(change: ItemChange, image: Item): WebhookEvent[] {
  const ids = conversationPartitionIds(change.keys.PK);
  if (!ids) return [];
  const message = records.message(image);
  const base = {
    organizationId: ids.organizationId,
    conversationId: ids.conversationId,
    ...(message.chatbotId ? { chatbotId: message.chatbotId } : {}),
  };
  const created: WebhookEvent = {
    ...base,
    id: eventId(change.keys.PK, change.keys.SK, "message.created"),
    type: "message.created",
    timestamp: message.createdAt,
    // The message as the public history shows it, status changes and agents' names included.
    details: { message: toPublicMessage(message) },
  };
  const lookups = (message.lookups ?? []).map(
    (lookup: LookupSummary, index): WebhookEvent => ({
      ...base,
      id: eventId(change.keys.PK, change.keys.SK, "lookup.completed", String(index)),
      type: "lookup.completed",
      timestamp: message.createdAt,
      details: {
        message_id: message.messageId,
        tool: { tool_id: lookup.toolId, name: lookup.toolName, platform: lookup.platform },
        outcome: lookup.outcome,
        latency_ms: lookup.latencyMs,
        cached: lookup.cached === true,
      },
    }),
  );
  return [created, ...lookups];
}

/** The body every attempt of this event sends: `{"type","timestamp","data":{ids…, details…}}`. */
export function eventPayload(event: WebhookEvent, chatbotId: string | null): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.timestamp,
    data: {
      organization_id: event.organizationId,
      chatbot_id: chatbotId,
      conversation_id: event.conversationId,
      ...event.details,
    },
  });
}

/**
 * The id of one event's delivery to one endpoint: a UUIDv7 whose time is the event's and whose
 * random bits are a hash of endpoint and event, so it sorts by time and a repeated fan-out of the
 * same event makes the same id.
 */
export function deliveryIdFor(endpointId: string, event: Pick<WebhookEvent, "id" | "timestamp">): string {
  const time = Math.max(0, Date.parse(event.timestamp) || 0);
  const hash = createHash("sha256").update(`${endpointId}\n${event.id}`, "utf8").digest();
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(time, 0, 6);
  hash.copy(bytes, 6, 0, 10);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
