/** POST /api/message and GET /api/conversation/{id}/messages . */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { deleteChatbot } from "#functions/domain/chatbots";
import { closeConversation } from "#functions/domain/conversations";
import { sampleImages } from "#test/fakes/image-server";
import {
  api,
  domain,
  environment,
  isLocal,
  newConversation,
  seedTenant,
  type Tenant,
  UUID,
  validationItems,
} from "#test/support/harness";

let shop: Tenant;
let otherShop: Tenant;

const knowledge = [
  { question: "How long does shipping take?", answer: "Shipping takes two working days." },
  { question: "Can I pay with PayPal?", answer: "Yes, we accept PayPal and credit cards." },
];

beforeAll(async () => {
  [shop, otherShop] = await Promise.all([seedTenant({ knowledge }), seedTenant()]);
});

describe("sending a message: happy paths", () => {
  it("answers with the chatbot's reply messages in the contract's shape", async () => {
    const conversationId = await newConversation(shop);

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "how many days does the shipping take?",
    });

    expect(response.status).toBe(200);
    expect(response.body.conversation_id).toBe(conversationId);
    expect(response.body.messages.length).toBeGreaterThanOrEqual(1);
    const [reply] = response.body.messages;
    expect(Object.keys(reply ?? {}).sort()).toEqual([
      "content",
      "created_at",
      "message_id",
      "role",
      "sources",
    ]);
    expect(reply).toMatchObject({ role: "assistant", content: "Shipping takes two working days." });
    // The knowledge entry it answered from, as its source.
    expect(reply?.sources).toEqual([
      { source_id: expect.stringMatching(UUID), title: "How long does shipping take?", url: null },
    ]);
    expect(reply?.message_id).toMatch(UUID);
    expect(reply?.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });

  it("greets with the welcome message and falls back when it has no answer", async () => {
    const conversationId = await newConversation(shop);

    const greeting = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "Hello!",
    });
    const unknown = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "What is the airspeed of a swallow?",
    });

    expect(greeting.body.messages[0]?.content).toBe("Welcome to the test shop!");
    expect(unknown.body.messages[0]?.content).toBe("Sorry, I don't know that one.");
    // Neither drew on the knowledge.
    expect(greeting.body.messages[0]?.sources).toEqual([]);
    expect(unknown.body.messages[0]?.sources).toEqual([]);
  });

  it("stores the visitor's message and the reply, in order, in the history", async () => {
    const conversationId = await newConversation(shop);
    await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: "Can I pay with paypal" });
    await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: "thanks, bye" });

    const history = await api.listMessages(shop.apiKey, conversationId);

    expect(history.status).toBe(200);
    expect(history.body.messages.map((message) => [message.role, message.content])).toEqual([
      ["user", "Can I pay with paypal"],
      ["assistant", "Yes, we accept PayPal and credit cards."],
      ["user", "thanks, bye"],
      ["assistant", "Sorry, I don't know that one."],
    ]);
    // History carries each reply's sources too: the answer its entry's, the fallback none.
    expect(history.body.messages.map((message) => message.sources.map((source) => source.title))).toEqual([
      [],
      ["Can I pay with PayPal?"],
      [],
      [],
    ]);
    expect(history.body).toMatchObject({
      conversation_id: conversationId,
      has_more: false,
      next_cursor: null,
    });
  });

  it("keeps an image sent as data as a reference (type, media type, digest, size)", async () => {
    const conversationId = await newConversation(shop);
    const data = sampleImages.png.toString("base64");

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "",
      attachments: [{ type: "image", data, media_type: "image/png" }],
    });

    expect(response.status).toBe(200);
    const history = await api.listMessages(shop.apiKey, conversationId);
    expect(history.body.messages[0]?.attachments).toEqual([
      {
        type: "image",
        media_type: "image/png",
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        size: sampleImages.png.length,
      },
    ]);
  });
});

describe.runIf(isLocal)("sending a message with an image URL (local image host)", () => {
  it("fetches the image and stores its URL", async () => {
    const conversationId = await newConversation(shop);
    const url = `${environment.imageBaseUrl}/jpeg.jpg`;

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "here is a photo",
      attachments: [{ type: "image", url }],
    });

    expect(response.status).toBe(200);
    const history = await api.listMessages(shop.apiKey, conversationId);
    expect(history.body.messages[0]?.attachments).toEqual([{ type: "image", url, media_type: "image/jpeg" }]);
  });

  it("refuses an image URL that does not answer with an image, and stores nothing", async () => {
    const conversationId = await newConversation(shop);

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "broken",
      attachments: [{ type: "image", url: `${environment.imageBaseUrl}/missing.png` }],
    });

    expect(response.status).toBe(422);
    expect(validationItems(response)[0]?.loc).toEqual(["body", "attachments", 0, "url"]);
    expect((await api.listMessages(shop.apiKey, conversationId)).body.messages).toEqual([]);
  });
});

