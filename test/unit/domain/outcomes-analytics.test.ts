/**
 * The outcome rules (domain/outcomes.ts) with an explicit clock, the freeze a late write owes, and
 * the analytics counters (domain/analytics.ts): a conversation's contribution, a batch's increments
 * (a change moves counts, test conversations count nothing), the figures of days, and the latency
 * sketch's accuracy.
 */
import { describe, expect, it } from "vitest";
import {
  contributionOf,
  figuresOf,
  incrementsOf,
  SKETCH_RELATIVE_ACCURACY,
  sketchIndex,
  sketchQuantile,
} from "#functions/domain/analytics";
import { dueFreeze, OUTCOME_WINDOW_MS, outcomeAt, outcomeValue } from "#functions/domain/outcomes";
import { type ConversationRecord, items } from "#functions/store/items";

const start = Date.parse("2026-11-20T10:00:00.000Z");
const at = (ms: number) => new Date(start + ms).toISOString();

function conversation(overrides: Partial<ConversationRecord> = {}): ConversationRecord {
  return {
    organizationId: "org-1",
    conversationId: "conv-1",
    chatbotId: "bot-1",
    contactId: "contact-1",
    status: "open",
    createdAt: at(0),
    lastActivityAt: at(0),
    turns: 0,
    ...overrides,
  } as ConversationRecord;
}

const answered = (overrides: Partial<ConversationRecord> = {}) =>
  conversation({
    turns: 1,
    visitorMessageCount: 1,
    messageCount: 2,
    lastMessageAt: at(2_000),
    lastAnswerTurn: 1,
    lastAnswerAt: at(2_000),
    lastAnswerFallback: false,
    firstVisitorMessageAt: at(1_000),
    firstReplyMs: 1_000,
    ...overrides,
  });

describe("outcome rules", () => {
  it("abandoned without a visitor message; resolved by a real answer; unresolved by the fallback or no answer", () => {
    expect(outcomeValue(conversation())).toBe("abandoned");
    expect(outcomeValue(answered())).toBe("resolved");
    expect(outcomeValue(answered({ lastAnswerFallback: true }))).toBe("unresolved");
    expect(outcomeValue(answered({ lastAnswerTurn: undefined }))).toBe("unresolved");
  });

  it("a rating 4–5 or 1–2 decides first, then the thumb on the last answer, then the answer", () => {
    const rating = (score: number) => ({ score, ratedAt: at(3_000) });
    expect(outcomeValue(answered({ lastAnswerFallback: true, rating: rating(5) }))).toBe("resolved");
    expect(outcomeValue(answered({ lastAnswerFeedback: "up", rating: rating(1) }))).toBe("unresolved");
    expect(outcomeValue(answered({ lastAnswerFeedback: "down", rating: rating(3) }))).toBe("unresolved");
    expect(outcomeValue(answered({ lastAnswerFallback: true, lastAnswerFeedback: "up" }))).toBe("resolved");
    expect(outcomeValue(answered({ lastAnswerFeedback: "down" }))).toBe("unresolved");
  });

  it("handed_off with its reason, final at the handoff", () => {
    const handed = answered({ status: "handoff", handoffAt: at(5_000), handoffReason: "client" });
    expect(outcomeAt(handed, start + 6_000)).toEqual({
      outcome: "handed_off",
      final: true,
      finalAt: at(5_000),
      handoffReason: "client",
    });
  });

  it("provisional until 24 h after the last message, then final; final at the close", () => {
    const open = answered();
    const windowEnd = start + 2_000 + OUTCOME_WINDOW_MS;
    expect(outcomeAt(open, windowEnd - 1)).toMatchObject({
      outcome: "resolved",
      final: false,
      finalAt: at(2_000 + OUTCOME_WINDOW_MS),
    });
    expect(outcomeAt(open, windowEnd)).toMatchObject({ outcome: "resolved", final: true });
    const closed = answered({ status: "closed", statusChangedAt: at(9_000) });
    expect(outcomeAt(closed, start + 10_000)).toMatchObject({ final: true, finalAt: at(9_000) });
    expect(outcomeAt(conversation(), start + OUTCOME_WINDOW_MS)).toMatchObject({
      outcome: "abandoned",
      final: true,
    });
  });

  it("a write after the window freezes the outcome as it was; a frozen outcome never moves", () => {
    const open = answered();
    expect(dueFreeze(open, start + 2_000 + OUTCOME_WINDOW_MS - 1)).toBeUndefined();
    const freeze = dueFreeze(open, start + 2_000 + OUTCOME_WINDOW_MS + 5);
    expect(freeze).toEqual({ finalOutcome: "resolved", outcomeFinalAt: at(2_000 + OUTCOME_WINDOW_MS) });
    const frozen = answered({ ...freeze, rating: { score: 1, ratedAt: at(OUTCOME_WINDOW_MS * 2) } });
    expect(outcomeValue(frozen)).toBe("resolved");
    expect(dueFreeze(frozen, start + OUTCOME_WINDOW_MS * 3)).toBeUndefined();
  });
});

