/** Which item changes become which webhook events, with stable, distinct ids. */
import { describe, expect, it } from "vitest";
import { type ConversationRecord, items, type MessageRecord } from "#functions/store/items";
import {
  deliveryIdFor,
  deriveEvents,
  eventPayload,
  type ItemChange,
  type WebhookEvent,
} from "#functions/webhooks/events";

const conversation: ConversationRecord = {
  conversationId: "conv-1",
  organizationId: "org-1",
  chatbotId: "bot-1",
  contactId: "contact-1",
  status: "open",
  turns: 0,
  createdAt: "2026-05-01T10:00:00.000Z",
};

const message: MessageRecord = {
  messageId: "msg-1",
  conversationId: "conv-1",
  chatbotId: "bot-1",
  turn: 1,
  index: 1,
  role: "assistant",
  content: "Your order has shipped.",
  attachments: [],
  createdAt: "2026-05-01T10:00:02.000Z",
  engine: "scripted",
  lookups: [
    { toolId: "tool-1", toolName: "order_status", platform: "woocommerce", outcome: "found", latencyMs: 120 },
  ],
};

function change(partial: Partial<ItemChange> & Pick<ItemChange, "eventName" | "newImage">): ItemChange {
  const image = partial.newImage ?? {};
  return {
    keys: { PK: String(image.PK), SK: String(image.SK) },
    sequenceNumber: "000000000000000000001",
    approximateCreationMs: Date.parse("2026-05-01T10:00:00Z"),
    ...partial,
  };
}

const conversationItem = items.conversation(conversation);
const messageItem = items.message("org-1", message);

