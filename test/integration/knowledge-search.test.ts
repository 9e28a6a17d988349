/**
 * The management side of answering from knowledge: "test a question" (POST …/knowledge/search, the
 * same retrieval a turn runs) and the knowledge gaps (questions the knowledge could not answer,
 * recorded by turns and grouped by similarity). Two organizations: neither sees the other's.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { api, isLocal, newConversation } from "#test/support/harness";
import { type ManagedTenant, manage, seedManagedTenant } from "#test/support/management";

const knowledge = [
  {
    question: "Can I return my order?",
    answer: "Yes: you can return items within 30 days of delivery. Use the return form in your account.",
  },
  {
    question: "Which payment methods do you accept?",
    answer: "We accept iDEAL, credit cards, PayPal and Klarna.",
  },
  { question: "How long does shipping take?", answer: "Orders ship within 1 working day." },
];

let shop: ManagedTenant;
let other: ManagedTenant;
beforeAll(async () => {
  [shop, other] = await Promise.all([
    seedManagedTenant({ knowledge }),
    seedManagedTenant({ knowledge: knowledge.slice(0, 1) }),
  ]);
});
const post = (tenant: ManagedTenant, path: string, body: unknown) =>
  manage("POST", path, { as: tenant.manageKey, body });
const get = (tenant: ManagedTenant, path: string) => manage("GET", path, { as: tenant.manageKey });

describe.runIf(isLocal)("testing a question against the knowledge", () => {
  it("answers the passages a turn would use, best first, with their scores", async () => {
    const response = await post(shop, `/manage/chatbots/${shop.chatbotId}/knowledge/search`, {
      query: "what is your return policy?",
    });

    expect(response.status, response.text).toBe(200);
    const results = (response.body as { results: Record<string, unknown>[] }).results;
    expect(results[0]).toMatchObject({
      title: "Can I return my order?",
      text: knowledge[0]?.answer,
      url: null,
      confident: true,
    });
    expect(results[0]?.score).toBeGreaterThan(0);
    expect(results[0]?.semantic_similarity).toEqual(expect.any(Number));
    // What a turn then answers: the same passage.
    const conversationId = await newConversation(shop);
    const turn = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "what is your return policy?",
    });
    expect(turn.body.messages[0]?.content).toBe(knowledge[0]?.answer);
  });

  it("answers [] for a question nothing matches, 404 for another organization's chatbot, 422 for no query", async () => {
    const none = await post(shop, `/manage/chatbots/${shop.chatbotId}/knowledge/search`, {
      query: "zebra xylophone quantum",
    });
    const foreign = await post(shop, `/manage/chatbots/${other.chatbotId}/knowledge/search`, {
      query: "return",
    });
    const empty = await post(shop, `/manage/chatbots/${shop.chatbotId}/knowledge/search`, { query: "" });

    expect(none.body).toEqual({ results: [] });
    expect(foreign.status).toBe(404);
    expect(empty.status).toBe(422);
  });
});

describe.runIf(isLocal)("knowledge gaps", () => {
  it("records the questions the knowledge could not answer, groups similar ones, most frequent first", async () => {
    const tenant = await seedManagedTenant({ knowledge });
    const ask = async (message: string) => {
      const conversationId = await newConversation(tenant);
      const answer = await api.sendMessage(tenant.apiKey, { conversation_id: conversationId, message });
      expect(answer.status).toBe(200);
      return conversationId;
    };
    await ask("Do you repair bicycles?");
    await ask("do you repair bicycles");
    const last = await ask("Bicycle repairs, do you do them?");
    await ask("Is there parking near the store?");
    await ask("Can I return my order?"); // answered: no gap
    await ask("hello"); // a greeting: no gap

    const response = await get(tenant, `/manage/chatbots/${tenant.chatbotId}/knowledge-gaps`);

    expect(response.status, response.text).toBe(200);
    const gaps = (response.body as { gaps: { question: string; count: number; conversation_id: string }[] })
      .gaps;
    expect(gaps.map((gap) => [gap.question, gap.count])).toEqual([
      ["Do you repair bicycles?", 3],
      ["Is there parking near the store?", 1],
    ]);
    expect(gaps[0]?.conversation_id).toBe(last);
    // Another organization sees none of them, and cannot read this chatbot's.
    expect((await get(other, `/manage/chatbots/${other.chatbotId}/knowledge-gaps`)).body).toEqual({
      gaps: [],
    });
    expect((await get(other, `/manage/chatbots/${tenant.chatbotId}/knowledge-gaps`)).status).toBe(404);
  });

  it("refuses a range that is backwards or longer than 90 days", async () => {
    const backwards = await get(
      shop,
      `/manage/chatbots/${shop.chatbotId}/knowledge-gaps?from=2026-11-20&to=2026-11-01`,
    );
    const long = await get(
      shop,
      `/manage/chatbots/${shop.chatbotId}/knowledge-gaps?from=2026-01-01&to=2026-11-01`,
    );
    expect(backwards.status).toBe(422);
    expect(long.status).toBe(422);
  });
});
