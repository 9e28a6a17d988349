/**
 * Conversation states over HTTP: reading a conversation, every transition (client, visitor phrase,
 * person) and every refusal, repeated transitions answering the same 200, the turn in each status,
 * people's replies, listing with every filter, and concurrent transitions and turns leaving a
 * consistent history. Two organizations: another organization's conversation is never found.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { call, newConversation, seedTenant, type Tenant, validationItems } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  seedManagedTenant,
} from "#test/support/management";

interface PublicConversation {
  conversation_id: string;
  chatbot_id: string;
  contact_id: string;
  external_id: string | null;
  status: string;
  created_at: string;
  last_message_at: string | null;
  message_count: number;
}

interface HistoryMessage {
  role: string;
  content: string;
  agent_name?: string;
  status_change?: { from: string; to: string; cause: string };
}

const handoffMessage = "A colleague will take it from here.";
let shop: Tenant;
let other: Tenant;

beforeAll(async () => {
  [shop, other] = await Promise.all([
    seedTenant({
      chatbot: {
        handoff: { allowed: true, message: handoffMessage, phrases: ["talk to a human"] },
      },
    }),
    seedTenant(),
  ]);
});

const read = (tenant: Tenant, id: string) =>
  call<PublicConversation>("GET", `/api/conversation/${id}`, { key: tenant.apiKey });
const handoff = (tenant: Tenant, id: string, body?: unknown) =>
  call<PublicConversation>("POST", `/api/conversation/${id}/handoff`, {
    key: tenant.apiKey,
    ...(body === undefined ? {} : { body }),
  });
const close = (tenant: Tenant, id: string) =>
  call<PublicConversation>("POST", `/api/conversation/${id}/close`, { key: tenant.apiKey });
const send = (tenant: Tenant, id: string, message: string) =>
  call<{ conversation_id: string; status: string; messages: { content: string }[] }>("POST", "/api/message", {
    key: tenant.apiKey,
    body: { conversation_id: id, message },
  });
async function history(tenant: Tenant, id: string): Promise<HistoryMessage[]> {
  const page = await call<{ messages: HistoryMessage[] }>(
    "GET",
    `/api/conversation/${id}/messages?limit=100`,
    { key: tenant.apiKey },
  );
  return page.body.messages;
}

describe("reading a conversation", () => {
  it("answers its chatbot, contact, external id, status and message count", async () => {
    const externalId = `order-${randomUUID()}`;
    const id = await newConversation(shop, { external_id: externalId });
    const fresh = await read(shop, id);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("x-ratelimit-limit")).not.toBeNull();
    expect(fresh.body).toMatchObject({
      conversation_id: id,
      chatbot_id: shop.chatbotId,
      external_id: externalId,
      status: "open",
      last_message_at: null,
      message_count: 0,
    });
    const turn = await send(shop, id, "hello");
    expect(turn.body.status).toBe("open");
    const after = await read(shop, id);
    expect(after.body.message_count).toBe(1 + turn.body.messages.length);
    expect(after.body.last_message_at).not.toBeNull();
  });

  it("is 404 for another organization's conversation and for an unknown one, 422 for a bad id", async () => {
    const theirs = await newConversation(other);
    expect(await read(shop, theirs)).toMatchObject({
      status: 404,
      body: { detail: "Conversation not found" },
    });
    expect((await read(shop, randomUUID())).status).toBe(404);
    expect((await handoff(shop, theirs)).status).toBe(404);
    expect((await close(shop, theirs)).status).toBe(404);
    expect((await read(other, theirs)).body.status).toBe("open");
    expect((await read(shop, "not-a-uuid")).status).toBe(422);
  });

  it("needs a key", async () => {
    const id = await newConversation(shop);
    const answer = await call("GET", `/api/conversation/${id}`);
    expect(answer).toMatchObject({ status: 401, body: { detail: "Invalid API key" } });
  });
});

describe("transitions through the public API", () => {
  it("open → handoff → closed, each recorded, repeats harmless, closed final", async () => {
    const id = await newConversation(shop);
    const first = await handoff(shop, id, { reason: "VIP customer" });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ conversation_id: id, status: "handoff" });
    const again = await handoff(shop, id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);

    // In handoff the visitor's message is stored and the chatbot stays silent.
    const turn = await send(shop, id, "are you there?");
    expect(turn.status).toBe(200);
    expect(turn.body).toEqual({ conversation_id: id, status: "handoff", messages: [] });

    const closed = await close(shop, id);
    expect(closed.body.status).toBe("closed");
    expect((await close(shop, id)).body).toEqual(closed.body);
    expect(await handoff(shop, id)).toMatchObject({
      status: 409,
      body: { detail: "Conversation is closed" },
    });
    expect(await send(shop, id, "hello?")).toMatchObject({
      status: 409,
      body: { detail: "Conversation is closed" },
    });

    const messages = await history(shop, id);
    expect(messages.map((message) => message.role)).toEqual(["system", "user", "system"]);
    expect(messages[0]?.status_change).toEqual({ from: "open", to: "handoff", cause: "client" });
    expect(messages[1]?.content).toBe("are you there?");
    expect(messages[2]?.status_change).toEqual({ from: "handoff", to: "closed", cause: "client" });
    expect((await read(shop, id)).body.message_count).toBe(3);
  });

  it("takes an empty body or {} for a handoff, and refuses a reason that is not text", async () => {
    const id = await newConversation(shop);
    expect((await handoff(shop, id, {})).status).toBe(200);
    const bad = await handoff(shop, await newConversation(shop), { reason: 42 });
    expect(bad.status).toBe(422);
    expect(validationItems(bad)[0]?.loc).toEqual(["body", "reason"]);
  });

  it("the visitor's phrase starts a handoff: the turn answers with the handoff message", async () => {
    const id = await newConversation(shop);
    const turn = await send(shop, id, "Please, I want to TALK TO A HUMAN now");
    expect(turn.status).toBe(200);
    expect(turn.body.status).toBe("handoff");
    expect(turn.body.messages.map((message) => message.content)).toEqual([handoffMessage]);
    expect((await read(shop, id)).body.status).toBe("handoff");
    const messages = await history(shop, id);
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "system"]);
    expect(messages[2]?.status_change).toEqual({ from: "open", to: "handoff", cause: "visitor" });
    // The next turn is silent.
    expect((await send(shop, id, "hello?")).body.messages).toEqual([]);
  });

  it("a chatbot that does not allow handoff answers the phrase like any other message", async () => {
    const id = await newConversation(other);
    const turn = await send(other, id, "talk to a human");
    expect(turn.body.status).toBe("open");
    expect(turn.body.messages.length).toBeGreaterThan(0);
  });
});

describe("concurrent transitions and turns", () => {
  it("leave one status change per change, and nothing after the close in history order", async () => {
    const id = await newConversation(shop);
    const answers = await Promise.all([
      send(shop, id, "one"),
      handoff(shop, id),
      send(shop, id, "two"),
      close(shop, id),
      handoff(shop, id),
      send(shop, id, "three"),
      close(shop, id),
    ]);
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    expect((await read(shop, id)).body.status).toBe("closed");
    const messages = await history(shop, id);
    const closes = messages.filter((message) => message.status_change?.to === "closed");
    expect(closes).toHaveLength(1);
    expect(messages.at(-1)?.status_change?.to).toBe("closed");
    expect(messages.filter((message) => message.status_change?.to === "handoff").length).toBeLessThanOrEqual(
      1,
    );
    // Every accepted visitor message is in the history.
    const accepted = answers
      .map((answer, index) => ({ answer, index }))
      .filter(({ answer, index }) => [0, 2, 5].includes(index) && answer.status === 200).length;
    expect(messages.filter((message) => message.role === "user")).toHaveLength(accepted);
    expect((await read(shop, id)).body.message_count).toBe(messages.length);
  });

  it("many closes at once all answer the same 200 and record one change", async () => {
    const id = await newConversation(shop);
    const answers = await Promise.all(Array.from({ length: 6 }, () => close(shop, id)));
    for (const answer of answers) expect(answer).toMatchObject({ status: 200, body: { status: "closed" } });
    expect((await history(shop, id)).filter((message) => message.role === "system")).toHaveLength(1);
  });
});

describe("listing conversations", () => {
  let lister: Tenant;
  const made: string[] = [];
  const contact = randomUUID();
  beforeAll(async () => {
    lister = await seedTenant();
    for (let index = 0; index < 5; index += 1) {
      made.push(await newConversation(lister, index % 2 === 0 ? { contact_id: contact } : {}));
    }
    await handoff(lister, made[1] ?? "");
    await close(lister, made[2] ?? "");
  });

  const list = (query: string, tenant: Tenant = lister) =>
    call<{ conversations: PublicConversation[]; has_more: boolean; next_cursor: string | null }>(
      "GET",
      `/api/conversations${query}`,
      { key: tenant.apiKey },
    );

  it("lists the organization's conversations, most recent activity first, a page at a time", async () => {
    const first = await list("?limit=2");
    expect(first.status).toBe(200);
    expect(first.body.conversations.map((c) => c.conversation_id)).toEqual([made[2], made[1]]);
    expect(first.body.has_more).toBe(true);
    const seen = [...first.body.conversations.map((c) => c.conversation_id)];
    let cursor = first.body.next_cursor;
    while (cursor) {
      const page = await list(`?limit=2&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...page.body.conversations.map((c) => c.conversation_id));
      cursor = page.body.next_cursor;
    }
    expect(seen).toEqual([made[2], made[1], made[4], made[3], made[0]]);
  });

  it("filters by status, chatbot, contact and external id, alone and combined", async () => {
    expect((await list("?status=handoff")).body.conversations.map((c) => c.conversation_id)).toEqual([
      made[1],
    ]);
    expect((await list("?status=closed")).body.conversations.map((c) => c.conversation_id)).toEqual([
      made[2],
    ]);
    expect((await list(`?chatbot_id=${lister.chatbotId}&status=open`)).body.conversations).toHaveLength(3);
    expect((await list(`?contact_id=${contact}`)).body.conversations.map((c) => c.conversation_id)).toEqual([
      made[2],
      made[4],
      made[0],
    ]);
    expect(
      (await list(`?contact_id=${contact}&status=open`)).body.conversations.map((c) => c.conversation_id),
    ).toEqual([made[4], made[0]]);
    const externalId = `ext-${randomUUID()}`;
    const tagged = await newConversation(lister, { external_id: externalId });
    expect(
      (await list(`?external_id=${externalId}&chatbot_id=${lister.chatbotId}`)).body.conversations.map(
        (c) => c.conversation_id,
      ),
    ).toEqual([tagged]);
    expect((await list(`?chatbot_id=${randomUUID()}`)).body.conversations).toEqual([]);
  });

  it("never lists another organization's conversations", async () => {
    const theirs = await list(`?contact_id=${contact}`, other);
    expect(theirs.body.conversations).toEqual([]);
    const all = await list("?limit=100", other);
    expect(all.body.conversations.some((c) => made.includes(c.conversation_id))).toBe(false);
  });

  it("refuses a forged cursor, a cursor of other filters and a bad status with 422", async () => {
    const forged = await list("?cursor=bm90LWEtY3Vyc29y");
    expect(forged.status).toBe(422);
    expect(validationItems(forged)[0]?.loc).toEqual(["query", "cursor"]);
    const first = await list("?limit=1");
    const elsewhere = await list(
      `?limit=1&status=open&cursor=${encodeURIComponent(first.body.next_cursor ?? "")}`,
    );
    expect(elsewhere.status).toBe(422);
    expect((await list("?status=waiting")).status).toBe(422);
    expect((await list("?limit=0")).status).toBe(422);
  });
});

describe.runIf(hasIdentity)("people answer through the management API", () => {
  let home: ManagedTenant;
  beforeAll(async () => {
    home = await seedManagedTenant({
      chatbot: { handoff: { allowed: true, message: handoffMessage, phrases: [] } },
    });
  });
  const as = (tenant: ManagedTenant, body?: unknown) => ({
    as: tenant.admin.token,
    organization: tenant.organizationId,
    ...(body === undefined ? {} : { body }),
  });

  it("take over, reply (role agent, their name), hand back, close", async () => {
    const id = await newConversation(home);
    const taken = await manage<{ status: string }>("POST", `/manage/conversations/${id}/take-over`, as(home));
    expect(taken).toMatchObject({ status: 200, body: { status: "handoff" } });
    const reply = await manage<{ message: { role: string; agent_name: string; content: string } }>(
      "POST",
      `/manage/conversations/${id}/reply`,
      as(home, { message: "Hi, Sam here." }),
    );
    expect(reply.status).toBe(200);
    expect(reply.body.message).toMatchObject({ role: "agent", content: "Hi, Sam here." });
    expect(reply.body.message.agent_name).toBe(home.admin.email);
    const back = await manage<{ status: string }>("POST", `/manage/conversations/${id}/hand-back`, as(home));
    expect(back.body.status).toBe("open");
    expect((await send(home, id, "thanks")).body.status).toBe("open");
    const closed = await manage<{ status: string }>("POST", `/manage/conversations/${id}/close`, as(home));
    expect(closed.body.status).toBe("closed");

    const messages = await history(home, id);
    expect(messages.map((message) => message.role)).toEqual([
      "system",
      "agent",
      "system",
      "user",
      "assistant",
      "system",
    ]);
    expect(messages[1]?.agent_name).toBe(home.admin.email);
    expect(messages.filter((m) => m.status_change).map((m) => m.status_change?.cause)).toEqual([
      "agent",
      "agent",
      "agent",
    ]);
    const transcript = await manage<{
      messages: { status_change: { actor: { kind: string; id: string } } | null }[];
    }>("GET", `/manage/conversations/${id}`, { as: home.viewer.token, organization: home.organizationId });
    expect(transcript.body.messages[0]?.status_change?.actor).toMatchObject({
      kind: "person",
      id: home.admin.userId,
    });
  });

  it("a reply in open takes the conversation over first; in closed it is a 409 conflict", async () => {
    const id = await newConversation(home);
    const reply = await manage<{ conversation: { status: string } }>(
      "POST",
      `/manage/conversations/${id}/reply`,
      as(home, { message: "Let me help." }),
    );
    expect(reply.body.conversation.status).toBe("handoff");
    expect((await history(home, id)).map((message) => message.role)).toEqual(["system", "agent"]);
    await manage("POST", `/manage/conversations/${id}/close`, as(home));
    const late = await manage(
      "POST",
      `/manage/conversations/${id}/reply`,
      as(home, { message: "still there?" }),
    );
    expect(late.status).toBe(409);
    expect(errorCode(late)).toBe("conflict");
    expect(errorCode(await manage("POST", `/manage/conversations/${id}/take-over`, as(home)))).toBe(
      "conflict",
    );
    expect(errorCode(await manage("POST", `/manage/conversations/${id}/hand-back`, as(home)))).toBe(
      "conflict",
    );
  });

  it("viewers may not act, and another organization's conversation is not found", async () => {
    const id = await newConversation(home);
    const byViewer = await manage("POST", `/manage/conversations/${id}/take-over`, {
      as: home.viewer.token,
      organization: home.organizationId,
    });
    expect(errorCode(byViewer)).toBe("forbidden");
    const theirs = await newConversation(other);
    const answer = await manage("POST", `/manage/conversations/${theirs}/reply`, as(home, { message: "hi" }));
    expect(answer.status).toBe(404);
    expect(errorCode(answer)).toBe("conversation_not_found");
  });

  it("the chatbot's handoff settings and inactivity timeout are set and shown through the API", async () => {
    const patched = await manage<{ handoff: unknown; inactivity_timeout_minutes: number | null }>(
      "PATCH",
      `/manage/chatbots/${home.chatbotId}`,
      as(home, { handoff: { phrases: ["agent please"] }, inactivity_timeout_minutes: 30 }),
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      handoff: { allowed: true, message: handoffMessage, phrases: ["agent please"] },
      inactivity_timeout_minutes: 30,
    });
    const cleared = await manage<{ inactivity_timeout_minutes: number | null }>(
      "PATCH",
      `/manage/chatbots/${home.chatbotId}`,
      as(home, { inactivity_timeout_minutes: null }),
    );
    expect(cleared.body.inactivity_timeout_minutes).toBeNull();
    const bad = await manage(
      "PATCH",
      `/manage/chatbots/${home.chatbotId}`,
      as(home, { inactivity_timeout_minutes: 0 }),
    );
    expect(errorCode(bad)).toBe("invalid_argument");
  });
});

describe("the inactivity timeout", () => {
  it("closes a conversation (cause inactivity) only once it was quiet for the timeout", async () => {
    // The suite's runtime counts a timeout's minutes as seconds.
    const quiet = await seedTenant({ chatbot: { inactivityTimeoutMinutes: 3 } });
    const idle = await newConversation(quiet);
    const busy = await newConversation(quiet);
    await send(quiet, idle, "hello");
    // The busy one keeps talking past the idle one's timeout: each message postpones its close.
    const started = Date.now();
    while (Date.now() - started < 4_500) {
      await send(quiet, busy, "still here");
      await new Promise((resolveWait) => setTimeout(resolveWait, 700));
    }
    for (const id of [idle, busy]) {
      let status = (await read(quiet, id)).body.status;
      for (let waited = 0; status !== "closed" && waited < 30_000; waited += 500) {
        await new Promise((resolveWait) => setTimeout(resolveWait, 500));
        status = (await read(quiet, id)).body.status;
      }
      expect(status).toBe("closed");
      const messages = await history(quiet, id);
      const closing = messages.at(-1) as HistoryMessage & { created_at: string };
      // The turn's activity is the visitor's message (the claim), the reply follows it.
      const lastActivity = messages.filter((message) => message.role === "user").at(-1) as HistoryMessage & {
        created_at: string;
      };
      expect(closing.status_change).toEqual({ from: "open", to: "closed", cause: "inactivity" });
      expect(Date.parse(closing.created_at) - Date.parse(lastActivity.created_at)).toBeGreaterThanOrEqual(
        3_000,
      );
      expect(messages.filter((message) => message.role === "system")).toHaveLength(1);
    }
    expect((await send(quiet, idle, "back!")).status).toBe(409);
  });
});
