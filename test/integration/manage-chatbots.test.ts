/**
 * Chatbots and their settings, and their knowledge entries: create, read, change, delete; what a
 * change means for the public API; the openai engine's server stays the operators'; another
 * organization's chatbots are not found.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { api, newConversation } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  type Person,
  seedManagedTenant,
  seedOperator,
} from "#test/support/management";

interface Chatbot {
  chatbot_id: string;
  name: string;
  engine: Record<string, unknown>;
  instructions: string;
  welcome_message: string;
  fallback_reply: string;
  temperature: number;
  max_output_tokens: number;
  history_window: number;
  updated_at: string;
}

interface Entry {
  entry_id: string;
  kind: string;
  question: string | null;
  answer: string | null;
  title: string | null;
  text: string | null;
}

let home: ManagedTenant;
let other: ManagedTenant;
let operator: Person;
const as = (tenant: ManagedTenant) => ({ as: tenant.admin.token, organization: tenant.organizationId });

describe.runIf(hasIdentity)("chatbots", () => {
  beforeAll(async () => {
    [home, other, operator] = await Promise.all([seedManagedTenant(), seedManagedTenant(), seedOperator()]);
  });

  it("creates a chatbot with defaults, reads it, changes some settings and keeps the rest", async () => {
    const created = await manage<Chatbot>("POST", "/manage/chatbots", {
      ...as(home),
      body: { name: "Support", welcome_message: "Hello from support!" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: "Support",
      engine: { kind: "scripted" },
      welcome_message: "Hello from support!",
      temperature: 0.3,
      max_output_tokens: 800,
      history_window: 20,
    });
    const id = created.body.chatbot_id;
    const read = await manage<Chatbot>("GET", `/manage/chatbots/${id}`, {
      as: home.viewer.token,
      organization: home.organizationId,
    });
    expect(read.body).toEqual(created.body);

    const changed = await manage<Chatbot>("PATCH", `/manage/chatbots/${id}`, {
      ...as(home),
      body: {
        instructions: "Be brief.",
        fallback_reply: "Ask a human.",
        temperature: 0.7,
        engine: { kind: "bedrock", model_id: "anthropic.claude-engine-test-v1" },
      },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      name: "Support",
      instructions: "Be brief.",
      fallback_reply: "Ask a human.",
      welcome_message: "Hello from support!",
      temperature: 0.7,
      engine: { kind: "bedrock", model_id: "anthropic.claude-engine-test-v1" },
    });
    const listed = await manage<{ chatbots: Chatbot[] }>("GET", "/manage/chatbots", as(home));
    expect(listed.body.chatbots.map((bot) => bot.chatbot_id)).toEqual(
      expect.arrayContaining([home.chatbotId, id]),
    );
    expect(listed.body.chatbots.map((bot) => bot.chatbot_id)).not.toContain(other.chatbotId);
  });

  it("answers a visitor with the welcome message an admin set", async () => {
    await manage("PATCH", `/manage/chatbots/${home.chatbotId}`, {
      ...as(home),
      body: { welcome_message: "Welcome, set from the console!" },
    });
    const conversationId = await newConversation(home);
    const reply = await api.sendMessage(home.apiKey, { conversation_id: conversationId, message: "Hello" });
    expect(reply.body.messages[0]?.content).toBe("Welcome, set from the console!");
  });

  it("refuses settings out of bounds with 422 fields", async () => {
    const refused = await manage("PATCH", `/manage/chatbots/${home.chatbotId}`, {
      ...as(home),
      body: {
        temperature: 2,
        max_output_tokens: 5,
        history_window: 51,
        engine: { kind: "gpt" },
        welcome_message: "",
      },
    });
    expect(refused.status).toBe(422);
    const locs = (
      refused.body as { error: { details: { fields: { loc: string[] }[] } } }
    ).error.details.fields.map((field) => field.loc.join("."));
    expect(locs).toEqual(
      expect.arrayContaining([
        "body.temperature",
        "body.max_output_tokens",
        "body.history_window",
        "body.engine.kind",
        "body.welcome_message",
      ]),
    );
  });

  it("lets an admin choose a public model server, and leaves the stage's key secrets to operators", async () => {
    const bot = await manage<Chatbot>("POST", "/manage/chatbots", {
      ...as(home),
      body: { name: "Model bot" },
    });
    const id = bot.body.chatbot_id;
    const metadata = await manage("PATCH", `/manage/chatbots/${id}`, {
      ...as(home),
      body: { engine: { kind: "openai", base_url: "http://169.254.169.254/latest", model: "x" } },
    });
    expect([metadata.status, errorCode(metadata)]).toEqual([422, "invalid_argument"]);
    const byAdmin = await manage<Chatbot>("PATCH", `/manage/chatbots/${id}`, {
      ...as(home),
      body: { engine: { kind: "openai", base_url: "https://models.example/v1", model: "m0" } },
    });
    expect(byAdmin.status).toBe(200);
    const byOperator = await manage<Chatbot>("PATCH", `/manage/chatbots/${id}`, {
      as: operator.token,
      organization: home.organizationId,
      body: {
        engine: {
          kind: "openai",
          base_url: "https://models.example/v1",
          model: "m1",
          api_key_secret: "acme",
        },
      },
    });
    expect(byOperator.status).toBe(200);
    const modelOnly = await manage<Chatbot>("PATCH", `/manage/chatbots/${id}`, {
      ...as(home),
      body: { engine: { kind: "openai", model: "m2" } },
    });
    expect(modelOnly.body.engine).toEqual({
      kind: "openai",
      base_url: "https://models.example/v1",
      model: "m2",
      api_key_hint: null,
      api_key_secret: "acme",
    });
    const secretByAdmin = await manage("PATCH", `/manage/chatbots/${id}`, {
      ...as(home),
      body: { engine: { kind: "openai", model: "m2", api_key_secret: "someone-elses" } },
    });
    expect([secretByAdmin.status, errorCode(secretByAdmin)]).toEqual([403, "forbidden"]);
  });

  it("deletes a chatbot: no new conversations (404), its conversations take no more messages (409)", async () => {
    const bot = await manage<Chatbot>("POST", "/manage/chatbots", {
      ...as(home),
      body: { name: "Short-lived" },
    });
    const id = bot.body.chatbot_id;
    const conversation = await api.startConversation(home.apiKey, { chatbot_id: id });
    expect(conversation.status).toBe(200);
    const deleted = await manage("DELETE", `/manage/chatbots/${id}`, as(home));
    expect([deleted.status, deleted.text]).toEqual([204, ""]);
    const gone = await manage("GET", `/manage/chatbots/${id}`, as(home));
    expect([gone.status, errorCode(gone)]).toEqual([404, "chatbot_not_found"]);
    const start = await api.startConversation(home.apiKey, { chatbot_id: id });
    expect([start.status, start.body]).toEqual([404, { detail: "Chatbot not found" }]);
    const message = await api.sendMessage(home.apiKey, {
      conversation_id: conversation.body.conversation_id,
      message: "still there?",
    });
    expect([message.status, message.body]).toEqual([409, { detail: "Conversation is closed" }]);
  });

  it("finds no chatbot of another organization, whatever the method", async () => {
    for (const chatbotId of [other.chatbotId, randomUUID()]) {
      for (const [method, body] of [
        ["GET", undefined],
        ["PATCH", { name: "Taken over" }],
        ["DELETE", undefined],
      ] as const) {
        const answer = await manage(method, `/manage/chatbots/${chatbotId}`, {
          ...as(home),
          ...(body ? { body } : {}),
        });
        expect([method, answer.status, errorCode(answer)]).toEqual([method, 404, "chatbot_not_found"]);
      }
    }
    const untouched = await manage<Chatbot>("GET", `/manage/chatbots/${other.chatbotId}`, as(other));
    expect(untouched.body.name).toBe("Test assistant");
  });
});

describe.runIf(hasIdentity)("knowledge entries", () => {
  beforeAll(async () => {
    [home, other] = await Promise.all([seedManagedTenant(), seedManagedTenant()]);
  });

  it("adds, lists, changes and removes entries, and the scripted chatbot answers from them", async () => {
    const path = `/manage/chatbots/${home.chatbotId}/knowledge`;
    const qa = await manage<Entry>("POST", path, {
      ...as(home),
      body: { kind: "qa", question: "Do you ship to Belgium?", answer: "Yes, within two days." },
    });
    expect(qa.status).toBe(201);
    const snippet = await manage<Entry>("POST", path, {
      ...as(home),
      body: { kind: "snippet", title: "Hours", text: "We are open on weekdays from nine to five." },
    });
    expect(snippet.body).toMatchObject({ kind: "snippet", title: "Hours", question: null });
    const listed = await manage<{ entries: Entry[] }>("GET", path, {
      as: home.viewer.token,
      organization: home.organizationId,
    });
    expect(listed.body.entries.map((entry) => entry.entry_id)).toEqual([
      qa.body.entry_id,
      snippet.body.entry_id,
    ]);

    const conversationId = await newConversation(home);
    const answer = await api.sendMessage(home.apiKey, {
      conversation_id: conversationId,
      message: "Do you ship to Belgium?",
    });
    expect(answer.body.messages[0]?.content).toContain("within two days");

    const changed = await manage<Entry>("PATCH", `${path}/${qa.body.entry_id}`, {
      ...as(home),
      body: { kind: "qa", question: "Do you ship to Belgium?", answer: "Yes, next day." },
    });
    expect(changed.body.answer).toBe("Yes, next day.");
    const removed = await manage("DELETE", `${path}/${snippet.body.entry_id}`, as(home));
    expect(removed.status).toBe(204);
    const again = await manage("DELETE", `${path}/${snippet.body.entry_id}`, as(home));
    expect([again.status, errorCode(again)]).toEqual([404, "knowledge_entry_not_found"]);
  });

  it("refuses empty texts and unknown kinds with 422 fields", async () => {
    const refused = await manage("POST", `/manage/chatbots/${home.chatbotId}/knowledge`, {
      ...as(home),
      body: { kind: "qa", question: "", answer: "x".repeat(8_001) },
    });
    expect(refused.status).toBe(422);
    const kind = await manage("POST", `/manage/chatbots/${home.chatbotId}/knowledge`, {
      ...as(home),
      body: { kind: "faq", text: "x" },
    });
    expect(kind.status).toBe(422);
  });

  it("reaches no other organization's knowledge", async () => {
    const theirs = await manage<Entry>("POST", `/manage/chatbots/${other.chatbotId}/knowledge`, {
      ...as(other),
      body: { kind: "qa", question: "Secret?", answer: "Theirs." },
    });
    const list = await manage("GET", `/manage/chatbots/${other.chatbotId}/knowledge`, as(home));
    expect([list.status, errorCode(list)]).toEqual([404, "chatbot_not_found"]);
    const add = await manage("POST", `/manage/chatbots/${other.chatbotId}/knowledge`, {
      ...as(home),
      body: { kind: "qa", question: "q", answer: "a" },
    });
    expect([add.status, errorCode(add)]).toEqual([404, "chatbot_not_found"]);
    const change = await manage(
      "PATCH",
      `/manage/chatbots/${other.chatbotId}/knowledge/${theirs.body.entry_id}`,
      {
        ...as(home),
        body: { kind: "qa", question: "q", answer: "mine now" },
      },
    );
    expect([change.status, errorCode(change)]).toEqual([404, "knowledge_entry_not_found"]);
    const remove = await manage(
      "DELETE",
      `/manage/chatbots/${other.chatbotId}/knowledge/${theirs.body.entry_id}`,
      as(home),
    );
    expect([remove.status, errorCode(remove)]).toEqual([404, "knowledge_entry_not_found"]);
    const still = await manage<{ entries: Entry[] }>(
      "GET",
      `/manage/chatbots/${other.chatbotId}/knowledge`,
      as(other),
    );
    expect(still.body.entries[0]?.answer).toBe("Theirs.");
  });
});
