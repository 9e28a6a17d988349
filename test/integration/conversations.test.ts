/** POST /api/conversation : happy paths, errors, and tenant isolation. */
import { randomUUID } from "node:crypto";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { keys, records } from "#functions/store/items";
import { api, call, domain, seedTenant, type Tenant, UUID, validationItems } from "#test/support/harness";

let shop: Tenant;
let otherShop: Tenant;

beforeAll(async () => {
  [shop, otherShop] = await Promise.all([seedTenant(), seedTenant()]);
});

async function storedContact(contactId: string) {
  const { Item } = await domain().db.client.send(
    new GetCommand({ TableName: domain().db.tableName, Key: keys.contact(contactId), ConsistentRead: true }),
  );
  return Item ? records.contact(Item) : undefined;
}

async function storedConversation(organizationId: string, conversationId: string) {
  const { Item } = await domain().db.client.send(
    new GetCommand({
      TableName: domain().db.tableName,
      Key: keys.conversation(organizationId, conversationId),
      ConsistentRead: true,
    }),
  );
  return Item ? records.conversation(Item) : undefined;
}

describe("starting a conversation: happy paths", () => {
  it("returns new ids and generates a contact when none is given", async () => {
    const response = await api.startConversation(shop.apiKey, { chatbot_id: shop.chatbotId });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(["contact_id", "conversation_id"]);
    expect(response.body.conversation_id).toMatch(UUID);
    expect(response.body.contact_id).toMatch(UUID);
    expect(response.headers.get("content-type")).toContain("application/json");
    const contact = await storedContact(response.body.contact_id);
    expect(contact?.organizationId).toBe(shop.organizationId);
  });

  it("stores external_id and the contact's details with the conversation", async () => {
    const response = await api.startConversation(shop.apiKey, {
      chatbot_id: shop.chatbotId,
      external_id: "crm-4711",
      user_name: "Ann Example",
      user_email: "ann@example.com",
      user_phone: "+31 6 1234 5678",
    });

    expect(response.status).toBe(200);
    const conversation = await storedConversation(shop.organizationId, response.body.conversation_id);
    expect(conversation).toMatchObject({ externalId: "crm-4711", chatbotId: shop.chatbotId, status: "open" });
    expect(await storedContact(response.body.contact_id)).toMatchObject({
      userName: "Ann Example",
      userEmail: "ann@example.com",
      userPhone: "+31 6 1234 5678",
    });
  });

  it("creates a contact with the id the client chose", async () => {
    const contactId = randomUUID();
    const response = await api.startConversation(shop.apiKey, {
      chatbot_id: shop.chatbotId,
      contact_id: contactId,
    });

    expect(response.status).toBe(200);
    expect(response.body.contact_id).toBe(contactId);
    expect((await storedContact(contactId))?.organizationId).toBe(shop.organizationId);
  });

  it("reuses an existing contact of the organization and updates the fields sent", async () => {
    const contactId = randomUUID();
    await api.startConversation(shop.apiKey, {
      chatbot_id: shop.chatbotId,
      contact_id: contactId,
      user_name: "Bob",
      user_email: "bob@old.example",
    });

    const second = await api.startConversation(shop.apiKey, {
      chatbot_id: shop.chatbotId,
      contact_id: contactId,
      user_email: "bob@new.example",
    });

    expect(second.status).toBe(200);
    expect(second.body.contact_id).toBe(contactId);
    expect(await storedContact(contactId)).toMatchObject({ userName: "Bob", userEmail: "bob@new.example" });
  });

  it("accepts visitor_id as an alias of contact_id", async () => {
    const visitorId = randomUUID();
    const response = await api.startConversation(shop.apiKey, {
      chatbot_id: shop.chatbotId,
      visitor_id: visitorId,
    });

    expect(response.status).toBe(200);
    expect(response.body.contact_id).toBe(visitorId);
  });

  it("prefers contact_id when both contact_id and visitor_id are sent", async () => {
    const contactId = randomUUID();
    const response = await api.startConversation(shop.apiKey, {
      chatbot_id: shop.chatbotId,
      contact_id: contactId,
      visitor_id: randomUUID(),
    });

    expect(response.body.contact_id).toBe(contactId);
  });

  it("accepts upper-case UUIDs and null for optional fields, and ignores unknown fields", async () => {
    const contactId = randomUUID();
    const response = await api.startConversation(shop.apiKey, {
      chatbot_id: shop.chatbotId.toUpperCase(),
      contact_id: contactId.toUpperCase(),
      user_name: null,
      surprise: { nested: true },
    });

    expect(response.status).toBe(200);
    expect(response.body.contact_id).toBe(contactId);
  });
});

