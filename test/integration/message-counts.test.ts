/**
 * One meaning per message count: `message_count` is every message of the history (what GET
 * …/messages lists), `visitor_message_count` the visitor's own; the public and the management
 * answers say the same.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { api, call } from "#test/support/harness";
import { hasIdentity, type ManagedTenant, manage, seedManagedTenant } from "#test/support/management";

interface Counted {
  message_count: number;
  visitor_message_count: number;
}

let home: ManagedTenant;

describe.runIf(hasIdentity)("message counts", () => {
  beforeAll(async () => {
    home = await seedManagedTenant({
      knowledge: [{ question: "How long does shipping take?", answer: "Two working days." }],
    });
  });

  /** The counts of every answer that carries them, and the number of messages the history lists. */
  async function counts(conversationId: string) {
    const manageAs = { as: home.viewer.token, organization: home.organizationId };
    const [publicOne, publicList, managed, managedList, history] = await Promise.all([
      call<Counted>("GET", `/api/conversation/${conversationId}`, { key: home.apiKey }),
      call<{ conversations: (Counted & { conversation_id: string })[] }>("GET", "/api/conversations", {
        key: home.apiKey,
      }),
      manage<Counted>("GET", `/manage/conversations/${conversationId}`, manageAs),
      manage<{ conversations: (Counted & { conversation_id: string })[] }>(
        "GET",
        "/manage/conversations",
        manageAs,
      ),
      api.listMessages(home.apiKey, conversationId, "?limit=100"),
    ]);
    const pick = ({ message_count, visitor_message_count }: Counted) => ({
      message_count,
      visitor_message_count,
    });
    const listed = (page: { conversations: (Counted & { conversation_id: string })[] }) => {
      const found = page.conversations.find(
        (conversation) => conversation.conversation_id === conversationId,
      );
      if (!found) throw new Error("the conversation is not listed");
      return pick(found);
    };
    const answers = [
      pick(publicOne.body),
      listed(publicList.body),
      pick(managed.body),
      listed(managedList.body),
    ];
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    return { ...answers[0], history: history.body.messages.length };
  }

  it("counts every message of the history in message_count and the visitor's in visitor_message_count", async () => {
    const started = await api.startConversation(home.apiKey, { chatbot_id: home.chatbotId });
    const id = started.body.conversation_id;
    expect(await counts(id)).toEqual({ message_count: 0, visitor_message_count: 0, history: 0 });

    for (const message of ["Hello", "How long does shipping take?"]) {
      expect((await api.sendMessage(home.apiKey, { conversation_id: id, message })).status).toBe(200);
    }
    expect(await counts(id)).toEqual({ message_count: 4, visitor_message_count: 2, history: 4 });

    // A status line counts as a message of the history; it is not the visitor's.
    expect((await call("POST", `/api/conversation/${id}/handoff`, { key: home.apiKey })).status).toBe(200);
    expect(await counts(id)).toEqual({ message_count: 5, visitor_message_count: 2, history: 5 });

    // While a person answers, the visitor's message is stored and counted, with no reply.
    const waiting = await api.sendMessage(home.apiKey, { conversation_id: id, message: "Anyone there?" });
    expect(waiting.body.messages).toEqual([]);
    expect(await counts(id)).toEqual({ message_count: 6, visitor_message_count: 3, history: 6 });

    // A person's reply is a message of the history too.
    const replied = await manage("POST", `/manage/conversations/${id}/reply`, {
      as: home.admin.token,
      organization: home.organizationId,
      body: { message: "Yes, I'm here." },
    });
    expect(replied.status).toBe(200);
    expect(await counts(id)).toEqual({ message_count: 7, visitor_message_count: 3, history: 7 });
  });
});
