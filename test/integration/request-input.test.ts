/**
 * What a request body and its ids may look like: every UUID spelling Pydantic
 * accepts, answered and stored canonically; unknown fields ignored whatever their names, with no
 * way to reach a prototype; and a nesting limit that no body can get past into a 500.
 */
import { randomUUID } from "node:crypto";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { keys, records } from "#functions/store/items";
import { api, call, domain, seedTenant, type Tenant, validationItems } from "#test/support/harness";

let shop: Tenant;

beforeAll(async () => {
  shop = await seedTenant();
});

/** The spellings of one UUID that Pydantic v2 accepts. */
function spellings(id: string): Record<string, string> {
  const simple = id.replaceAll("-", "");
  return {
    "upper case": id.toUpperCase(),
    "32 hex digits": simple,
    "32 hex digits, upper case": simple.toUpperCase(),
    braces: `{${id}}`,
    "braces, upper case": `{${id.toUpperCase()}}`,
    "urn:uuid:": `urn:uuid:${id}`,
    "urn:uuid:, upper-case digits": `urn:uuid:${id.toUpperCase()}`,
  };
}

async function storedContact(contactId: string) {
  const { Item } = await domain().db.client.send(
    new GetCommand({ TableName: domain().db.tableName, Key: keys.contact(contactId), ConsistentRead: true }),
  );
  return Item ? records.contact(Item) : undefined;
}

describe("UUIDs in every form Pydantic accepts", () => {
  it("accepts each spelling of chatbot_id and contact_id, and answers and stores the canonical form", async () => {
    for (const [form, chatbotId] of Object.entries(spellings(shop.chatbotId))) {
      const contactId = randomUUID();
      const contactSpelling = Object.values(spellings(contactId))[
        Object.keys(spellings(contactId)).indexOf(form)
      ];

      const response = await api.startConversation(shop.apiKey, {
        chatbot_id: chatbotId,
        contact_id: contactSpelling,
      });

      expect(response.status, `${form}: ${response.text}`).toBe(200);
      expect(response.body.contact_id, form).toBe(contactId);
      expect((await storedContact(contactId))?.contactId, form).toBe(contactId);
    }
  });

  it("finds the same contact whichever spelling a later request uses", async () => {
    const contactId = randomUUID();
    const first = await api.startConversation(shop.apiKey, {
      chatbot_id: shop.chatbotId,
      contact_id: `{${contactId.toUpperCase()}}`,
      user_name: "Ann",
    });
    const again = await api.startConversation(shop.apiKey, {
      chatbot_id: shop.chatbotId,
      visitor_id: `urn:uuid:${contactId}`,
    });

    expect(first.body.contact_id).toBe(contactId);
    expect(again.body.contact_id).toBe(contactId);
    expect((await storedContact(contactId))?.userName).toBe("Ann");
  });

  it("accepts any spelling of conversation_id in the body and in the path, answering the canonical one", async () => {
    const started = await api.startConversation(shop.apiKey, { chatbot_id: shop.chatbotId });
    const conversationId = started.body.conversation_id;
    const forms = Object.values(spellings(conversationId));

    for (const form of forms) {
      const sent = await api.sendMessage(shop.apiKey, { conversation_id: form, message: "hello" });
      expect(sent.status, `${form}: ${sent.text}`).toBe(200);
      expect(sent.body.conversation_id).toBe(conversationId);
    }
    for (const form of forms.filter((text) => !text.includes("{"))) {
      const listed = await api.listMessages(shop.apiKey, encodeURIComponent(form));
      expect(listed.status, `${form}: ${listed.text}`).toBe(200);
      expect(listed.body.conversation_id).toBe(conversationId);
      expect(listed.body.messages).toHaveLength(forms.length * 2);
    }
  });

  it("says truly what is wrong with a UUID it refuses", async () => {
    const id = randomUUID();
    const cases: [string, string][] = [
      [id.replaceAll("-", "").slice(1), "invalid length: expected length 32 for simple format, found 31"],
      [`{${id.slice(0, -1)}}`, "invalid group length in group 4: expected 12, found 11"],
      [`urn:uuid:${id}0`, "invalid group length in group 4: expected 12, found 13"],
      [`urn:uuid:${id.replaceAll("-", "")}`, "invalid group count: expected 5, found 1"],
      [
        `{${id}`,
        "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `{` at 1",
      ],
    ];
    for (const [input, error] of cases) {
      const response = await api.startConversation(shop.apiKey, { chatbot_id: input });
      expect(response.status).toBe(422);
      expect(validationItems(response)).toEqual([
        {
          type: "uuid_parsing",
          loc: ["body", "chatbot_id"],
          msg: `Input should be a valid UUID, ${error}`,
          input,
          ctx: { error },
        },
      ]);
    }
  });
});