describe("sending a message: errors", () => {
  it("refuses image URLs that point at private or metadata addresses", async () => {
    const conversationId = await newConversation(shop);
    for (const url of [
      "https://169.254.169.254/latest/meta-data/",
      "https://127.0.0.1/cat.png",
      "https://10.0.0.8/x.png",
    ]) {
      const response = await api.sendMessage(shop.apiKey, {
        conversation_id: conversationId,
        message: "look",
        attachments: [{ type: "image", url }],
      });
      expect(response.status).toBe(422);
      expect(validationItems(response)[0]?.loc).toEqual(["body", "attachments", 0, "url"]);
    }
  });

  it("answers 404 for an unknown conversation", async () => {
    const response = await api.sendMessage(shop.apiKey, { conversation_id: randomUUID(), message: "hi" });

    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: "Conversation not found" });
  });

  it("answers 409 for a closed conversation", async () => {
    const conversationId = await newConversation(shop);
    await closeConversation(domain(), { organizationId: shop.organizationId, conversationId });

    const response = await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: "hi" });

    expect(response.status).toBe(409);
    expect(response.body).toEqual({ detail: "Conversation is closed" });
  });

  it("answers 409 once the conversation's chatbot is deleted, and stores nothing", async () => {
    const tenant = await seedTenant();
    const conversationId = await newConversation(tenant);
    await deleteChatbot(domain(), tenant.organizationId, tenant.chatbotId);

    const response = await api.sendMessage(tenant.apiKey, { conversation_id: conversationId, message: "hi" });

    expect(response.status).toBe(409);
    expect(response.body).toEqual({ detail: "Conversation is closed" });
    const history = await api.listMessages(tenant.apiKey, conversationId);
    expect(history.status).toBe(200);
    expect(history.body.messages).toEqual([]);
  });

  it("gives each of several messages sent at once to one conversation its own turn", async () => {
    const conversationId = await newConversation(shop);
    const texts = ["first", "second", "third", "fourth"].map((word) => `${word} at once`);

    const answers = await Promise.all(
      texts.map((message) => api.sendMessage(shop.apiKey, { conversation_id: conversationId, message })),
    );

    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const history = await api.listMessages(shop.apiKey, conversationId);
    const roles = history.body.messages.map((message) => message.role);
    expect(roles).toEqual(texts.flatMap(() => ["user", "assistant"]));
    const sent = history.body.messages.filter((message) => message.role === "user").map((m) => m.content);
    expect([...sent].sort()).toEqual([...texts].sort());
  });

  it("reports the attachment type at body.attachments[i].type", async () => {
    const conversationId = await newConversation(shop);

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "see",
      attachments: [
        { type: "image", url: "https://example.com/a.png" },
        { type: "video", url: "https://example.com/a.mp4" },
      ],
    });

    expect(response.status).toBe(422);
    expect(validationItems(response)).toEqual([
      {
        type: "literal_error",
        loc: ["body", "attachments", 1, "type"],
        msg: "Input should be 'image'",
        input: "video",
        ctx: { expected: "'image'" },
      },
    ]);
  });

  it("reports an attachment without a type as missing, with the attachment as its input", async () => {
    const conversationId = await newConversation(shop);

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "see",
      attachments: [{ url: "https://example.com/a.png" }],
    });

    expect(response.status).toBe(422);
    expect(validationItems(response)).toEqual([
      {
        type: "missing",
        loc: ["body", "attachments", 0, "type"],
        msg: "Field required",
        input: { url: "https://example.com/a.png" },
      },
    ]);
  });

  it("validates attachment shapes and limits", async () => {
    const conversationId = await newConversation(shop);
    const send = (attachments: unknown, message = "x") =>
      api.sendMessage(shop.apiKey, { conversation_id: conversationId, message, attachments });
    const image = { type: "image", url: "https://example.com/a.png" };

    const tooMany = await send([image, image, image, image, image]);
    const notAList = await send({ type: "image" });
    const both = await send([{ ...image, data: "AAAA", media_type: "image/png" }]);
    const plainHttp = await send([{ type: "image", url: "http://example.com/a.png" }]);
    const noMediaType = await send([{ type: "image", data: "AAAA" }]);
    const badBase64 = await send([{ type: "image", data: "not base64!", media_type: "image/png" }]);
    const badMediaType = await send([{ type: "image", data: "AAAA", media_type: "image/tiff" }]);

    const first = (response: { body: unknown }) => validationItems(response)[0];
    expect(first(tooMany)).toMatchObject({ type: "too_long", loc: ["body", "attachments"] });
    expect(first(notAList)).toMatchObject({
      type: "list_type",
      loc: ["body", "attachments"],
      msg: "Input should be a valid list",
    });
    expect(first(both)).toMatchObject({ type: "value_error", loc: ["body", "attachments", 0] });
    expect(first(plainHttp)).toMatchObject({ type: "url_scheme", loc: ["body", "attachments", 0, "url"] });
    expect(first(noMediaType)).toMatchObject({
      type: "missing",
      loc: ["body", "attachments", 0, "media_type"],
    });
    expect(first(badBase64)?.loc).toEqual(["body", "attachments", 0, "data"]);
    expect(first(badMediaType)).toMatchObject({
      type: "literal_error",
      loc: ["body", "attachments", 0, "media_type"],
    });
    for (const response of [tooMany, notAList, both, plainHttp, noMediaType, badBase64, badMediaType]) {
      expect(response.status).toBe(422);
    }
  });

  it("refuses an empty message without attachments, and an over-long one", async () => {
    const conversationId = await newConversation(shop);

    const empty = await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: "  " });
    const long = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "x".repeat(8_001),
    });
    const missing = await api.sendMessage(shop.apiKey, { conversation_id: conversationId });

    expect(validationItems(empty)[0]).toMatchObject({
      type: "string_too_short",
      loc: ["body", "message"],
    });
    expect(validationItems(long)[0]).toMatchObject({
      type: "string_too_long",
      loc: ["body", "message"],
    });
    expect(validationItems(missing)[0]).toMatchObject({
      type: "missing",
      loc: ["body", "message"],
    });
  });
});