describe("event derivation", () => {
  it("makes conversation.created from an inserted conversation", () => {
    const [event, ...rest] = deriveEvents(change({ eventName: "INSERT", newImage: conversationItem }));
    expect(rest).toEqual([]);
    expect(event).toMatchObject({
      type: "conversation.created",
      organizationId: "org-1",
      chatbotId: "bot-1",
      conversationId: "conv-1",
      timestamp: conversation.createdAt,
      details: { contact_id: "contact-1", external_id: null, status: "open" },
    });
    expect(event?.id).toMatch(/^evt_[A-Za-z0-9_-]{24}$/);
  });

  it("makes message.created for every inserted message, and lookup.completed per look-up", () => {
    const events = deriveEvents(change({ eventName: "INSERT", newImage: messageItem }));
    expect(events.map((event) => event.type)).toEqual(["message.created", "lookup.completed"]);
    expect(events[0]?.details).toEqual({
      message: {
        message_id: "msg-1",
        role: "assistant",
        content: "Your order has shipped.",
        attachments: [],
        created_at: message.createdAt,
        sources: [],
        // As the history shows it: a new reply has no feedback yet (message.feedback brings it).
        feedback: null,
      },
    });
    expect(events[1]).toMatchObject({
      organizationId: "org-1",
      conversationId: "conv-1",
      details: {
        message_id: "msg-1",
        tool: { tool_id: "tool-1", name: "order_status", platform: "woocommerce" },
        outcome: "found",
        latency_ms: 120,
        cached: false,
      },
    });
  });

  it("names the organization and conversation of a message from its key, and leaves a missing chatbot open", () => {
    const { chatbotId: _chatbotId, lookups: _lookups, ...older } = message;
    const [event] = deriveEvents(
      change({ eventName: "INSERT", newImage: items.message("org-9", { ...older, role: "user" }) }),
    );
    expect(event).toMatchObject({
      type: "message.created",
      organizationId: "org-9",
      conversationId: "conv-1",
    });
    expect(event?.chatbotId).toBeUndefined();
  });

  it("turns status changes into handoff, resumed and closed, and nothing else", () => {
    const transition = (from: string, to: string, sequenceNumber = "7") =>
      deriveEvents(
        change({
          eventName: "MODIFY",
          oldImage: { ...conversationItem, status: from },
          newImage: { ...conversationItem, status: to, statusChangedAt: "2026-05-01T11:00:00.000Z" },
          sequenceNumber,
        }),
      );
    expect(transition("open", "handoff").map((event) => event.type)).toEqual(["conversation.handoff"]);
    expect(transition("handoff", "open").map((event) => event.type)).toEqual(["conversation.resumed"]);
    expect(transition("handoff", "closed").map((event) => event.type)).toEqual(["conversation.closed"]);
    expect(transition("open", "closed")[0]).toMatchObject({
      timestamp: "2026-05-01T11:00:00.000Z",
      details: { status: "closed", previous_status: "open" },
    });
    expect(transition("open", "open")).toEqual([]);
    // A turn only counts up: no event.
    expect(
      deriveEvents(
        change({
          eventName: "MODIFY",
          oldImage: conversationItem,
          newImage: { ...conversationItem, turns: 1 },
        }),
      ),
    ).toEqual([]);
  });

  it("makes message.feedback when a reply's feedback is given or replaced, conversation.rated when rated, nothing else", () => {
    const up = { rating: "up", givenAt: "2026-05-01T10:05:00.000Z" };
    const down = { rating: "down", comment: "Wrong", givenAt: "2026-05-01T10:06:00.000Z" };
    const given = deriveEvents(
      change({ eventName: "MODIFY", oldImage: messageItem, newImage: { ...messageItem, feedback: up } }),
    );
    expect(given).toMatchObject([
      {
        type: "message.feedback",
        timestamp: up.givenAt,
        details: {
          message_id: "msg-1",
          rating: "up",
          comment: null,
          given_at: up.givenAt,
          previous_rating: null,
        },
      },
    ]);
    const replaced = deriveEvents(
      change({
        eventName: "MODIFY",
        oldImage: { ...messageItem, feedback: up },
        newImage: { ...messageItem, feedback: down },
      }),
    );
    expect(replaced[0]?.details).toEqual({
      message_id: "msg-1",
      rating: "down",
      comment: "Wrong",
      given_at: down.givenAt,
      previous_rating: "up",
    });
    expect(replaced[0]?.id).not.toBe(given[0]?.id);
    // The same feedback seen again (no change of it): nothing.
    expect(
      deriveEvents(
        change({
          eventName: "MODIFY",
          oldImage: { ...messageItem, feedback: up },
          newImage: { ...messageItem, feedback: up },
        }),
      ),
    ).toEqual([]);
    const rating = { score: 4, ratedAt: "2026-05-01T10:07:00.000Z" };
    const rated = deriveEvents(
      change({ eventName: "MODIFY", oldImage: conversationItem, newImage: { ...conversationItem, rating } }),
    );
    expect(rated).toMatchObject([
      {
        type: "conversation.rated",
        timestamp: rating.ratedAt,
        details: { score: 4, comment: null, rated_at: rating.ratedAt, previous_score: null },
      },
    ]);
  });

  it("gives the same record the same ids, and distinct changes distinct ids", () => {
    const insert = change({ eventName: "INSERT", newImage: messageItem });
    expect(deriveEvents(insert)).toEqual(deriveEvents({ ...insert }));
    const handoff = (sequenceNumber: string) =>
      deriveEvents(
        change({
          eventName: "MODIFY",
          oldImage: conversationItem,
          newImage: { ...conversationItem, status: "handoff" },
          sequenceNumber,
        }),
      )[0]?.id;
    expect(handoff("100")).toBe(handoff("100"));
    expect(handoff("100")).not.toBe(handoff("200"));
    const other = deriveEvents(
      change({ eventName: "INSERT", newImage: items.message("org-1", { ...message, index: 2 }) }),
    );
    const all = [
      ...deriveEvents(insert),
      ...other,
      ...deriveEvents(change({ eventName: "INSERT", newImage: conversationItem })),
    ];
    expect(new Set(all.map((event) => event.id)).size).toBe(all.length);
  });

  it("ignores other entities and removals", () => {
    expect(
      deriveEvents(
        change({ eventName: "INSERT", newImage: { PK: "ORG#o", SK: "ORG", entity: "Organization" } }),
      ),
    ).toEqual([]);
    expect(deriveEvents(change({ eventName: "REMOVE", oldImage: messageItem, newImage: undefined }))).toEqual(
      [],
    );
    expect(
      deriveEvents(change({ eventName: "MODIFY", oldImage: messageItem, newImage: messageItem })),
    ).toEqual([]);
  });

  it("builds the payload with the ids first", () => {
    const [event] = deriveEvents(change({ eventName: "INSERT", newImage: conversationItem }));
    const payload = JSON.parse(eventPayload(event as WebhookEvent, "bot-1")) as Record<string, unknown>;
    expect(Object.keys(payload)).toEqual(["type", "timestamp", "data"]);
    expect(Object.keys(payload.data as object).slice(0, 3)).toEqual([
      "organization_id",
      "chatbot_id",
      "conversation_id",
    ]);
  });

  it("makes delivery ids that are UUIDv7, sort by event time and repeat for the same pair", () => {
    const early = { id: "evt_a", timestamp: "2026-05-01T10:00:00.000Z" };
    const late = { id: "evt_b", timestamp: "2026-05-01T10:00:00.001Z" };
    const id = deliveryIdFor("ep-1", early);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deliveryIdFor("ep-1", early)).toBe(id);
    expect(deliveryIdFor("ep-2", early)).not.toBe(id);
    expect(deliveryIdFor("ep-1", late) > id).toBe(true);
  });
});