describe("starting a conversation: errors", () => {
  it("answers 404 for a chatbot that does not exist", async () => {
    const response = await api.startConversation(shop.apiKey, { chatbot_id: randomUUID() });

    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: "Chatbot not found" });
  });

  it("reports every failing field in one 422, Pydantic style", async () => {
    const response = await api.startConversation(shop.apiKey, {
      contact_id: "not-a-uuid",
      user_name: 42,
      external_id: "x".repeat(256),
    });

    expect(response.status).toBe(422);
    const detail = { detail: validationItems(response) };
    expect(detail.detail.map((item) => [item.type, item.loc])).toEqual(
      expect.arrayContaining([
        ["missing", ["body", "chatbot_id"]],
        ["uuid_parsing", ["body", "contact_id"]],
        ["string_type", ["body", "user_name"]],
        ["string_too_long", ["body", "external_id"]],
      ]),
    );
    const missing = detail.detail.find((item) => item.type === "missing");
    expect(missing?.msg).toBe("Field required");
    const uuid = detail.detail.find((item) => item.type === "uuid_parsing");
    expect(uuid?.msg).toMatch(/^Input should be a valid UUID, /);
    expect(uuid?.input).toBe("not-a-uuid");
  });

  it("answers 422 model_attributes_type when the body is not an object", async () => {
    const response = await call("POST", "/api/conversation", { key: shop.apiKey, body: "[1,2]" });

    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      detail: [
        {
          type: "model_attributes_type",
          loc: ["body"],
          msg: "Input should be a valid dictionary or object to extract fields from",
          input: [1, 2],
        },
      ],
    });
  });

  it("answers 422 json_invalid for malformed JSON", async () => {
    const response = await call("POST", "/api/conversation", { key: shop.apiKey, body: '{"chatbot_id": ' });

    expect(response.status).toBe(422);
    const [item] = validationItems(response);
    expect(item).toMatchObject({ type: "json_invalid", msg: "JSON decode error" });
    expect(item?.loc[0]).toBe("body");
  });

  it("answers 422 missing for an empty body", async () => {
    const response = await call("POST", "/api/conversation", { key: shop.apiKey });

    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      detail: [{ type: "missing", loc: ["body"], msg: "Field required", input: null }],
    });
  });

  it("reads the body as JSON whatever content type is declared", async () => {
    const response = await call("POST", "/api/conversation", {
      key: shop.apiKey,
      body: JSON.stringify({ chatbot_id: shop.chatbotId }),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });

    expect(response.status).toBe(200);
  });
});

describe("starting a conversation: tenant isolation", () => {
  it("answers 404 for another organization's chatbot, exactly as for an unknown one", async () => {
    const response = await api.startConversation(shop.apiKey, { chatbot_id: otherShop.chatbotId });

    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: "Chatbot not found" });
  });

  it("answers 403 for another organization's contact and leaves it untouched", async () => {
    const contactId = randomUUID();
    await api.startConversation(otherShop.apiKey, {
      chatbot_id: otherShop.chatbotId,
      contact_id: contactId,
      user_name: "Theirs",
    });

    const response = await api.startConversation(shop.apiKey, {
      chatbot_id: shop.chatbotId,
      contact_id: contactId,
      user_name: "Mine now",
    });

    expect(response.status).toBe(403);
    expect(response.body).toEqual({ detail: "Contact does not belong to this organization" });
    expect(await storedContact(contactId)).toMatchObject({
      organizationId: otherShop.organizationId,
      userName: "Theirs",
    });
  });

  it("creates nothing when the chatbot is missing (no stray contact)", async () => {
    const contactId = randomUUID();
    const response = await api.startConversation(shop.apiKey, {
      chatbot_id: randomUUID(),
      contact_id: contactId,
    });

    expect(response.status).toBe(404);
    expect(await storedContact(contactId)).toBeUndefined();
  });
});
