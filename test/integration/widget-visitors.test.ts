/**
 * A website visitor's access token over HTTP: it works on exactly the widget's routes, for its own
 * contact and chatbot, and nowhere else (other routes 401, `/manage/` 401 in Format A, another
 * contact's conversation 404); an expired or tampered token is 401; the visitor's message limit and
 * the chatbot's daily budget are 429s with the rate headers; conversations it starts carry
 * `channel: widget`; CORS answers on the widget's routes only, and never to an API key.
 */
import { randomUUID } from "node:crypto";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { keys } from "#functions/store/items";
import { openStream } from "#test/support/event-stream-client";
import { call, domain, environment } from "#test/support/harness";
import { seedWidgetTenant, session, shopOrigin, type WidgetTenant } from "#test/support/widget";

const originHeader = { origin: shopOrigin };

async function visitorConversation(tenant: WidgetTenant, token: string): Promise<string> {
  const started = await call<{ conversation_id: string }>("POST", "/api/conversation", {
    key: token,
    headers: originHeader,
    body: { chatbot_id: tenant.chatbotId },
  });
  if (started.status !== 200) throw new Error(`no conversation: ${started.status} ${started.text}`);
  return started.body.conversation_id;
}

describe("a visitor's access token", () => {
  it("starts a conversation for its own contact, with channel widget, ignoring contact fields", async () => {
    const tenant = await seedWidgetTenant();
    const visitor = await session(tenant.chatbotId);
    const started = await call<{ conversation_id: string; contact_id: string }>("POST", "/api/conversation", {
      key: visitor.token,
      headers: originHeader,
      body: {
        chatbot_id: tenant.chatbotId,
        contact_id: "6f1c1b9e-0000-4000-8000-000000000001",
        user_email: "someone@else.example",
        external_id: "not-mine",
      },
    });
    expect(started.status).toBe(200);
    expect(started.body.contact_id).toBe(visitor.contact_id);
    expect(started.headers.get("access-control-allow-origin")).toBe(shopOrigin);
    expect(started.headers.get("x-ratelimit-limit")).toBe("60");
    const read = await call<Record<string, unknown>>(
      "GET",
      `/api/conversation/${started.body.conversation_id}`,
      {
        key: tenant.apiKey,
      },
    );
    expect(read.body).toMatchObject({ contact_id: visitor.contact_id, external_id: null, channel: "widget" });
    // A conversation started with the API key is `api`.
    const byKey = await call<{ conversation_id: string }>("POST", "/api/conversation", {
      key: tenant.apiKey,
      body: { chatbot_id: tenant.chatbotId },
    });
    const keyed = await call<Record<string, unknown>>(
      "GET",
      `/api/conversation/${byKey.body.conversation_id}`,
      {
        key: tenant.apiKey,
      },
    );
    expect(keyed.body.channel).toBe("api");
  });

  it("cannot start a conversation with another chatbot, even of its organization", async () => {
    const tenant = await seedWidgetTenant();
    const other = await seedWidgetTenant();
    const visitor = await session(tenant.chatbotId);
    const refused = await call("POST", "/api/conversation", {
      key: visitor.token,
      body: { chatbot_id: other.chatbotId },
    });
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ detail: "Chatbot not found" });
  });

  it("sends, streams, reads and hands off in its own conversation", async () => {
    const tenant = await seedWidgetTenant(
      {},
      { chatbot: { handoff: { allowed: true, message: "A person will answer.", phrases: [] } } },
    );
    const visitor = await session(tenant.chatbotId);
    const conversationId = await visitorConversation(tenant, visitor.token);
    const sent = await call<{ messages: { content: string }[] }>("POST", "/api/message", {
      key: visitor.token,
      headers: originHeader,
      body: { conversation_id: conversationId, message: "Hello there" },
    });
    expect(sent.status).toBe(200);
    expect(sent.body.messages.length).toBeGreaterThan(0);
    expect(sent.headers.get("x-ratelimit-limit")).toBe("10");
    expect(sent.headers.get("access-control-allow-origin")).toBe(shopOrigin);

    const streamed = await openStream({
      key: visitor.token,
      headers: originHeader,
      body: { conversation_id: conversationId, message: "And again" },
    });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("access-control-allow-origin")).toBe(shopOrigin);
    const events = await streamed.rest();
    expect(events.map((event) => event.event)).toContain("message.end");

    const history = await call<{ messages: { role: string }[] }>(
      "GET",
      `/api/conversation/${conversationId}/messages`,
      { key: visitor.token, headers: originHeader },
    );
    expect(history.status).toBe(200);
    expect(history.body.messages.filter((message) => message.role === "user")).toHaveLength(2);

    const handoff = await call<{ status: string }>("POST", `/api/conversation/${conversationId}/handoff`, {
      key: visitor.token,
      headers: originHeader,
    });
    expect(handoff.status).toBe(200);
    expect(handoff.body.status).toBe("handoff");
  });

  it("gives feedback on its own conversation's replies, and on no other contact's (404)", async () => {
    const tenant = await seedWidgetTenant();
    const visitor = await session(tenant.chatbotId);
    const conversationId = await visitorConversation(tenant, visitor.token);
    const sent = await call<{ messages: { message_id: string }[] }>("POST", "/api/message", {
      key: visitor.token,
      headers: originHeader,
      body: { conversation_id: conversationId, message: "Do you ship to Belgium?" },
    });
    const replyId = sent.body.messages[0]?.message_id ?? "";
    const given = await call<{ message_id: string; conversation_id: string; rating: string }>(
      "POST",
      `/api/message/${replyId}/feedback`,
      { key: visitor.token, headers: originHeader, body: { rating: "up", comment: "Clear, thanks" } },
    );
    expect(given.status).toBe(200);
    expect(given.body).toMatchObject({ message_id: replyId, conversation_id: conversationId, rating: "up" });
    expect(given.headers.get("access-control-allow-origin")).toBe(shopOrigin);
    const history = await call<{ messages: { message_id: string; feedback: { rating: string } | null }[] }>(
      "GET",
      `/api/conversation/${conversationId}/messages`,
      { key: tenant.apiKey },
    );
    expect(history.body.messages.find((message) => message.message_id === replyId)?.feedback).toMatchObject({
      rating: "up",
    });

    // Another visitor of the same chatbot: the reply is not theirs to judge.
    const stranger = await session(tenant.chatbotId);
    const refused = await call("POST", `/api/message/${replyId}/feedback`, {
      key: stranger.token,
      headers: originHeader,
      body: { rating: "down" },
    });
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ detail: "Message not found" });
    // Their own visitor message is no reply either.
    const mine = await call<{ messages: { message_id: string; role: string }[] }>(
      "GET",
      `/api/conversation/${conversationId}/messages`,
      { key: visitor.token, headers: originHeader },
    );
    const question = mine.body.messages.find((message) => message.role === "user")?.message_id ?? "";
    expect(
      (
        await call("POST", `/api/message/${question}/feedback`, {
          key: visitor.token,
          headers: originHeader,
          body: { rating: "up" },
        })
      ).status,
    ).toBe(404);
    // The rating route is not a visitor's (CONTRACT §12 lists the feedback route only).
    expect(
      (
        await call("POST", `/api/conversation/${conversationId}/rating`, {
          key: visitor.token,
          headers: originHeader,
          body: { score: 5 },
        })
      ).status,
    ).toBe(401);
  });

  it("never reaches another contact's conversation (404), even with the same chatbot", async () => {
    const tenant = await seedWidgetTenant();
    const owner = await session(tenant.chatbotId);
    const stranger = await session(tenant.chatbotId);
    const conversationId = await visitorConversation(tenant, owner.token);
    const byKey = await call<{ conversation_id: string }>("POST", "/api/conversation", {
      key: tenant.apiKey,
      body: { chatbot_id: tenant.chatbotId },
    });
    for (const id of [conversationId, byKey.body.conversation_id]) {
      const attempts = [
        call("GET", `/api/conversation/${id}`, { key: stranger.token }),
        call("GET", `/api/conversation/${id}/messages`, { key: stranger.token }),
        call("POST", "/api/message", { key: stranger.token, body: { conversation_id: id, message: "hi" } }),
        call("POST", `/api/conversation/${id}/handoff`, { key: stranger.token }),
      ];
      for (const refused of await Promise.all(attempts)) {
        expect(refused.status).toBe(404);
        expect(refused.body).toEqual({ detail: "Conversation not found" });
      }
      const streamed = await fetch(`${environment.streamUrl}/api/message/stream`, {
        method: "POST",
        headers: { authorization: `Bearer ${stranger.token}`, "content-type": "application/json" },
        body: JSON.stringify({ conversation_id: id, message: "hi" }),
      });
      expect(streamed.status).toBe(404);
      expect(await streamed.json()).toEqual({ detail: "Conversation not found" });
    }
    // Nothing was stored by the refused messages.
    const history = await call<{ messages: unknown[] }>(
      "GET",
      `/api/conversation/${conversationId}/messages`,
      {
        key: owner.token,
      },
    );
    expect(history.body.messages).toEqual([]);
  });

  it("is no key on any other route (401), and none at all on /manage/", async () => {
    const tenant = await seedWidgetTenant();
    const visitor = await session(tenant.chatbotId);
    const conversationId = await visitorConversation(tenant, visitor.token);
    for (const [method, path] of [
      ["GET", "/api/conversations"],
      ["GET", `/api/conversations?contact_id=${visitor.contact_id}`],
      ["POST", `/api/conversation/${conversationId}/close`],
      ["GET", "/api/me"],
    ] as const) {
      const refused = await call(method, path, { key: visitor.token });
      expect(refused.status, path).toBe(401);
      expect(refused.body, path).toEqual({ detail: "Invalid API key" });
      expect(refused.headers.get("www-authenticate"), path).toBe("Bearer");
    }
    for (const path of ["/manage/me", "/manage/chatbots", `/manage/conversations/${conversationId}`]) {
      const refused = await call<{ error: { code: string } }>("GET", path, { key: visitor.token });
      expect(refused.status, path).toBe(401);
      expect(refused.body.error.code, path).toBe("unauthenticated");
    }
  });

  it("is refused once expired, and when tampered with", async () => {
    const tenant = await seedWidgetTenant();
    const visitor = await session(tenant.chatbotId);
    const conversationId = await visitorConversation(tenant, visitor.token);
    const tampered = `${visitor.token.slice(0, -2)}${visitor.token.endsWith("AA") ? "BB" : "AA"}`;
    const refused = await call("GET", `/api/conversation/${conversationId}`, { key: tampered });
    expect(refused.status).toBe(401);
    // Expire the token where it is stored (as an hour passing would).
    const visitorId = visitor.token.slice(4, 47);
    const { createHash } = await import("node:crypto");
    const tokenHash = createHash("sha256").update(visitor.token).digest("base64url");
    await domain().db.client.send(
      new UpdateCommand({
        TableName: domain().db.tableName,
        Key: keys.visitor(visitorId),
        UpdateExpression: "SET #tokens.#token = :past",
        ExpressionAttributeNames: { "#tokens": "tokens", "#token": tokenHash },
        ExpressionAttributeValues: { ":past": Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    const expired = await call("GET", `/api/conversation/${conversationId}`, {
      key: visitor.token,
      headers: originHeader,
    });
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({ detail: "Invalid API key" });
    // The widget can read the refusal (CORS) and start a new session.
    expect(expired.headers.get("access-control-allow-origin")).toBe(shopOrigin);
    const renewed = await session(tenant.chatbotId, { visitor: visitor.visitor });
    expect(renewed.conversation_id).toBe(conversationId);
  });

  it("holds a visitor to their message limit (429 with the rate headers), and nothing is stored", async () => {
    const tenant = await seedWidgetTenant();
    const visitor = await session(tenant.chatbotId);
    const conversationId = await visitorConversation(tenant, visitor.token);
    const answers = [];
    for (let i = 0; i < 11; i++) {
      answers.push(
        await call("POST", "/api/message", {
          key: visitor.token,
          headers: originHeader,
          body: { conversation_id: conversationId, message: `message ${i}` },
        }),
      );
    }
    expect(answers.slice(0, 10).map((answer) => answer.status)).toEqual(Array(10).fill(200));
    const refused = answers[10];
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get("x-ratelimit-limit")).toBe("10");
    expect(refused?.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused?.headers.get("access-control-allow-origin")).toBe(shopOrigin);
    expect(((refused?.body ?? {}) as { detail: { message: string } }).detail.message).toMatch(
      /10 messages per minute/,
    );
    const history = await call<{ messages: { role: string }[] }>(
      "GET",
      `/api/conversation/${conversationId}/messages?limit=100`,
      { key: visitor.token },
    );
    expect(history.body.messages.filter((message) => message.role === "user")).toHaveLength(10);
    // Reads draw on another bucket: still served.
    expect(history.status).toBe(200);
  });

  it("stops every visitor once the chatbot's daily budget is taken (429 until midnight UTC)", async () => {
    const tenant = await seedWidgetTenant({ daily_message_budget: 2 });
    const first = await session(tenant.chatbotId);
    const second = await session(tenant.chatbotId);
    const one = await visitorConversation(tenant, first.token);
    const two = await visitorConversation(tenant, second.token);
    const send = (token: string, conversationId: string) =>
      call("POST", "/api/message", { key: token, body: { conversation_id: conversationId, message: "Hi" } });
    expect((await send(first.token, one)).status).toBe(200);
    expect((await send(second.token, two)).status).toBe(200);
    const refused = await send(first.token, one);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-limit")).toBe("2");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    const midnight =
      Math.ceil(Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`) / 1000) + 86_400;
    expect(Number(refused.headers.get("x-ratelimit-reset"))).toBe(midnight);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(Math.abs(retryAfter - (midnight - Date.now() / 1000))).toBeLessThan(5);
    expect((refused.body as { detail: { message: string } }).detail.message).toMatch(
      /2 visitor messages for today/,
    );
    // An API key is not held to the widget's budget.
    const byKey = await call<{ conversation_id: string }>("POST", "/api/conversation", {
      key: tenant.apiKey,
      body: { chatbot_id: tenant.chatbotId },
    });
    expect((await send(tenant.apiKey, byKey.body.conversation_id)).status).toBe(200);
  });
});

describe("CORS", () => {
  it("answers preflights on the widget's paths, and on no other", async () => {
    const tenant = await seedWidgetTenant();
    const visitor = await session(tenant.chatbotId);
    const conversationId = await visitorConversation(tenant, visitor.token);
    const preflight = (path: string, method: string) =>
      call("OPTIONS", path, {
        authorization: null,
        headers: { origin: shopOrigin, "access-control-request-method": method },
      });
    for (const [path, methods] of [
      ["/api/conversation", "POST, OPTIONS"],
      ["/api/message", "POST, OPTIONS"],
      [`/api/conversation/${conversationId}`, "GET, OPTIONS"],
      [`/api/conversation/${conversationId}/messages`, "GET, OPTIONS"],
      [`/api/conversation/${conversationId}/handoff`, "POST, OPTIONS"],
      [`/api/message/${randomUUID()}/feedback`, "POST, OPTIONS"],
    ] as const) {
      const answer = await preflight(path, methods.split(",")[0] ?? "");
      expect(answer.status, path).toBe(204);
      expect(answer.headers.get("access-control-allow-origin"), path).toBe(shopOrigin);
      expect(answer.headers.get("access-control-allow-methods"), path).toBe(methods);
      expect(answer.headers.get("access-control-allow-headers"), path).toBe(
        "authorization, content-type, idempotency-key",
      );
      expect(answer.headers.get("access-control-allow-credentials"), path).toBeNull();
    }
    for (const path of [
      "/api/conversations",
      `/api/conversation/${conversationId}/close`,
      "/api/me",
      "/manage/chatbots",
      `/manage/chatbots/${tenant.chatbotId}/widget`,
      "/nowhere",
    ]) {
      const answer = await preflight(path, "GET");
      expect([404, 405], path).toContain(answer.status);
      expect(answer.headers.get("access-control-allow-origin"), path).toBeNull();
    }
    const stream = await fetch(`${environment.streamUrl}/api/message/stream`, {
      method: "OPTIONS",
      headers: { origin: shopOrigin, "access-control-request-method": "POST" },
    });
    expect(stream.status).toBe(204);
    expect(stream.headers.get("access-control-allow-origin")).toBe(shopOrigin);
    expect(stream.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
  });

  it("gives an API key's answers no CORS headers, on the widget's routes too", async () => {
    const tenant = await seedWidgetTenant();
    const started = await call<{ conversation_id: string }>("POST", "/api/conversation", {
      key: tenant.apiKey,
      headers: originHeader,
      body: { chatbot_id: tenant.chatbotId },
    });
    expect(started.status).toBe(200);
    expect(started.headers.get("access-control-allow-origin")).toBeNull();
    const listed = await call("GET", "/api/conversations", { key: tenant.apiKey, headers: originHeader });
    expect(listed.headers.get("access-control-allow-origin")).toBeNull();
    const manage = await call("GET", "/manage/chatbots", { key: tenant.manageKey, headers: originHeader });
    expect(manage.headers.get("access-control-allow-origin")).toBeNull();
  });
});
