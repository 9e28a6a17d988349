/**
 * Grounded answers through the whole stack: the runtime's message functions retrieve the chatbot's
 * passages (embedding the question through the real Bedrock SDK's InvokeModel, or an OpenAI-compatible
 * `/v1/embeddings`, against local servers speaking those protocols), put them in the request the model
 * receives, and answer with the sources, on `POST /api/message`, the stream's `message.end` and in
 * history. The scripted engine answers paraphrases from the same retrieval.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GROUNDING_RULE } from "#functions/knowledge/grounding";
import { demoKnowledge } from "#lib/local/demo";
import { converseStream, converseText } from "#test/fakes/bedrock-server";
import { bedrockControl } from "#test/fakes/keyed-bedrock";
import {
  completionStream,
  completionText,
  type FakeOpenAi,
  startFakeOpenAi,
} from "#test/fakes/openai-server";
import { openStream, type StreamEvent } from "#test/support/event-stream-client";
import {
  api,
  environment,
  isLocal,
  newConversation,
  reachable,
  seedTenant,
  type Tenant,
  UUID,
} from "#test/support/harness";

const shopKnowledge = [
  {
    question: "Can I return my order?",
    answer:
      "Yes: you can return items within 30 days of delivery. Use the return form in your account; return shipping is free.",
  },
  {
    question: "How long does shipping take?",
    answer:
      "Orders ship within 1 working day; delivery in the Netherlands and Belgium takes 1–2 working days.",
  },
  {
    question: "Which payment methods do you accept?",
    answer: "We accept iDEAL, credit cards, PayPal and Klarna.",
  },
];

type ConverseRequest = { system?: ({ text?: string } | { cachePoint?: { type: string } })[] };
const systemText = (request: ConverseRequest | undefined) =>
  (request?.system ?? []).map((block) => ("text" in block ? block.text : "")).join("\n");

const endOf = (events: StreamEvent[]) =>
  events.find((event) => event.event === "message.end")?.data as
    | { content: string; sources: unknown[] }
    | undefined;

describe.runIf(isLocal)("grounded answers: Bedrock", () => {
  const bedrock = () => bedrockControl(environment.bedrockControlUrl ?? "");
  const tenantFor = (modelId: string) =>
    seedTenant({
      knowledge: shopKnowledge,
      chatbot: { engine: { kind: "bedrock", modelId }, instructions: "You are the shop's assistant." },
    });

  it("puts the retrieved passages in the model's system prompt and answers with their sources", async () => {
    const modelId = `test.model-${randomUUID()}`;
    const shop = await tenantFor(modelId);
    await bedrock().script(modelId, converseText("You can send it back within 30 days, for free."));
    const calls = await bedrock().embeddingCalls();
    const conversationId = await newConversation(shop);

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "what is your return policy?",
    });

    expect(response.status).toBe(200);
    const [request] = (await bedrock().requests(modelId)) as ConverseRequest[];
    const system = systemText(request);
    expect(system).toContain("You are the shop's assistant.");
    expect(system).toContain(GROUNDING_RULE);
    expect(system).toContain("Yes: you can return items within 30 days of delivery.");
    // The question was embedded through InvokeModel (and the passages, on this instance's first look).
    expect(await bedrock().embeddingCalls()).toBeGreaterThan(calls);
    const [reply] = response.body.messages;
    expect(reply?.content).toBe("You can send it back within 30 days, for free.");
    expect(reply?.sources).toEqual([
      { source_id: expect.stringMatching(UUID), title: "Can I return my order?", url: null },
    ]);
    const history = await api.listMessages(shop.apiKey, conversationId);
    expect(history.body.messages.at(-1)?.sources).toEqual(reply?.sources);
  });

  it("tells the model that nothing matched, and cites nothing, for a question the knowledge does not hold", async () => {
    const modelId = `test.model-${randomUUID()}`;
    const shop = await tenantFor(modelId);
    await bedrock().script(modelId, converseText("I'm sorry, I don't know that."));
    const conversationId = await newConversation(shop);

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "Do you repair bicycles?",
    });

    const [request] = (await bedrock().requests(modelId)) as ConverseRequest[];
    expect(systemText(request)).toContain("none of the business's content matches");
    expect(systemText(request)).not.toContain("30 days");
    expect(response.body.messages[0]?.sources).toEqual([]);
  });

  it("marks the stable prefix with a cache point for a model that takes one", async () => {
    const modelId = `us.anthropic.claude-3-7-sonnet-20250219-v1:0-${randomUUID()}`;
    const shop = await tenantFor(modelId);
    await bedrock().script(modelId, converseText("Within 30 days."));
    const conversationId = await newConversation(shop);

    await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "Can I return my order?",
    });

    const [request] = (await bedrock().requests(modelId)) as ConverseRequest[];
    expect(request?.system?.map((block) => Object.keys(block)[0])).toEqual(["text", "cachePoint", "text"]);
    expect(request?.system?.[1]).toEqual({ cachePoint: { type: "default" } });
    // Before the cache point: only what changes with the chatbot; after it, the question's passages.
    expect(systemText({ system: request?.system?.slice(0, 1) ?? [] })).not.toContain("30 days");
    expect(systemText({ system: request?.system?.slice(2) ?? [] })).toContain("30 days");
  });

  it("streams the grounded reply, with the sources in message.end", async () => {
    const modelId = `test.model-${randomUUID()}`;
    const shop = await tenantFor(modelId);
    await bedrock().script(modelId, converseStream("We accept iDEAL, cards, PayPal and Klarna."));
    const conversationId = await newConversation(shop);

    const events = await (
      await openStream({
        key: shop.apiKey,
        body: { conversation_id: conversationId, message: "can I pay with paypal?" },
      })
    ).rest();

    const [request] = (await bedrock().requests(modelId)) as ConverseRequest[];
    expect(systemText(request)).toContain("We accept iDEAL, credit cards, PayPal and Klarna.");
    expect(endOf(events)?.sources).toEqual([
      { source_id: expect.stringMatching(UUID), title: "Which payment methods do you accept?", url: null },
    ]);
  });
});

describe.runIf(isLocal)("grounded answers: OpenAI-compatible", () => {
  let openAi: FakeOpenAi;
  let shop: Tenant;
  beforeAll(async () => {
    openAi = await startFakeOpenAi();
    shop = await seedTenant({
      knowledge: shopKnowledge,
      chatbot: {
        engine: { kind: "openai", baseUrl: `${reachable(openAi.url)}/v1`, model: "gpt-test" },
        instructions: "Be brief.",
      },
    });
  });
  afterAll(async () => {
    await openAi.close();
  });

  it("embeds through /v1/embeddings, puts the passages in the system message, and cites them", async () => {
    openAi.enqueue(completionText("Delivery takes 1–2 working days."));
    const conversationId = await newConversation(shop);
    const before = openAi.requests.length;

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "how long does delivery to Belgium take?",
    });

    const sent = openAi.requests.slice(before);
    const embeddings = sent.filter((request) => request.path === "/v1/embeddings");
    expect(embeddings.length).toBeGreaterThan(0);
    expect(embeddings.at(-1)?.body).toMatchObject({ model: "text-embedding-3-small", dimensions: 256 });
    const chat = sent.find((request) => request.path === "/v1/chat/completions")?.body as {
      messages: { role: string; content: string }[];
    };
    expect(chat.messages[0]?.role).toBe("system");
    expect(chat.messages[0]?.content).toContain("Be brief.");
    expect(chat.messages[0]?.content).toContain(GROUNDING_RULE);
    expect(chat.messages[0]?.content).toContain(
      "delivery in the Netherlands and Belgium takes 1–2 working days",
    );
    expect(response.body.messages[0]?.sources).toEqual([
      { source_id: expect.stringMatching(UUID), title: "How long does shipping take?", url: null },
    ]);
  });

  it("streams the grounded reply with its sources", async () => {
    openAi.enqueue(completionStream("Returns are free within 30 days."));
    const conversationId = await newConversation(shop);

    const events = await (
      await openStream({
        key: shop.apiKey,
        body: { conversation_id: conversationId, message: "can I return my order?" },
      })
    ).rest();

    expect(endOf(events)?.content).toBe("Returns are free within 30 days.");
    // The passages that answer the question, best first: the returns entry leads.
    expect(endOf(events)?.sources[0]).toEqual({
      source_id: expect.stringMatching(UUID),
      title: "Can I return my order?",
      url: null,
    });
  });
});

describe.runIf(isLocal)("grounded answers: scripted", () => {
  it.each(["can I return a product?", "what is your return policy"])(
    "answers the paraphrase %j from the demo chatbot's returns entry, with its source",
    async (question) => {
      const shop = await seedTenant({
        knowledge: demoKnowledge.flatMap((entry) =>
          entry.kind === "qa" ? [{ question: entry.question, answer: entry.answer }] : [],
        ),
      });
      const conversationId = await newConversation(shop);

      const response = await api.sendMessage(shop.apiKey, {
        conversation_id: conversationId,
        message: question,
      });

      const returns = demoKnowledge.find(
        (entry) => entry.kind === "qa" && entry.question === "Can I return my order?",
      );
      expect(response.body.messages[0]?.content).toBe(returns?.kind === "qa" ? returns.answer : undefined);
      expect(response.body.messages[0]?.sources.map((source) => source.title)).toEqual([
        "Can I return my order?",
      ]);
    },
  );
});
