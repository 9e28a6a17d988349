import { describe, expect, it } from "vitest";
import { createScriptedEngine, isGreeting, type ScriptedHook } from "#functions/agent/scripted-engine";
import { entryPassage } from "#functions/knowledge/entry-passages";
import { demoKnowledge } from "#lib/local/demo";
import { aTurn } from "#test/fakes/engine-turn";
import { shopKnowledge, turnKnowledgeFor } from "#test/fakes/knowledge-fixture";

const welcomeMessage = "Welcome to the shop! How can I help?";
const fallbackReply = "Sorry, I don't know that yet. A colleague will get back to you.";
const engine = createScriptedEngine({ welcomeMessage, fallbackReply });

/** A turn as the domain builds it: the question, and what retrieval found for it (lexical and semantic). */
const turnFor = (text: string) => aTurn({ message: { text, images: [] }, knowledge: turnKnowledgeFor(text) });

async function replyTo(text: string): Promise<string | undefined> {
  const reply = await engine.reply(turnFor(text));
  expect(reply.messages).toHaveLength(1);
  return reply.messages[0];
}

function answerOf(id: string): string {
  const entry = shopKnowledge.find((candidate) => candidate.id === id);
  if (entry?.kind !== "qa") throw new Error(`no Q/A entry ${id}`);
  return entry.answer;
}

describe("scripted engine", () => {
  it.each([
    "hi",
    "Hello!",
    "hey there",
    "Good morning, team",
    "Goedemorgen",
    "Guten Tag!",
    "Bonjour à tous",
    "¡Buenos días!",
    "   ",
    "👋",
  ])("greets %j with the welcome message", async (text) => {
    expect(await replyTo(text)).toBe(welcomeMessage);
  });

  it("treats a greeting followed by a question as a question", async () => {
    expect(isGreeting("Hi, what are your opening hours?")).toBe(false);
    expect(await replyTo("Hi, what are your opening hours?")).toBe(answerOf("kb-hours"));
  });

  it.each([
    ["when does the shop open?", "kb-hours"], // different words around the same content word
    ["OPENING HOURS", "kb-hours"], // casing
    ["Are you open on Sundays", "kb-hours"], // plural in the question, singular-ish answer
    ["shipping costs", "kb-shipping-cost"], // plural
    ["what does it cost to ship my order", "kb-shipping-cost"], // word order, inflection
    ["how many days until my order is delivered", "kb-shipping-time"], // inflection in the answer
    ["How many days do I have to return a product", "kb-returns"],
    ["Can I pay with a credit card?", "kb-payment"],
    ["Do you offer gift cards", "kb-gift-cards"],
    ["cafe in the store?", "kb-cafe"], // accent folding: café
    ["how do I change my account email", "kb-account"],
  ])("answers %j from %s", async (question, id) => {
    expect(await replyTo(question)).toBe(answerOf(id));
  });

  it.each(["can I return a product?", "what is your return policy"])(
    "answers the paraphrase %j from the demo's returns entry, which its words alone miss",
    async (question) => {
      const passages = demoKnowledge.map((entry, position) =>
        entryPassage({ ...entry, entryId: `demo-${position}`, createdAt: "2026-11-21T00:00:00.000Z" }),
      );
      const returns = passages.find((passage) => passage.sourceTitle === "Can I return my order?");
      expect(turnKnowledgeFor(question, passages, { lexicalOnly: true }).answer).toBeUndefined();
      const reply = await engine.reply(
        aTurn({ message: { text: question, images: [] }, knowledge: turnKnowledgeFor(question, passages) }),
      );
      expect(reply.messages).toEqual([returns?.text]);
      expect(reply.sources).toEqual([{ sourceId: returns?.sourceId, title: "Can I return my order?" }]);
    },
  );

  it("cites the source it answered from, and none for a greeting or the fallback", async () => {
    expect((await engine.reply(turnFor("Can I pay with a credit card?"))).sources).toEqual([
      { sourceId: "kb-payment", title: "Which payment methods do you accept?" },
    ]);
    expect((await engine.reply(turnFor("hello"))).sources).toBeUndefined();
    expect((await engine.reply(turnFor("Who won the football match yesterday?"))).sources).toBeUndefined();
  });

  it("answers from a snippet with its best sentence", async () => {
    expect(await replyTo("Is there free parking?")).toBe(
      "Customers park for free in the garage under the building.",
    );
  });

  it.each([
    "Who won the football match yesterday?",
    "What is the weather in Amsterdam",
    "Can I bring my dog",
  ])("gives the fallback reply to the unrelated %j", async (question) => {
    expect(await replyTo(question)).toBe(fallbackReply);
  });

  it("is deterministic: same question, same reply, for a fresh engine too", async () => {
    const question = "do you take paypal or credit cards";
    const again = createScriptedEngine({ welcomeMessage, fallbackReply });
    const replies = [
      await engine.reply(turnFor(question)),
      await engine.reply(turnFor(question)),
      await again.reply(turnFor(question)),
    ];
    expect(replies[1]).toEqual(replies[0]);
    expect(replies[2]).toEqual(replies[0]);
    expect(replies[0]).toEqual({
      messages: [answerOf("kb-payment")],
      toolCalls: 0,
      sources: [{ sourceId: "kb-payment", title: "Which payment methods do you accept?" }],
    });
  });

  it("lets the hook answer before retrieval, and not for greetings", async () => {
    // Prepare
    const seen: string[] = [];
    const hook: ScriptedHook = async (turn) => {
      seen.push(turn.message.text);
      return turn.message.text.includes("order 1042")
        ? { messages: ["Order 1042 has shipped."], toolCalls: 1 }
        : undefined;
    };
    const hooked = createScriptedEngine({ welcomeMessage, fallbackReply, hook });
    // Act
    const tracked = await hooked.reply(turnFor("Where is order 1042?"));
    const retrieved = await hooked.reply(turnFor("opening hours"));
    const greeted = await hooked.reply(turnFor("hello"));
    // Assess
    expect(tracked).toEqual({ messages: ["Order 1042 has shipped."], toolCalls: 1 });
    expect(retrieved.messages).toEqual([answerOf("kb-hours")]);
    expect(greeted.messages).toEqual([welcomeMessage]);
    expect(seen).toEqual(["Where is order 1042?", "opening hours"]);
  });
});

describe("scripted engine, streamed", () => {
  it("hands over its first reply message in one piece, exactly as it returns it", async () => {
    const engine = createScriptedEngine({
      welcomeMessage: "  Welcome to the shop!\n",
      fallbackReply: "Sorry.",
    });
    const deltas: string[] = [];
    const reply = await engine.reply(
      aTurn({ message: { text: "Hello", images: [] }, onText: (d) => deltas.push(d) }),
    );
    expect(deltas).toEqual(["Welcome to the shop!"]);
    expect(reply.messages).toEqual(["Welcome to the shop!"]);
  });
});
