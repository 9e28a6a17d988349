/**
 * The organization's conversations: most recent activity first, every filter alone and combined,
 * pages that neither skip nor repeat, the transcript, closing; another organization's
 * conversations are neither listed nor found.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createChatbot } from "#functions/domain/chatbots";
import { wooDemo } from "#test/fakes/platforms/woocommerce";
import { api, domain, isLocal, newConversation, seedTool } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  seedManagedTenant,
} from "#test/support/management";

interface Conversation {
  conversation_id: string;
  chatbot_id: string;
  contact_id: string;
  external_id: string | null;
  status: string;
  created_at: string;
  last_activity_at: string;
  visitor_message_count: number;
}

interface Page {
  conversations: Conversation[];
  has_more: boolean;
  next_cursor: string | null;
}

let home: ManagedTenant;
let other: ManagedTenant;
let secondBot: string;
const contact = randomUUID();
const theirContact = randomUUID();
/** Conversation ids in the order they were made. */
const made: string[] = [];

const as = (tenant: ManagedTenant) => ({ as: tenant.viewer.token, organization: tenant.organizationId });
const list = (query = "", tenant = home) => manage<Page>("GET", `/manage/conversations${query}`, as(tenant));
const ids = (page: { body: Page }) =>
  page.body.conversations.map((conversation) => conversation.conversation_id);