describe("analytics counters", () => {
  it("a conversation contributes its facts, its outcome and its first reply's sketch bucket", () => {
    const counts = contributionOf(
      answered({
        visitorMessageCount: 3,
        fallbackReplies: 1,
        lookups: 2,
        lookupsFound: 1,
        lookupsTimeout: 1,
        feedbackUp: 2,
        feedbackDown: 1,
        rating: { score: 4, ratedAt: at(5_000) },
      }),
    );
    expect(counts).toEqual({
      conversations: 1,
      visitorMessages: 3,
      fallbackReplies: 1,
      lookups: 2,
      lookups_found: 1,
      lookups_timeout: 1,
      outcome_resolved: 1,
      feedbackUp: 2,
      feedbackDown: 1,
      ratings: 1,
      ratingSum: 4,
      firstReplies: 1,
      [`frt${sketchIndex(1_000)}`]: 1,
    });
  });

  it("a batch's changes move the counts of the start day, per organization and chatbot; tests count nothing", () => {
    const before = answered();
    const after = answered({ lastAnswerFeedback: "down", feedbackDown: 1 });
    const test = answered({ conversationId: "conv-2", test: true });
    const image = (record: ConversationRecord) => items.conversation(record);
    const increments = incrementsOf([
      { eventName: "INSERT", newImage: image(conversation()), sequenceNumber: "1" },
      { eventName: "MODIFY", oldImage: image(conversation()), newImage: image(before), sequenceNumber: "2" },
      { eventName: "MODIFY", oldImage: image(before), newImage: image(after), sequenceNumber: "3" },
      { eventName: "INSERT", newImage: image(test), sequenceNumber: "4" },
    ]);
    const expected = {
      conversations: 1,
      visitorMessages: 1,
      outcome_unresolved: 1,
      feedbackDown: 1,
      firstReplies: 1,
      [`frt${sketchIndex(1_000)}`]: 1,
    };
    expect(increments).toEqual([
      { organizationId: "org-1", day: "2026-11-20", counts: expected },
      { organizationId: "org-1", day: "2026-11-20", chatbotId: "bot-1", counts: expected },
    ]);
  });

  it("figures add days up: rating average, handoff reasons, the merged median", () => {
    const figures = figuresOf([
      {
        day: "2026-11-20",
        counts: {
          conversations: 2,
          ratings: 1,
          ratingSum: 5,
          handoff_client: 1,
          outcome_handed_off: 1,
          [`frt${sketchIndex(100)}`]: 1,
        },
      },
      {
        day: "2026-11-21",
        counts: {
          conversations: 1,
          ratings: 2,
          ratingSum: 3,
          [`frt${sketchIndex(200)}`]: 1,
          [`frt${sketchIndex(900)}`]: 1,
        },
      },
    ]);
    expect(figures.conversations).toBe(3);
    expect(figures.ratingAverage).toBeCloseTo(8 / 3, 2);
    expect(figures.handoffReasons.client).toBe(1);
    expect(figures.outcomes.handed_off).toBe(1);
    expect(Math.abs((figures.firstReplyMsP50 ?? 0) - 200)).toBeLessThanOrEqual(
      200 * SKETCH_RELATIVE_ACCURACY + 1,
    );
    expect(figuresOf([]).ratingAverage).toBeNull();
    expect(figuresOf([]).firstReplyMsP50).toBeNull();
  });

  it("the sketch's median is within 2 % of the exact one", () => {
    const values = Array.from({ length: 1_001 }, (_, index) => 50 + index * 37);
    const buckets = new Map<number, number>();
    for (const value of values) buckets.set(sketchIndex(value), (buckets.get(sketchIndex(value)) ?? 0) + 1);
    const exact = values[500] ?? 0;
    const estimate = sketchQuantile(buckets, 0.5) ?? 0;
    expect(Math.abs(estimate - exact) / exact).toBeLessThanOrEqual(SKETCH_RELATIVE_ACCURACY);
  });
});
