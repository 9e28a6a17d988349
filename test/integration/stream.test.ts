/**
 * POST /api/message/stream over HTTP against the stream URL (locally: the runtime's function URL
 * emulator): the events and their JSON, progress before the model has finished, the fault cases
 * (stall, failure, budget, a client that goes away), errors before the stream as ordinary JSON,
 * Idempotency-Key, and a stored turn equal to what POST /api/message stores.
 * The runtime's turn budget is 3 s and its stream idle limit 1.5 s here (global-setup).
 */
import { randomUUID } from "node:crypto";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { closeConversation } from "#functions/domain/conversations";
import type { MessageRecord } from "#functions/store/items";
import { prefixes, records } from "#functions/store/items";
import { converseStream, converseText } from "#test/fakes/bedrock-server";
import { bedrockControl } from "#test/fakes/keyed-bedrock";
import { completionStream, startFakeOpenAi } from "#test/fakes/openai-server";
import { type OpenStream, openStream, type StreamEvent } from "#test/support/event-stream-client";
import {
  api,
  domain,
  environment,
  isLocal,
  newConversation,
  reachable,
  seedTenant,
  type Tenant,
  UUID,
  validationItems,
} from "#test/support/harness";

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const FALLBACK = "Sorry, the assistant is busy. Please try again.";

async function storedMessages(tenant: Tenant, conversationId: string): Promise<MessageRecord[]> {
  const { Items } = await domain().db.client.send(
    new QueryCommand({
      TableName: domain().db.tableName,
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :messages)",
      ExpressionAttributeValues: {
        ":pk": prefixes.conversationPartition(tenant.organizationId, conversationId),
        ":messages": prefixes.messages,
      },
      ConsistentRead: true,
    }),
  );
  return (Items ?? []).map(records.message);
}

/** What a stored reply is, apart from its ids and times. */
function comparable(message: MessageRecord) {
  const { messageId: _id, conversationId: _c, createdAt: _t, modelLatencyMs: _l, ...rest } = message;
  return rest;
}

const stream = (tenant: Tenant, body: Record<string, unknown>, headers?: Record<string, string>) =>
  openStream({ key: tenant.apiKey, body, ...(headers ? { headers } : {}) });

const names = (events: StreamEvent[]) => events.map((event) => event.event);
const deltaText = (events: StreamEvent[]) =>
  events
    .filter((event) => event.event === "message.delta")
    .map((event) => (event.data as { text: string }).text)
    .join("");

function expectJsonError(response: OpenStream, status: number): void {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  expect(response.headers.get("x-request-id")).toBeTruthy();
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const until = Date.now() + 20_000;
  while (true) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("streaming a reply: events", () => {
  it("streams message.start, the text and message.end, with the headers of any answer to a valid key", async () => {
    // Prepare
    const shop = await seedTenant({
      knowledge: [{ question: "How long does shipping take?", answer: "Two working days within the EU." }],
    });
    const conversationId = await newConversation(shop);
    // Act
    const response = await stream(shop, {
      conversation_id: conversationId,
      message: "How long does shipping take?",
    });
    const events = await response.rest();
    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("cache-control")).toContain("no-transform");
    expect(response.headers.get("x-request-id")).toBeTruthy();
    expect(response.headers.get("x-ratelimit-limit")).toBe("100");
    expect(Number(response.headers.get("x-ratelimit-remaining"))).toBeLessThan(100);
    expect(names(events)).toEqual(["message.start", "message.delta", "message.end"]);
    const [start, delta, end] = events.map((event) => event.data) as [
      { conversation_id: string; message_id: string; status: string },
      { text: string },
      { message_id: string; role: string; content: string; created_at: string },
    ];
    expect(start).toEqual({
      conversation_id: conversationId,
      message_id: expect.stringMatching(UUID),
      status: "open",
    });
    expect(delta).toEqual({ text: "Two working days within the EU." });
    expect(end).toEqual({
      message_id: start.message_id,
      role: "assistant",
      content: "Two working days within the EU.",
      created_at: expect.stringMatching(ISO_UTC),
      // The knowledge entry the scripted reply answered from.
      sources: [{ source_id: expect.stringMatching(UUID), title: "How long does shipping take?", url: null }],
    });
    const history = await api.listMessages(shop.apiKey, conversationId);
    expect(history.body.messages.map((message) => [message.role, message.content])).toEqual([
      ["user", "How long does shipping take?"],
      ["assistant", "Two working days within the EU."],
    ]);
    expect(history.body.messages[1]?.message_id).toBe(start.message_id);
  });

  it("stores the same turn as POST /api/message", async () => {
    const shop = await seedTenant({
      knowledge: [{ question: "Do you ship to Belgium?", answer: "Yes, in 2 days." }],
    });
    const [streamed, plain] = [await newConversation(shop), await newConversation(shop)];
    await (await stream(shop, { conversation_id: streamed, message: "Do you ship to Belgium?" })).rest();
    await api.sendMessage(shop.apiKey, { conversation_id: plain, message: "Do you ship to Belgium?" });
    const [a, b] = [await storedMessages(shop, streamed), await storedMessages(shop, plain)];
    expect(a.map(comparable)).toEqual(b.map(comparable));
    expect(a).toHaveLength(2);
  });
});