/** Every conversation of a listing, following its cursors with pages of `limit`. */
async function everyPage(query: string, limit: number): Promise<string[]> {
  const all: string[] = [];
  let cursor: string | null = null;
  do {
    const separator = query ? "&" : "?";
    const page = await list(
      `${query}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(page.status).toBe(200);
    expect(page.body.conversations.length).toBeLessThanOrEqual(limit);
    all.push(...ids(page));
    cursor = page.body.next_cursor;
    expect(page.body.has_more).toBe(cursor !== null);
  } while (cursor);
  return all;
}

describe.runIf(hasIdentity)("the organization's conversations", () => {
  beforeAll(async () => {
    [home, other] = await Promise.all([seedManagedTenant(), seedManagedTenant()]);
    secondBot = (await createChatbot(domain(), { organizationId: home.organizationId, name: "Second" }))
      .chatbotId;
    // Six conversations: two on the second chatbot, two of one contact, one with an external id.
    made.push(await newConversation(home));
    made.push(await newConversation(home, { contact_id: contact }));
    const onSecond = await api.startConversation(home.apiKey, { chatbot_id: secondBot });
    made.push(onSecond.body.conversation_id);
    made.push(await newConversation(home, { contact_id: contact, external_id: "ticket-42" }));
    const alsoSecond = await api.startConversation(home.apiKey, {
      chatbot_id: secondBot,
      external_id: "ticket-43",
    });
    made.push(alsoSecond.body.conversation_id);
    made.push(await newConversation(home));
    await newConversation(other, { contact_id: theirContact });
  });

  it("lists the newest activity first, and moves a conversation up when a message arrives", async () => {
    const first = await list();
    expect(first.status).toBe(200);
    expect(ids(first)).toEqual([...made].reverse());
    // A message in the oldest conversation makes it the most recent.
    await api.sendMessage(home.apiKey, { conversation_id: made[0], message: "Hello again" });
    const after = await list();
    expect(ids(after)[0]).toBe(made[0]);
    expect(after.body.conversations[0]).toMatchObject({
      visitor_message_count: 1,
      status: "open",
      chatbot_id: home.chatbotId,
    });
  });

  it("filters by chatbot, contact, external id and status, alone and combined", async () => {
    expect(ids(await list(`?chatbot_id=${secondBot}`)).sort()).toEqual([made[2], made[4]].sort());
    expect(ids(await list(`?contact_id=${contact}`)).sort()).toEqual([made[1], made[3]].sort());
    expect(ids(await list("?external_id=ticket-42"))).toEqual([made[3]]);
    expect(ids(await list(`?external_id=ticket-43&chatbot_id=${secondBot}`))).toEqual([made[4]]);
    expect(ids(await list(`?external_id=ticket-43&chatbot_id=${home.chatbotId}`))).toEqual([]);
    expect(ids(await list(`?contact_id=${contact}&chatbot_id=${home.chatbotId}`)).sort()).toEqual(
      [made[1], made[3]].sort(),
    );

    await manage("POST", `/manage/conversations/${made[5]}/close`, {
      as: home.admin.token,
      organization: home.organizationId,
    });
    expect(ids(await list("?status=closed"))).toEqual([made[5]]);
    expect(ids(await list("?status=open"))).not.toContain(made[5]);
    expect(ids(await list(`?status=closed&chatbot_id=${secondBot}`))).toEqual([]);
  });

  it("filters by last activity, from and to (a date meaning the whole day)", async () => {
    const today = new Date().toISOString().slice(0, 10);
    expect(ids(await list(`?from=${today}&to=${today}`))).toHaveLength(made.length);
    expect(ids(await list("?to=2000-01-01"))).toEqual([]);
    expect(ids(await list("?from=2999-01-01"))).toEqual([]);
    const bad = await list("?from=yesterday");
    expect([bad.status, errorCode(bad)]).toEqual([422, "invalid_argument"]);
  });

  it("refuses a reversed range and days or times that do not exist: a 422 naming the field", async () => {
    const refusals: [query: string, field: string, type: string][] = [
      ["?from=2026-11-22&to=2026-11-21", "from", "value_error"],
      ["?from=2026-11-21T12:00:00Z&to=2026-11-21T11:59:59Z", "from", "value_error"],
      ["?from=2026-13-01", "from", "datetime_from_date_parsing"],
      ["?to=2026-02-30", "to", "datetime_from_date_parsing"],
      ["?to=2025-02-29", "to", "datetime_from_date_parsing"],
      ["?from=2026-11-21T24:00:00Z", "from", "datetime_from_date_parsing"],
      ["?from=2026-11-21T12:60Z", "from", "datetime_from_date_parsing"],
      ["?from=2026-00-10&to=2026-11-31", "from", "datetime_from_date_parsing"],
    ];
    for (const [query, field, type] of refusals) {
      const refused = await list(query);
      const fields = (
        refused.body as { error?: { details?: { fields?: { loc: unknown[]; type: string }[] } } }
      ).error?.details?.fields;
      expect([query, refused.status, errorCode(refused)]).toEqual([query, 422, "invalid_argument"]);
      expect([query, fields?.[0]?.loc, fields?.[0]?.type]).toEqual([query, ["query", field], type]);
    }
    // A range within one day, and a leap day, are fine.
    expect((await list("?from=2026-11-21&to=2026-11-21T00:00:00Z")).status).toBe(200);
    expect((await list("?from=2024-02-29&to=2024-02-29")).status).toBe(200);
  });

  it("pages through every listing without skipping or repeating, whatever the page size", async () => {
    const expected = ids(await list("?limit=100"));
    for (const limit of [1, 2, 4]) expect(await everyPage("", limit)).toEqual(expected);
    expect((await everyPage(`?contact_id=${contact}`, 1)).sort()).toEqual([made[1], made[3]].sort());
    expect((await everyPage(`?chatbot_id=${secondBot}`, 1)).sort()).toEqual([made[2], made[4]].sort());
  });

  it("refuses a cursor made for other filters, or not made here", async () => {
    const page = await list("?limit=1");
    const cursor = encodeURIComponent(page.body.next_cursor ?? "");
    for (const query of [
      `?limit=1&status=open&cursor=${cursor}`,
      "?cursor=bm90LWEtY3Vyc29y",
      "?cursor=%7B%7D",
    ]) {
      const refused = await list(query);
      expect([refused.status, errorCode(refused)]).toEqual([422, "invalid_argument"]);
      expect(refused.body).toMatchObject({ error: { details: { fields: [{ loc: ["query", "cursor"] }] } } });
    }
  });

  it("shows a conversation with its transcript, a page at a time", async () => {
    const conversationId = made[3] ?? "";
    await api.sendMessage(home.apiKey, { conversation_id: conversationId, message: "First" });
    await api.sendMessage(home.apiKey, { conversation_id: conversationId, message: "Second" });
    const shown = await manage<
      Conversation & { messages: { role: string; content: string }[]; next_cursor: string | null }
    >("GET", `/manage/conversations/${conversationId}?limit=3`, as(home));
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      conversation_id: conversationId,
      contact_id: contact,
      external_id: "ticket-42",
      visitor_message_count: 2,
    });
    expect(shown.body.messages.map((message) => [message.role, message.content.slice(0, 6)])).toEqual([
      ["user", "First"],
      ["assistant", expect.any(String)],
      ["user", "Second"],
    ]);
    const rest = await manage<{ messages: unknown[]; has_more: boolean }>(
      "GET",
      `/manage/conversations/${conversationId}?limit=3&cursor=${encodeURIComponent(shown.body.next_cursor ?? "")}`,
      as(home),
    );
    expect([rest.body.messages.length, rest.body.has_more]).toEqual([1, false]);
  });

  it("closes a conversation for an admin (not a viewer); repeating it answers the same", async () => {
    const conversationId = made[2] ?? "";
    const byViewer = await manage("POST", `/manage/conversations/${conversationId}/close`, as(home));
    expect([byViewer.status, errorCode(byViewer)]).toEqual([403, "forbidden"]);
    const closed = await manage<Conversation>("POST", `/manage/conversations/${conversationId}/close`, {
      as: home.admin.token,
      organization: home.organizationId,
    });
    expect([closed.status, closed.body.status]).toEqual([200, "closed"]);
    const again = await manage<Conversation>("POST", `/manage/conversations/${conversationId}/close`, {
      as: home.admin.token,
      organization: home.organizationId,
    });
    expect(again.body).toEqual(closed.body);
    const message = await api.sendMessage(home.apiKey, {
      conversation_id: conversationId,
      message: "Hello?",
    });
    expect([message.status, message.body]).toEqual([409, { detail: "Conversation is closed" }]);
  });

  it("lists and shows nothing of another organization, even for its contact or external id", async () => {
    const theirs = await newConversation(other, { external_id: "ticket-42" });
    expect(ids(await list("?limit=100"))).not.toContain(theirs);
    expect(ids(await list(`?contact_id=${theirContact}`))).toEqual([]);
    expect(ids(await list(`?contact_id=${theirContact}`, other))).toHaveLength(1);
    expect(ids(await list("?external_id=ticket-42"))).toEqual([made[3]]);
    for (const [method, path] of [
      ["GET", `/manage/conversations/${theirs}`],
      ["POST", `/manage/conversations/${theirs}/close`],
      ["GET", `/manage/conversations/${randomUUID()}`],
    ] as const) {
      const answer = await manage(method, path, { as: home.admin.token, organization: home.organizationId });
      expect([path, answer.status, errorCode(answer)]).toEqual([path, 404, "conversation_not_found"]);
    }
    expect((await api.sendMessage(other.apiKey, { conversation_id: theirs, message: "open?" })).status).toBe(
      200,
    );
  });

  it.runIf(isLocal)("shows each turn's look-ups on its reply, and when the status changed", async () => {
    await seedTool(home, {
      kind: "woocommerce",
      name: "order_status",
      config: { ...wooDemo.config },
      credentials: { ...wooDemo.secrets },
    });
    const conversationId = await newConversation(home);
    await api.sendMessage(home.apiKey, {
      conversation_id: conversationId,
      message: "Where is my order 1001?",
    });
    await api.sendMessage(home.apiKey, { conversation_id: conversationId, message: "jan.jansen@example.nl" });
    const open = await manage<{
      status_changed_at: string | null;
      messages: { role: string; lookups: { tool_name: string; platform: string; outcome: string }[] }[];
    }>("GET", `/manage/conversations/${conversationId}`, {
      as: home.viewer.token,
      organization: home.organizationId,
    });
    expect(open.body.status_changed_at).toBeNull();
    expect(open.body.messages.map((message) => message.lookups.map((lookup) => lookup.outcome))).toEqual([
      [],
      [],
      [],
      ["found"],
    ]);
    expect(open.body.messages[3]?.lookups[0]).toMatchObject({
      tool_name: "order_status",
      platform: "woocommerce",
    });
    expect(JSON.stringify(open.body)).not.toContain(wooDemo.secrets.consumerKey);

    const closed = await manage<{ status: string; status_changed_at: string | null }>(
      "POST",
      `/manage/conversations/${conversationId}/close`,
      { as: home.admin.token, organization: home.organizationId },
    );
    expect(closed.body.status).toBe("closed");
    expect(Date.parse(closed.body.status_changed_at ?? "")).toBeGreaterThan(Date.now() - 60_000);
  });
});
