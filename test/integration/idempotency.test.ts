/** Idempotency-Key on both POST endpoints (docs/api.md "Idempotency-Key"): retries never create twice. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { api, newConversation, seedTenant, validationItems } from "#test/support/harness";

describe("Idempotency-Key", () => {
  it("replays the first response of POST /api/conversation and creates nothing new", async () => {
    const shop = await seedTenant();
    const key = { "idempotency-key": `order-${randomUUID()}` };
    const body = { chatbot_id: shop.chatbotId, external_id: "e-1" };

    const first = await api.startConversation(shop.apiKey, body, key);
    const again = await api.startConversation(
      shop.apiKey,
      { external_id: "e-1", chatbot_id: shop.chatbotId },
      key,
    );

    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  it("replays a message turn without a second visitor message or reply", async () => {
    const shop = await seedTenant();
    const conversationId = await newConversation(shop);
    const key = { "idempotency-key": randomUUID() };
    const body = { conversation_id: conversationId, message: "hello there" };

    const first = await api.sendMessage(shop.apiKey, body, key);
    const again = await api.sendMessage(shop.apiKey, body, key);

    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const history = await api.listMessages(shop.apiKey, conversationId);
    expect(history.body.messages.filter((message) => message.role === "user")).toHaveLength(1);
  });

  it("runs concurrent retries once: one answer, the others 409 or a replay", async () => {
    const shop = await seedTenant();
    const conversationId = await newConversation(shop);
    const key = { "idempotency-key": randomUUID() };
    const body = { conversation_id: conversationId, message: "at the same moment" };

    const responses = await Promise.all(
      Array.from({ length: 6 }, () => api.sendMessage(shop.apiKey, body, key)),
    );

    const fresh = responses.filter(
      (response) => response.status === 200 && !response.headers.get("idempotent-replayed"),
    );
    expect(fresh).toHaveLength(1);
    for (const response of responses) {
      if (response.status === 409) {
        expect(response.body).toEqual({
          detail: "A request with this Idempotency-Key is still being processed",
        });
      } else {
        expect(response.status).toBe(200);
        expect(response.body).toEqual(fresh[0]?.body);
      }
    }
    const history = await api.listMessages(shop.apiKey, conversationId);
    expect(history.body.messages.filter((message) => message.role === "user")).toHaveLength(1);
  });

  it("refuses the same key with a different body (422)", async () => {
    const shop = await seedTenant();
    const key = { "idempotency-key": randomUUID() };
    await api.startConversation(shop.apiKey, { chatbot_id: shop.chatbotId, external_id: "a" }, key);

    const different = await api.startConversation(
      shop.apiKey,
      { chatbot_id: shop.chatbotId, external_id: "b" },
      key,
    );

    expect(different.status).toBe(422);
    expect(different.body).toEqual({ detail: "Idempotency-Key was already used with a different request" });
  });

  it("replays a definite error too (404), and keeps keys apart per API key", async () => {
    const [shop, other] = await Promise.all([seedTenant(), seedTenant()]);
    const key = { "idempotency-key": "shared-key-1" };
    const body = { conversation_id: randomUUID(), message: "x" };

    const first = await api.sendMessage(shop.apiKey, body, key);
    const again = await api.sendMessage(shop.apiKey, body, key);
    const otherKey = await api.startConversation(other.apiKey, { chatbot_id: other.chatbotId }, key);

    expect(first.status).toBe(404);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ detail: "Conversation not found" });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(otherKey.status).toBe(200);
    expect(otherKey.headers.get("idempotent-replayed")).toBeNull();
  });

  it("validates the header: 1–255 printable characters", async () => {
    const shop = await seedTenant();
    const body = { chatbot_id: shop.chatbotId };

    const long = await api.startConversation(shop.apiKey, body, { "idempotency-key": "k".repeat(256) });

    expect(long.status).toBe(422);
    expect(validationItems(long)[0]).toMatchObject({
      type: "string_too_long",
      loc: ["header", "idempotency-key"],
    });
  });
});