describe("history: pagination", () => {
  it("pages oldest first with a cursor until has_more is false", async () => {
    const conversationId = await newConversation(shop);
    for (const text of ["one", "two", "three"]) {
      await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: text });
    }

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = await api.listMessages(shop.apiKey, conversationId, query);
      expect(page.status).toBe(200);
      seen.push(...page.body.messages.map((message) => `${message.role}:${message.content}`));
      expect(page.body.has_more).toBe(page.body.next_cursor !== null);
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor);

    expect(pages).toBe(2);
    expect(seen.filter((entry) => entry.startsWith("user:"))).toEqual(["user:one", "user:two", "user:three"]);
    expect(seen).toHaveLength(6);
  });

  it("refuses a forged cursor and one from another conversation (422)", async () => {
    const first = await newConversation(shop);
    const second = await newConversation(shop);
    for (const conversationId of [first, second]) {
      await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: "a" });
      await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: "b" });
    }
    const page = await api.listMessages(shop.apiKey, first, "?limit=1");
    const cursor = page.body.next_cursor ?? "";
    const forged = `${Buffer.from("MSG#0000000001#01").toString("base64url")}.AAAAAAAAAAAAAAAAAAAAAA`;

    for (const bad of [cursor, forged, "garbage"]) {
      const response = await api.listMessages(
        shop.apiKey,
        bad === cursor ? second : first,
        `?cursor=${encodeURIComponent(bad)}`,
      );
      expect(response.status).toBe(422);
      expect(validationItems(response)[0]?.loc).toEqual(["query", "cursor"]);
    }
  });

  it("checks limit: 1–100, an integer", async () => {
    const conversationId = await newConversation(shop);
    const expectations: [string, string][] = [
      ["0", "greater_than_equal"],
      ["101", "less_than_equal"],
      ["-3", "greater_than_equal"],
      ["abc", "int_parsing"],
      ["1.5", "int_parsing"],
      ["", "int_parsing"],
    ];
    for (const [limit, type] of expectations) {
      const response = await api.listMessages(shop.apiKey, conversationId, `?limit=${limit}`);
      expect(response.status).toBe(422);
      // Like Pydantic, the item shows the query value as it was sent: text.
      expect(validationItems(response)).toEqual([
        expect.objectContaining({ type, loc: ["query", "limit"], input: limit }),
      ]);
    }
    expect((await api.listMessages(shop.apiKey, conversationId, "?limit=100")).status).toBe(200);
    expect((await api.listMessages(shop.apiKey, conversationId, "?limit=%207%20")).status).toBe(200);
  });

  it("answers 422 for a conversation id that is not a UUID", async () => {
    const response = await api.listMessages(shop.apiKey, "nope");

    expect(response.status).toBe(422);
    expect(validationItems(response)[0]).toMatchObject({
      type: "uuid_parsing",
      loc: ["path", "conversation_id"],
    });
  });
});

describe("messages: tenant isolation", () => {
  it("hides another organization's conversation from both endpoints (404, same as unknown)", async () => {
    const theirs = await newConversation(otherShop);
    await api.sendMessage(otherShop.apiKey, { conversation_id: theirs, message: "private" });

    const send = await api.sendMessage(shop.apiKey, { conversation_id: theirs, message: "peek" });
    const list = await api.listMessages(shop.apiKey, theirs);

    expect(send.status).toBe(404);
    expect(send.body).toEqual({ detail: "Conversation not found" });
    expect(list.status).toBe(404);
    expect(list.body).toEqual({ detail: "Conversation not found" });
    const own = await api.listMessages(otherShop.apiKey, theirs);
    expect(own.body.messages.map((message) => message.content)).toEqual(["private", expect.any(String)]);
  });
});