describe("unknown fields named like prototype keys", () => {
  it("ignores __proto__ and constructor like any unknown field", async () => {
    const contactId = randomUUID();
    const body = `{"chatbot_id":"${shop.chatbotId}","contact_id":"${contactId}","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}`;

    const response = await call<{ contact_id: string }>("POST", "/api/conversation", {
      key: shop.apiKey,
      body,
    });

    expect(response.status, response.text).toBe(200);
    expect(response.body.contact_id).toBe(contactId);
  });

  it("never reads a field through __proto__: a field given only there is missing", async () => {
    const body = `{"__proto__":{"chatbot_id":"${shop.chatbotId}"}}`;

    const response = await call("POST", "/api/conversation", { key: shop.apiKey, body });

    expect(response.status).toBe(422);
    expect(validationItems(response)).toEqual([
      { type: "missing", loc: ["body", "chatbot_id"], msg: "Field required", input: expect.any(Object) },
    ]);
  });

  it("leaves the next request unaffected (no prototype was changed)", async () => {
    await call("POST", "/api/conversation", {
      key: shop.apiKey,
      body: '{"__proto__":{"chatbot_id":"00000000-0000-4000-8000-000000000000","isAdmin":true}}',
    });

    const response = await api.startConversation(shop.apiKey, {});

    expect(response.status).toBe(422);
    expect(validationItems(response)).toEqual([
      { type: "missing", loc: ["body", "chatbot_id"], msg: "Field required", input: {} },
    ]);
  });
});

describe("nesting depth", () => {
  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
  /** The item for a body whose 65th level opens at `position`. */
  const deepItem = (position: number) => ({
    type: "json_invalid",
    loc: ["body", position],
    msg: "JSON decode error: nested deeper than 64 levels",
    input: {},
    ctx: { error: "nested deeper than 64 levels" },
  });

  it("accepts an unknown field nested up to the limit", async () => {
    // The body object is level 1, so its field's value may nest 63 more levels.
    const body = `{"chatbot_id":"${shop.chatbotId}","extra":${nested(63)}}`;

    const response = await call("POST", "/api/conversation", { key: shop.apiKey, body });

    expect(response.status, response.text).toBe(200);
  });

  it.each([
    ["one level past the limit", 64],
    ["2,000 levels", 2_000],
    ["2,200 levels", 2_200],
    ["100,000 levels", 100_000],
  ])(
    "refuses an unknown field nested %s with one json_invalid item, with and without an Idempotency-Key",
    async (_name, depth) => {
      const prefix = `{"chatbot_id":"${shop.chatbotId}","extra":`;
      const body = `${prefix}${nested(depth)}}`;
      for (const headers of [{}, { "idempotency-key": `deep-${randomUUID()}` }] as Record<string, string>[]) {
        const response = await call("POST", "/api/conversation", { key: shop.apiKey, body, headers });

        expect(response.status, response.text).toBe(422);
        // The first bracket is level 2, so level 65 is the 64th.
        expect(validationItems(response)).toEqual([deepItem(prefix.length + 63)]);
      }
    },
  );

  it("refuses deep objects as well as deep lists, on both POST routes", async () => {
    const deepObject = `${'{"a":'.repeat(3_000)}1${"}".repeat(3_000)}`;
    for (const path of ["/api/conversation", "/api/message"]) {
      const response = await call("POST", path, {
        key: shop.apiKey,
        body: deepObject,
        headers: { "idempotency-key": `deep-${randomUUID()}` },
      });

      expect(response.status, response.text).toBe(422);
      expect(validationItems(response)).toEqual([deepItem('{"a":'.length * 64)]);
    }
  });

  it("counts only structure: brackets inside strings do not nest", async () => {
    const body = JSON.stringify({ chatbot_id: shop.chatbotId, note: "[".repeat(5_000) + '{"'.repeat(100) });

    const response = await call("POST", "/api/conversation", { key: shop.apiKey, body });

    expect(response.status, response.text).toBe(200);
  });
});
