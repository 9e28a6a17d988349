/**
 * The console's "Try it" keys: `POST /manage/api-keys` with `"test": true` gives a chat key that
 * works for an hour, stays out of key listings, and marks the conversations it starts as tests,
 * so the console chats through the public API exactly as a visitor's app does.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { api, call } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  seedManagedTenant,
} from "#test/support/management";

interface CreatedKey {
  key_id: string;
  scope: string;
  expires_at: string | null;
  key: string;
}

interface Conversation {
  conversation_id: string;
  test: boolean;
}

let home: ManagedTenant;
const as = (tenant: ManagedTenant) => ({ as: tenant.admin.token, organization: tenant.organizationId });

describe.runIf(hasIdentity)("Try it keys", () => {
  beforeAll(async () => {
    home = await seedManagedTenant({
      knowledge: [{ question: "How long does shipping take?", answer: "Two working days." }],
    });
  });

  it("gives a chat key valid for an hour that is left out of the key list", async () => {
    const before = Date.now();
    const created = await manage<CreatedKey>("POST", "/manage/api-keys", {
      ...as(home),
      body: { name: "Try it", test: true },
    });
    expect(created.status).toBe(201);
    expect(created.body.scope).toBe("chat");
    const expiresAt = Date.parse(created.body.expires_at ?? "");
    expect(expiresAt).toBeGreaterThan(before + 59 * 60_000);
    expect(expiresAt).toBeLessThan(Date.now() + 61 * 60_000);
    expect((await call("GET", "/api/me", { key: created.body.key })).status).toBe(200);

    const listed = await manage<{ api_keys: { key_id: string }[] }>(
      "GET",
      "/manage/api-keys?include_revoked=true",
      as(home),
    );
    expect(listed.body.api_keys.map((key) => key.key_id)).not.toContain(created.body.key_id);
    // An ordinary key has no expiry.
    const ordinary = await manage<CreatedKey>("POST", "/manage/api-keys", {
      ...as(home),
      body: { name: "website" },
    });
    expect(ordinary.body.expires_at).toBeNull();
  });

  it("marks the conversations a test key starts as tests, and only those", async () => {
    const created = await manage<CreatedKey>("POST", "/manage/api-keys", {
      ...as(home),
      body: { name: "Try it", test: true },
    });
    const tried = await api.startConversation(created.body.key, { chatbot_id: home.chatbotId });
    expect(tried.status).toBe(200);
    const reply = await api.sendMessage(created.body.key, {
      conversation_id: tried.body.conversation_id,
      message: "How long does shipping take?",
    });
    expect(reply.body.messages[0]?.content).toBe("Two working days.");
    const visitor = await api.startConversation(home.apiKey, { chatbot_id: home.chatbotId });

    const tested = await manage<Conversation>(
      "GET",
      `/manage/conversations/${tried.body.conversation_id}`,
      as(home),
    );
    expect(tested.body.test).toBe(true);
    const real = await manage<Conversation>(
      "GET",
      `/manage/conversations/${visitor.body.conversation_id}`,
      as(home),
    );
    expect(real.body.test).toBe(false);
    const listed = await manage<{ conversations: Conversation[] }>(
      "GET",
      `/manage/conversations?chatbot_id=${home.chatbotId}`,
      as(home),
    );
    const flags = Object.fromEntries(listed.body.conversations.map((c) => [c.conversation_id, c.test]));
    expect(flags).toMatchObject({
      [tried.body.conversation_id]: true,
      [visitor.body.conversation_id]: false,
    });
  });

  it("counts no test traffic in usage, keeps it marked as a test in every answer, and counts a visitor's turn", async () => {
    const totals = async () =>
      (
        await manage<{ totals: { visitor_messages: number; replies: number } }>(
          "GET",
          `/manage/usage?chatbot_id=${home.chatbotId}`,
          as(home),
        )
      ).body.totals;
    const before = await totals();
    const created = await manage<CreatedKey>("POST", "/manage/api-keys", {
      ...as(home),
      body: { name: "Try it", test: true },
    });
    const tried = await api.startConversation(created.body.key, { chatbot_id: home.chatbotId });
    for (const message of ["Hello", "How long does shipping take?"]) {
      const reply = await api.sendMessage(created.body.key, {
        conversation_id: tried.body.conversation_id,
        message,
      });
      expect(reply.status).toBe(200);
    }
    expect(await totals()).toEqual(before);
    // Marked in the public answer and the transcript as well.
    const publicView = await call<Conversation & { visitor_message_count: number }>(
      "GET",
      `/api/conversation/${tried.body.conversation_id}`,
      { key: created.body.key },
    );
    expect([publicView.body.test, publicView.body.visitor_message_count]).toEqual([true, 2]);
    const transcript = await manage<Conversation & { messages: unknown[] }>(
      "GET",
      `/manage/conversations/${tried.body.conversation_id}`,
      as(home),
    );
    expect([transcript.body.test, transcript.body.messages.length]).toEqual([true, 4]);

    // The same turn in a visitor's conversation is counted.
    const visitor = await api.startConversation(home.apiKey, { chatbot_id: home.chatbotId });
    await api.sendMessage(home.apiKey, {
      conversation_id: visitor.body.conversation_id,
      message: "How long does shipping take?",
    });
    await expect.poll(totals).toMatchObject({
      visitor_messages: before.visitor_messages + 1,
      replies: before.replies + 1,
    });
  });

  it("refuses a test key of scope manage, and a viewer asking for one", async () => {
    const manageScope = await manage("POST", "/manage/api-keys", {
      ...as(home),
      body: { name: "Try it", test: true, scope: "manage" },
    });
    expect(manageScope.status).toBe(422);
    expect(errorCode(manageScope)).toBe("invalid_argument");
    const byViewer = await manage("POST", "/manage/api-keys", {
      as: home.viewer.token,
      organization: home.organizationId,
      body: { name: "Try it", test: true },
    });
    expect(byViewer.status).toBe(403);
  });
});