describe.runIf(isLocal)("streaming a model's reply (Bedrock ConverseStream fake)", () => {
  const bedrock = () => bedrockControl(environment.bedrockControlUrl ?? "");
  const modelTenant = async (modelId: string) =>
    seedTenant({ chatbot: { engine: { kind: "bedrock", modelId }, fallbackReply: FALLBACK } });

  it("sends the first delta while the model is still writing, and the stored turn only after the end", async () => {
    // Prepare: the model sends two tokens, then holds the rest until the test has seen a delta
    const modelId = `test.stream-${randomUUID()}`;
    const shop = await modelTenant(modelId);
    const text = "Your parcel left our warehouse in Utrecht this morning.";
    await bedrock().script(
      modelId,
      converseStream(text, { holdAfter: 2, usage: { inputTokens: 50, outputTokens: 12 } }),
    );
    const conversationId = await newConversation(shop);
    // Act
    const response = await stream(shop, { conversation_id: conversationId, message: "Where is my parcel?" });
    const start = await response.next();
    const first = await response.next();
    const whileWriting = await storedMessages(shop, conversationId);
    await bedrock().release(modelId);
    const rest = await response.rest();
    // Assess
    expect(start?.event).toBe("message.start");
    expect(first).toEqual({ event: "message.delta", data: { text: "Your" } });
    // The visitor's message was stored before the first byte; the reply is not stored yet.
    expect(whileWriting.map((message) => message.role)).toEqual(["user"]);
    expect(names(rest).at(-1)).toBe("message.end");
    expect(deltaText(response.seen)).toBe(text);
    expect((rest.at(-1)?.data as { content?: string } | undefined)?.content).toBe(text);
    const stored = await storedMessages(shop, conversationId);
    expect(stored[1]).toMatchObject({
      role: "assistant",
      content: text,
      engine: "bedrock",
      usage: { inputTokens: 50, outputTokens: 12 },
    });
    expect(stored[1]?.fallback).toBeUndefined();
    expect(stored[1]?.messageId).toBe((start?.data as { message_id?: string } | undefined)?.message_id);
  });

  it("stores the same model turn as POST /api/message", async () => {
    const modelId = `test.stream-${randomUUID()}`;
    const shop = await modelTenant(modelId);
    await bedrock().script(modelId, converseText("It ships today.", { inputTokens: 9, outputTokens: 4 }));
    await bedrock().script(
      modelId,
      converseStream("It ships today.", { usage: { inputTokens: 9, outputTokens: 4 } }),
    );
    const [plain, streamed] = [await newConversation(shop), await newConversation(shop)];
    await api.sendMessage(shop.apiKey, { conversation_id: plain, message: "When?" });
    await (await stream(shop, { conversation_id: streamed, message: "When?" })).rest();
    const [a, b] = [await storedMessages(shop, plain), await storedMessages(shop, streamed)];
    expect(b.map(comparable)).toEqual(a.map(comparable));
  });

  it("ends a stream whose model stalls with error, then the fallback reply, and stores the fallback", async () => {
    const modelId = `test.stream-${randomUUID()}`;
    const shop = await modelTenant(modelId);
    await bedrock().script(modelId, converseStream("Your parcel is", { ending: "stall" }));
    const conversationId = await newConversation(shop);

    const events = await (await stream(shop, { conversation_id: conversationId, message: "Where?" })).rest();

    expect(names(events)).toEqual([
      "message.start",
      "message.delta",
      "message.delta",
      "message.delta",
      "error",
      "message.delta",
      "message.end",
    ]);
    expect(events[4]?.data).toEqual({ detail: "The model stopped sending its reply" });
    expect(events[5]?.data).toEqual({ text: FALLBACK });
    expect(events[6]?.data).toMatchObject({ role: "assistant", content: FALLBACK });
    const stored = await storedMessages(shop, conversationId);
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(stored[1]).toMatchObject({ content: FALLBACK, fallback: true, engine: "bedrock" });
  });

  it("ends a stream whose model fails mid-stream the same way", async () => {
    const modelId = `test.stream-${randomUUID()}`;
    const shop = await modelTenant(modelId);
    await bedrock().script(
      modelId,
      converseStream("Your parcel is", {
        ending: { exception: "modelStreamErrorException", message: "boom" },
      }),
    );
    const conversationId = await newConversation(shop);

    const events = await (await stream(shop, { conversation_id: conversationId, message: "Where?" })).rest();

    expect(names(events).slice(-3)).toEqual(["error", "message.delta", "message.end"]);
    expect(events.at(-3)?.data).toEqual({ detail: "The model could not reply" });
    expect(events.at(-1)?.data).toMatchObject({ content: FALLBACK });
    expect((await storedMessages(shop, conversationId))[1]).toMatchObject({
      content: FALLBACK,
      fallback: true,
    });
  });

  it("ends a stream that runs past the turn's budget the same way", async () => {
    const modelId = `test.stream-${randomUUID()}`;
    const shop = await modelTenant(modelId);
    // A token every 0.4 s never trips the idle limit, but 30 of them outlast the 3 s budget.
    const slow = Array.from({ length: 30 }, (_, index) => `word${index}`).join(" ");
    await bedrock().script(modelId, converseStream(slow, { intervalMs: 400 }));
    const conversationId = await newConversation(shop);

    const events = await (
      await stream(shop, { conversation_id: conversationId, message: "Tell me all" })
    ).rest();

    expect(names(events).slice(-3)).toEqual(["error", "message.delta", "message.end"]);
    expect(events.at(-3)?.data).toEqual({ detail: "The reply took too long" });
    expect((await storedMessages(shop, conversationId))[1]).toMatchObject({
      content: FALLBACK,
      fallback: true,
    });
  });

  it("completes and stores the turn when the client disconnects mid-stream", async () => {
    const modelId = `test.stream-${randomUUID()}`;
    const shop = await modelTenant(modelId);
    const text = "Your parcel will arrive on Tuesday between 9 and 12.";
    await bedrock().script(modelId, converseStream(text, { holdAfter: 2 }));
    const conversationId = await newConversation(shop);

    const response = await stream(shop, { conversation_id: conversationId, message: "When?" });
    await response.until("message.delta");
    response.disconnect();
    await bedrock().release(modelId);

    const stored = await waitFor(
      () => storedMessages(shop, conversationId),
      (messages) => messages.length === 2,
    );
    expect(stored.map((message) => [message.role, message.content])).toEqual([
      ["user", "When?"],
      ["assistant", text],
    ]);
    expect(stored[1]?.fallback).toBeUndefined();
  });
});

