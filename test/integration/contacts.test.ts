/**
 * Contacts: the people behind conversations, visible in every conversation answer (public and
 * management), listed newest first, searched by name, e-mail, phone or external id (each contact
 * once, pages that neither skip nor repeat, at a cost that does not grow with the organization),
 * read one at a time with their conversations; another organization's contacts are never listed,
 * found or shown.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { listContacts, saveContact } from "#functions/domain/contacts";
import type { DomainContext } from "#functions/domain/context";
import { api, call, domain, isLocal, newConversation } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  seedManagedTenant,
} from "#test/support/management";

interface Contact {
  contact_id: string;
  user_name: string | null;
  user_email: string | null;
  user_phone: string | null;
  external_ids: string[];
  conversation_count: number;
  last_conversation_at: string | null;
  created_at: string;
  updated_at: string;
}

interface ContactPage {
  contacts: Contact[];
  has_more: boolean;
  next_cursor: string | null;
}

interface ContactSummary {
  contact_id: string;
  user_name: string | null;
  user_email: string | null;
  user_phone: string | null;
}

interface Conversation {
  conversation_id: string;
  contact_id: string;
  contact: ContactSummary;
}

let home: ManagedTenant;
let other: ManagedTenant;
const as = (tenant: ManagedTenant) => ({ as: tenant.viewer.token, organization: tenant.organizationId });
const contacts = (query: string, tenant = home) =>
  manage<ContactPage>("GET", `/manage/contacts${query}`, as(tenant));

/** Every contact id a listing gives, following its cursors with pages of `limit`. */
async function everyPage(query: string, limit: number, tenant = home): Promise<string[]> {
  const all: string[] = [];
  let cursor: string | null = null;
  do {
    const separator = query ? "&" : "?";
    const page = await contacts(
      `${query}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      tenant,
    );
    expect(page.status).toBe(200);
    expect(page.body.contacts.length).toBeLessThanOrEqual(limit);
    all.push(...page.body.contacts.map((contact) => contact.contact_id));
    cursor = page.body.next_cursor;
    expect(page.body.has_more).toBe(cursor !== null);
  } while (cursor);
  return all;
}

const started = async (tenant: ManagedTenant, body: Record<string, unknown>) => {
  const response = await api.startConversation(tenant.apiKey, { chatbot_id: tenant.chatbotId, ...body });
  expect(response.status).toBe(200);
  return response.body;
};

describe.runIf(hasIdentity)("contacts", () => {
  const ann = randomUUID();
  const bob = randomUUID();
  const chloe = randomUUID();
  const theirAnn = randomUUID();
  let annConversation: string;

  beforeAll(async () => {
    [home, other] = await Promise.all([seedManagedTenant(), seedManagedTenant()]);
    annConversation = (
      await started(home, {
        contact_id: ann,
        user_name: "Ann Ångström-Smith",
        user_email: "Ann.Smith@Shop.example",
        user_phone: "+31 6 1234 5678",
        external_id: "CRM-4711",
      })
    ).conversation_id;
    await started(home, { contact_id: bob, user_name: "Bob Annand", user_email: "bob@other.example" });
    await started(home, { contact_id: chloe, user_name: "Chloé Dupont", user_phone: "020 555 0101" });
    // Another organization's contact with the same name: never in this organization's answers.
    await started(other, {
      contact_id: theirAnn,
      user_name: "Ann Ångström-Smith",
      user_email: "ann@their.example",
    });
  });

  describe("in conversation answers", () => {
    it("shows the contact's name, e-mail and phone in the public and management answers", async () => {
      const expected = {
        contact_id: ann,
        user_name: "Ann Ångström-Smith",
        user_email: "Ann.Smith@Shop.example",
        user_phone: "+31 6 1234 5678",
      };
      const one = await call<Conversation>("GET", `/api/conversation/${annConversation}`, {
        key: home.apiKey,
      });
      expect(one.status).toBe(200);
      expect(one.body.contact).toEqual(expected);
      const listed = await call<{ conversations: Conversation[] }>(
        "GET",
        `/api/conversations?contact_id=${ann}`,
        {
          key: home.apiKey,
        },
      );
      expect(listed.body.conversations.map((conversation) => conversation.contact)).toEqual([expected]);

      const managed = await manage<Conversation>("GET", `/manage/conversations/${annConversation}`, as(home));
      expect(managed.body.contact).toEqual(expected);
      const page = await manage<{ conversations: Conversation[] }>("GET", "/manage/conversations", as(home));
      const byId = new Map(
        page.body.conversations.map((conversation) => [conversation.contact_id, conversation]),
      );
      expect(byId.get(ann)?.contact).toEqual(expected);
      expect(byId.get(bob)?.contact).toEqual({
        contact_id: bob,
        user_name: "Bob Annand",
        user_email: "bob@other.example",
        user_phone: null,
      });
    });

    it("shows what is known now: a later conversation's details show in the earlier one too", async () => {
      const contact = randomUUID();
      const first = await started(home, { contact_id: contact });
      const before = await manage<Conversation>(
        "GET",
        `/manage/conversations/${first.conversation_id}`,
        as(home),
      );
      expect(before.body.contact).toEqual({
        contact_id: contact,
        user_name: null,
        user_email: null,
        user_phone: null,
      });
      await started(home, { contact_id: contact, user_name: "Dana Later" });
      const after = await call<Conversation>("GET", `/api/conversation/${first.conversation_id}`, {
        key: home.apiKey,
      });
      expect(after.body.contact.user_name).toBe("Dana Later");
    });
  });

  describe("GET /manage/contacts", () => {
    it("lists the organization's contacts newest first, a page at a time, never another organization's", async () => {
      const all = await everyPage("", 2);
      expect(new Set(all).size).toBe(all.length);
      expect(all.indexOf(chloe)).toBeLessThan(all.indexOf(bob));
      expect(all.indexOf(bob)).toBeLessThan(all.indexOf(ann));
      expect(all).not.toContain(theirAnn);
      expect(await everyPage("", 100, other)).toEqual([theirAnn]);
    });

    it("answers each contact with its details, external ids and conversation count", async () => {
      await started(home, { contact_id: ann, external_id: "ticket-9" });
      const page = await contacts("?query=ann.smith");
      expect(page.body.contacts).toHaveLength(1);
      expect(page.body.contacts[0]).toMatchObject({
        contact_id: ann,
        user_name: "Ann Ångström-Smith",
        user_email: "Ann.Smith@Shop.example",
        user_phone: "+31 6 1234 5678",
        external_ids: ["ticket-9", "CRM-4711"],
        conversation_count: 2,
      });
      expect(Date.parse(page.body.contacts[0]?.last_conversation_at ?? "")).toBeGreaterThan(
        Date.parse(page.body.contacts[0]?.created_at ?? ""),
      );
    });

    it.each([
      ["the start of a name, in any case and without accents", "ann ang", [ann]],
      ["a word of the name", "smi", [ann]],
      ["an e-mail address", "ANN.SMITH@shop", [ann]],
      ["an e-mail domain", "other.exam", [bob]],
      ["a phone number as typed", "+31 6 12", [ann]],
      ["a phone number's digits with other punctuation", "(020) 555-01", [chloe]],
      ["an external id", "crm-47", [ann]],
      ["an accented name typed without accents", "chloe", [chloe]],
      ["nothing that matches", "zebra", []],
    ])("finds contacts by %s", async (_, query, expected) => {
      const page = await contacts(`?query=${encodeURIComponent(query)}`);
      expect(page.status).toBe(200);
      expect(page.body.contacts.map((contact) => contact.contact_id).sort()).toEqual([...expected].sort());
    });

    it("shows a contact matched by several of its terms once, and pages a search without gaps or repeats", async () => {
      // "an": Ann's name and first word, Bob's last name; each contact once.
      const page = await contacts("?query=an");
      expect(page.body.contacts.map((contact) => contact.contact_id).sort()).toEqual([ann, bob].sort());
      const paged = await everyPage("?query=an", 1);
      expect(paged.sort()).toEqual([ann, bob].sort());
    });

    it("follows a change of details: the old name no longer finds the contact, the new one does", async () => {
      const contact = randomUUID();
      await started(home, { contact_id: contact, user_name: "Erin Oldname" });
      expect((await contacts("?query=oldname")).body.contacts.map((found) => found.contact_id)).toEqual([
        contact,
      ]);
      await started(home, { contact_id: contact, user_name: "Erin Newname" });
      expect((await contacts("?query=oldname")).body.contacts).toEqual([]);
      expect((await contacts("?query=newname")).body.contacts.map((found) => found.contact_id)).toEqual([
        contact,
      ]);
      expect((await contacts("?query=erin")).body.contacts.map((found) => found.contact_id)).toEqual([
        contact,
      ]);
    });

    it("never finds another organization's contacts", async () => {
      expect((await contacts("?query=ann.smith")).body.contacts.map((found) => found.contact_id)).toEqual([
        ann,
      ]);
      expect((await contacts("?query=ann", other)).body.contacts.map((found) => found.contact_id)).toEqual([
        theirAnn,
      ]);
      expect((await contacts("?query=their.example")).body.contacts).toEqual([]);
    });

    it("refuses bad input with a 422 naming the field", async () => {
      const cases: [string, string][] = [
        ["?limit=0", "limit"],
        ["?limit=101", "limit"],
        ["?limit=ten", "limit"],
        [`?query=${"a".repeat(201)}`, "query"],
        ["?cursor=not-a-cursor", "cursor"],
      ];
      for (const [query, field] of cases) {
        const response = await contacts(query);
        expect([query, response.status, errorCode(response)]).toEqual([query, 422, "invalid_argument"]);
        const fields = (response.body as unknown as { error: { details: { fields: { loc: string[] }[] } } })
          .error.details.fields;
        expect(fields.map((problem) => problem.loc)).toEqual([["query", field]]);
      }
      // A cursor made for another search (or another organization) is refused too.
      const first = await contacts("?query=an&limit=1");
      const reused = await contacts(`?query=bo&cursor=${encodeURIComponent(first.body.next_cursor ?? "")}`);
      expect([reused.status, errorCode(reused)]).toEqual([422, "invalid_argument"]);
      const theirs = await contacts(
        `?query=an&cursor=${encodeURIComponent(first.body.next_cursor ?? "")}`,
        other,
      );
      expect([theirs.status, errorCode(theirs)]).toEqual([422, "invalid_argument"]);
    });

    it("is for the organization's people and manage keys, not chat keys", async () => {
      const chat = await manage("GET", "/manage/contacts", { as: home.apiKey });
      expect([chat.status, errorCode(chat)]).toEqual([403, "forbidden"]);
      const key = await manage<ContactPage>("GET", "/manage/contacts?query=bob", { as: home.manageKey });
      expect(key.body.contacts.map((contact) => contact.contact_id)).toEqual([bob]);
    });
  });

  describe("GET /manage/contacts/{contact_id}", () => {
    it("answers the contact with its conversations, most recent first, and a cursor for the rest", async () => {
      const contact = randomUUID();
      const made: string[] = [];
      for (let index = 0; index < 22; index++)
        made.push(await newConversation(home, { contact_id: contact }));
      const found = await manage<
        Contact & { conversations: Conversation[]; conversations_next_cursor: string | null }
      >("GET", `/manage/contacts/${contact}`, as(home));
      expect(found.status).toBe(200);
      expect(found.body.conversation_count).toBe(22);
      expect(found.body.conversations.map((conversation) => conversation.conversation_id)).toEqual(
        made.slice(2).reverse(),
      );
      const rest = await manage<{ conversations: Conversation[]; next_cursor: string | null }>(
        "GET",
        `/manage/conversations?contact_id=${contact}&limit=20&cursor=${encodeURIComponent(found.body.conversations_next_cursor ?? "")}`,
        as(home),
      );
      expect(rest.status).toBe(200);
      expect(rest.body.conversations.map((conversation) => conversation.conversation_id)).toEqual(
        made.slice(0, 2).reverse(),
      );
      expect(rest.body.next_cursor).toBeNull();
    });

    it("answers another organization's contact exactly like an unknown one", async () => {
      for (const id of [theirAnn, randomUUID()]) {
        const response = await manage("GET", `/manage/contacts/${id}`, as(home));
        expect([response.status, errorCode(response)]).toEqual([404, "contact_not_found"]);
      }
      const bad = await manage("GET", "/manage/contacts/not-a-uuid", as(home));
      expect([bad.status, errorCode(bad)]).toEqual([422, "invalid_argument"]);
    });
  });
});

/** A context whose table client counts the items each Query reads. */
function countingContext(): { ctx: DomainContext; itemsRead: () => number; reset: () => void } {
  const base = domain();
  let read = 0;
  const send = base.db.client.send.bind(base.db.client) as (command: unknown) => Promise<unknown>;
  const client = new Proxy(base.db.client, {
    get(target, property, receiver) {
      if (property !== "send") return Reflect.get(target, property, receiver);
      return async (command: { constructor: { name: string } }) => {
        const output = (await send(command)) as { Items?: unknown[] };
        if (command.constructor.name === "QueryCommand") read += output.Items?.length ?? 0;
        return output;
      };
    },
  });
  return {
    ctx: { ...base, db: { ...base.db, client } },
    itemsRead: () => read,
    reset: () => {
      read = 0;
    },
  };
}

describe.runIf(isLocal)("a contact search page's cost", () => {
  it("reads the same number of index items whether 10 or 200 contacts match", async () => {
    const organizationId = randomUUID();
    const seed = async (count: number, name: string) => {
      for (let start = 0; start < count; start += 25) {
        await Promise.all(
          Array.from({ length: Math.min(25, count - start) }, (_, index) =>
            saveContact(domain(), {
              organizationId,
              details: {
                userName: `${name} Number${start + index}`,
                userEmail: `${name}${start + index}@x.example`,
              },
            }),
          ),
        );
      }
    };
    await seed(10, "Few");
    await seed(200, "Many");
    const { ctx, itemsRead, reset } = countingContext();
    const reads: Record<string, number> = {};
    for (const query of ["few", "many", ""]) {
      reset();
      const page = await listContacts(ctx, { organizationId, query, limit: 5 });
      expect(page.contacts).toHaveLength(5);
      reads[query] = itemsRead();
    }
    // Each contact matches by its name, first word and e-mail: three terms per contact, read once per page.
    expect(reads.few).toBeLessThanOrEqual(3 * 6);
    expect(reads.many).toBeLessThanOrEqual(3 * 6);
    expect(reads[""]).toBe(6);
  });
});
