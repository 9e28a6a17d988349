/**
 * How many table round trips a message turn waits for, one after the other: counted at the tap in
 * front of DynamoDB Local (test/support/dynamodb-tap.ts), which holds every answer for a while so
 * calls sent together overlap beyond doubt. Not a timing assertion: the count is the longest chain
 * of calls each sent after the previous one was answered (test/support/round-trips.ts), whatever
 * the machine's speed. The key check (the authorizer's, or the stream function's own) is its own
 * step before the turn and is not counted; neither is the webhook pipeline, which runs beside it.
 * Runs on a runtime of its own: the tap's held answers would slow everyone else down.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedCall } from "#test/support/dynamodb-tap";
import { type FaultRuntime, type FaultTenant, startFaultRuntime } from "#test/support/fault-runtime";
import { sequentialRoundTrips } from "#test/support/round-trips";

let runtime: FaultRuntime;
beforeAll(async () => {
  runtime = await startFaultRuntime();
}, 180_000);
afterAll(async () => {
  await runtime?.stop();
});

/** How long the tap holds each answer while counting: far beyond the skew of calls sent together. */
const HOLD_MS = 150;
/** The fewest sequential round trips that keep every rule of a turn (docs/architecture.md). */
const TURN_ROUND_TRIPS = 3;

/**
 * The calls of the turn itself: not the key check, not the event pipeline reading beside it (webhook
 * endpoints and deliveries, the fan-out's chatbot look-up, its inactivity-timeout read, the analytics
 * counters it adds from the stream).
 */
const turnCall = (call: RecordedCall) =>
  !call.body.includes('"S":"APIKEY#') &&
  !/#WEBHOOKS"|#WHEP#|#ANALYTICS"/.test(call.body) &&
  !call.body.includes('"ProjectionExpression":"chatbotId"') &&
  !call.body.includes('"ProjectionExpression":"inactivityTimeoutMinutes"');

async function newConversation(tenant: FaultTenant): Promise<string> {
  const started = await runtime.call<{ conversation_id: string }>("POST", "/api/conversation", {
    key: tenant.apiKey,
    body: { chatbot_id: tenant.chatbotId },
  });
  expect(started.status, started.text).toBe(200);
  return started.body.conversation_id;
}

const kinds = [
  { name: "POST /api/message", stream: false, idempotent: false },
  { name: "POST /api/message with an Idempotency-Key", stream: false, idempotent: true },
  { name: "POST /api/message/stream", stream: true, idempotent: false },
  { name: "POST /api/message/stream with an Idempotency-Key", stream: true, idempotent: true },
] as const;

/** A chatbot with knowledge: its entries must not be read by a warm turn (they live in the index). */
const knowledge = Array.from({ length: 40 }, (_, i) => ({
  question: `Question number ${i} about opening hours and shipping?`,
  answer: `Answer number ${i}: we are open from nine to five, and ship within a day.`,
}));

describe("a message turn's reads do not grow with the chatbot", () => {
  it("a warm turn of a chatbot with 40 knowledge entries reads its item once, and no knowledge or tools", async () => {
    const tenant = await runtime.seedTenant({}, knowledge);
    const conversationId = await newConversation(tenant);
    const send = (message: string) =>
      runtime.call("POST", "/api/message", {
        key: tenant.apiKey,
        body: { conversation_id: conversationId, message },
      });
    expect((await send("hello")).status).toBe(200);

    const recording = runtime.recordTableCalls(0);
    let answer: Awaited<ReturnType<typeof send>>;
    try {
      answer = await send("what are your opening hours?");
    } finally {
      recording.stop();
    }

    expect(answer.status, answer.text).toBe(200);
    const calls = recording.calls.filter(turnCall);
    const shown = calls.map((call) => `${call.operation} ${call.body.slice(0, 200)}`).join("\n");
    const chatbotPartition = `ORG#${tenant.organizationId}#BOT#${tenant.chatbotId}`;
    const onChatbot = calls.filter((call) => call.body.includes(`"${chatbotPartition}"`));
    // The item itself (GetItem), and the claim's check that it still exists: nothing that grows.
    expect(onChatbot.map((call) => call.operation).sort(), shown).toEqual(["GetItem", "TransactWriteItems"]);
    expect(
      calls.some((call) => /KNOW#|TOOL#/.test(call.body)),
      shown,
    ).toBe(false);
  });
});

describe("a message turn's sequential table round trips", () => {
  for (const kind of kinds) {
    it(`${kind.name}: at most ${TURN_ROUND_TRIPS}`, async () => {
      const tenant = await runtime.seedTenant();
      const conversationId = await newConversation(tenant);
      const send = (message: string) =>
        runtime.call("POST", kind.stream ? "/api/message/stream" : "/api/message", {
          key: tenant.apiKey,
          body: { conversation_id: conversationId, message },
          stream: kind.stream,
          ...(kind.idempotent ? { headers: { "idempotency-key": randomUUID() } } : {}),
        });
      // A turn with history to read, on a warm function.
      expect((await send("hello")).status).toBe(200);

      const recording = runtime.recordTableCalls(HOLD_MS);
      let answer: Awaited<ReturnType<typeof send>>;
      try {
        answer = await send("what are your opening hours?");
      } finally {
        recording.stop();
      }

      expect(answer.status, answer.text).toBe(200);
      const calls = recording.calls.filter(turnCall);
      const shown = calls.map(
        (call) =>
          `${call.operation} ${Math.round(call.startedAt)}–${Math.round(call.endedAt)} ${call.body.slice(0, 160)}`,
      );
      expect(
        calls.every((call) => Number.isFinite(call.endedAt)),
        shown.join("\n"),
      ).toBe(true);
      const roundTrips = sequentialRoundTrips(calls);
      expect(roundTrips, shown.join("\n")).toBeGreaterThan(0);
      expect(roundTrips, shown.join("\n")).toBeLessThanOrEqual(TURN_ROUND_TRIPS);
    });
  }
});