describe.runIf(isLocal)("streaming an OpenAI-compatible model's reply", () => {
  it("streams the chat completion's chunks as deltas", async () => {
    const openai = await startFakeOpenAi();
    try {
      const shop = await seedTenant({
        chatbot: {
          engine: { kind: "openai", baseUrl: `${reachable(openai.url)}/v1`, model: "llama3.2" },
          fallbackReply: FALLBACK,
        },
      });
      openai.enqueue(completionStream("Bonjour! Votre colis arrive demain.", { holdAfter: 1 }));
      const conversationId = await newConversation(shop);

      const response = await stream(shop, { conversation_id: conversationId, message: "Où est mon colis?" });
      await response.until("message.delta");
      openai.release();
      await response.rest();

      expect(deltaText(response.seen)).toBe("Bonjour! Votre colis arrive demain.");
      expect(openai.requests[0]?.body).toMatchObject({ stream: true, model: "llama3.2" });
      expect((await storedMessages(shop, conversationId))[1]).toMatchObject({
        content: "Bonjour! Votre colis arrive demain.",
        engine: "openai",
      });
    } finally {
      await openai.close();
    }
  });
});

describe("streaming: errors before the stream starts are ordinary JSON", () => {
  it("401 without a valid key, with WWW-Authenticate", async () => {
    const shop = await seedTenant();
    const conversationId = await newConversation(shop);
    for (const authorization of [null, "Basic abc", "Bearer cbk_not-a-key"]) {
      const response = await openStream({
        authorization,
        body: { conversation_id: conversationId, message: "hi" },
      });
      expectJsonError(response, 401);
      expect(response.headers.get("www-authenticate")).toBe("Bearer");
      expect(await response.json()).toEqual({ detail: "Invalid API key" });
    }
  });

  it("403 for an organization without an active subscription", async () => {
    const shop = await seedTenant({ subscription: "inactive" });
    const response = await stream(shop, { conversation_id: randomUUID(), message: "hi" });
    expectJsonError(response, 403);
    expect(await response.json()).toEqual({ detail: "Organization subscription is not active" });
    expect(response.headers.get("x-ratelimit-limit")).toBeTruthy();
  });

  it("404 for an unknown conversation or another organization's, and 409 for a closed one", async () => {
    const shop = await seedTenant();
    const other = await seedTenant();
    const theirs = await newConversation(other);
    for (const conversationId of [randomUUID(), theirs]) {
      const response = await stream(shop, { conversation_id: conversationId, message: "hi" });
      expectJsonError(response, 404);
      expect(await response.json()).toEqual({ detail: "Conversation not found" });
    }
    const closed = await newConversation(shop);
    await closeConversation(domain(), { organizationId: shop.organizationId, conversationId: closed });
    const response = await stream(shop, { conversation_id: closed, message: "hi" });
    expectJsonError(response, 409);
    expect(await response.json()).toEqual({ detail: "Conversation is closed" });
    // Only the close's own system message: the refused turn stored nothing.
    expect((await storedMessages(shop, closed)).map((message) => message.role)).toEqual(["system"]);
  });

  it("422 for an invalid body, in the same format as POST /api/message", async () => {
    const shop = await seedTenant();
    const body = { conversation_id: "nope", message: 42, attachments: [{ type: "img" }] };
    const response = await stream(shop, body);
    expectJsonError(response, 422);
    const items = validationItems({ body: await response.json() });
    const plain = await api.sendMessage(shop.apiKey, body);
    expect(items).toEqual(validationItems(plain));
    expect(items.map((item) => item.loc)).toEqual(
      expect.arrayContaining([
        ["body", "conversation_id"],
        ["body", "message"],
        ["body", "attachments", 0, "type"],
      ]),
    );
  });

  it("429 over the rate limit, with Retry-After and the limit headers", async () => {
    const shop = await seedTenant({ rateLimit: 1 });
    const conversationId = await newConversation(shop);
    const response = await stream(shop, { conversation_id: conversationId, message: "hi" });
    expectJsonError(response, 429);
    expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(response.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(((await response.json()) as { detail: { error: string } }).detail.error).toBe(
      "Rate limit exceeded",
    );
  });

  it("404 for another path and 405 for another method on the stream URL", async () => {
    const shop = await seedTenant();
    const unknown = await openStream({ key: shop.apiKey, method: "GET", path: "/api/message" });
    expectJsonError(unknown, 404);
    expect(await unknown.json()).toEqual({ detail: "Not Found" });
    const method = await openStream({ method: "GET" });
    expectJsonError(method, 405);
    expect(method.headers.get("allow")).toBe("POST");
    expect(await method.json()).toEqual({ detail: "Method Not Allowed" });
  });
});

describe("streaming: Idempotency-Key", () => {
  it("replays a completed streamed turn as a stream, and makes no second turn", async () => {
    const shop = await seedTenant();
    const conversationId = await newConversation(shop);
    const key = { "idempotency-key": randomUUID() };
    const body = { conversation_id: conversationId, message: "hello" };

    const first = await stream(shop, body, key);
    const firstEvents = await first.rest();
    const again = await stream(shop, body, key);
    const againEvents = await again.rest();

    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(againEvents).toEqual(firstEvents);
    expect(await storedMessages(shop, conversationId)).toHaveLength(2);
  });

  it("refuses the same key with another body, or on POST /api/message (422)", async () => {
    const shop = await seedTenant();
    const conversationId = await newConversation(shop);
    const key = { "idempotency-key": randomUUID() };
    await (await stream(shop, { conversation_id: conversationId, message: "hello" }, key)).rest();

    const other = await stream(shop, { conversation_id: conversationId, message: "goodbye" }, key);
    expectJsonError(other, 422);
    expect(await other.json()).toEqual({
      detail: "Idempotency-Key was already used with a different request",
    });
    const plain = await api.sendMessage(
      shop.apiKey,
      { conversation_id: conversationId, message: "hello" },
      key,
    );
    expect(plain.status).toBe(422);
  });

  it.runIf(isLocal)("answers 409 to the same key while the first stream is still running", async () => {
    const modelId = `test.stream-${randomUUID()}`;
    const shop = await seedTenant({
      chatbot: { engine: { kind: "bedrock", modelId }, fallbackReply: FALLBACK },
    });
    await bedrockControl(environment.bedrockControlUrl ?? "").script(
      modelId,
      converseStream("One moment please.", { holdAfter: 1 }),
    );
    const conversationId = await newConversation(shop);
    const key = { "idempotency-key": randomUUID() };
    const body = { conversation_id: conversationId, message: "hello" };

    const first = await stream(shop, body, key);
    await first.until("message.delta");
    const second = await stream(shop, body, key);
    expectJsonError(second, 409);
    expect(second.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await second.json()).toEqual({
      detail: "A request with this Idempotency-Key is still being processed",
    });
    await bedrockControl(environment.bedrockControlUrl ?? "").release(modelId);
    expect(names(await first.rest()).at(-1)).toBe("message.end");
    expect(await storedMessages(shop, conversationId)).toHaveLength(2);
  });
});
