/**
 * The scripted engine's look-ups (slot filling through its hook) against the platform fakes: a turn
 * is the engine plus a fresh look-up ToolBox holding what the conversation kept so far, exactly as
 * the message Lambda builds them.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { HistoryMessage } from "#functions/agent/engine";
import { lookupHook } from "#functions/agent/lookup-hook";
import { createScriptedEngine } from "#functions/agent/scripted-engine";
import type { ConfiguredTool } from "#functions/tools/registry";
import { createLookupToolBox } from "#functions/tools/toolbox";
import { aTurn } from "#test/fakes/engine-turn";
import { shopKnowledge, turnKnowledgeFor } from "#test/fakes/knowledge-fixture";
import {
  type PlatformFakes,
  type PlatformName,
  platformDemos,
  startPlatformFakes,
} from "#test/fakes/platforms/index";
import { demoTool, httpFor, inSeconds } from "#test/unit/tools/support/harness";

let fakes: PlatformFakes;
beforeAll(async () => {
  fakes = await startPlatformFakes();
});
afterAll(() => fakes.stop());
beforeEach(() => fakes.reset());

const fallbackReply = "Sorry, I don't know that yet.";
const engine = createScriptedEngine({
  welcomeMessage: "Welcome!",
  fallbackReply,
  hook: lookupHook,
});

/** A conversation with the scripted engine: each `say` is one turn, keeping what the turn collected. */
function conversation(tools: ConfiguredTool[]) {
  const visitorTexts: string[] = [];
  const history: HistoryMessage[] = [];
  let collected: Record<string, string> = {};
  return {
    get collected() {
      return collected;
    },
    async say(text: string): Promise<{ reply: string; toolCalls: number }> {
      visitorTexts.push(text);
      const box = createLookupToolBox({
        tools,
        visitorTexts: [...visitorTexts],
        collected,
        loadSecrets: async (tool) => platformDemos[tool.kind as PlatformName].secrets,
        http: httpFor(fakes),
        deadline: inSeconds(10),
      });
      const result = await engine.reply(
        aTurn({
          history: [...history],
          message: { text, images: [] },
          tools: box,
          knowledge: turnKnowledgeFor(text),
        }),
      );
      collected = box.collected();
      const reply = result.messages.join("\n");
      history.push({ role: "user", text }, { role: "assistant", text: reply });
      return { reply, toolCalls: result.toolCalls };
    },
  };
}

describe("scripted look-ups by slot filling", () => {
  it("takes the order number, asks for exactly the e-mail, then answers with the status", async () => {
    // Prepare
    const chat = conversation([demoTool("woocommerce")]);
    // Act
    const first = await chat.say("Hi! Where is my order #1001?");
    const requestsAfterFirst = fakes.woocommerce.requests.length;
    const second = await chat.say("jan.jansen@example.nl");
    // Assess
    expect(first).toEqual({
      reply: "To look up your order, I need your e-mail address. Could you send it?",
      toolCalls: 0,
    });
    expect(requestsAfterFirst).toBe(0);
    expect(second.reply).toContain("I found your order 1001. Status: processing.");
    expect(second.reply).toContain("2 × Linen shirt - Blue, M");
    expect(second.toolCalls).toBe(1);
    expect(fakes.woocommerce.requests).toHaveLength(1);
    expect(chat.collected).toEqual({ order_number: "1001", email: "jan.jansen@example.nl" });
  });

  it("asks for both details when the visitor only asks where the order is", async () => {
    const { reply } = await conversation([demoTool("shopify")]).say("where is my order?");
    expect(reply).toBe(
      "To look up your order, I need your order number and e-mail address. Could you send them?",
    );
    expect(fakes.shopify.requests).toHaveLength(0);
  });

  it("accepts a bare order number as the answer to its own question", async () => {
    // Prepare
    const chat = conversation([demoTool("woocommerce")]);
    await chat.say("my e-mail is jan.jansen@example.nl, where is my order?");
    // Act
    const { reply } = await chat.say("it's 1001");
    // Assess
    expect(reply).toContain("Status: processing");
  });

  it("says the same when the e-mail is not the order's as when there is no such order", async () => {
    const mismatch = await conversation([demoTool("woocommerce")]).say("order 1001, kees.deboer@example.com");
    const missing = await conversation([demoTool("woocommerce")]).say(
      "order 999999, kees.deboer@example.com",
    );
    expect(mismatch.reply).toBe(missing.reply);
    expect(mismatch.reply).toContain("couldn't find an order");
    expect(fakes.woocommerce.requests.length).toBeGreaterThan(0);
  });

  it("looks up a parcel by tracking code and postal code given in two messages", async () => {
    // Prepare
    const chat = conversation([demoTool("sendcloud")]);
    // Act
    const ask = await chat.say("Where is my parcel? Tracking code 3SYZXG192847563");
    const answer = await chat.say("postcode 5611 em");
    // Assess
    expect(ask.reply).toBe("To look up your parcel, I need your postal code. Could you send it?");
    expect(answer.reply).toContain("I found your parcel 3SYZXG192847563. Status: Delivered.");
    expect(answer.reply).toContain("Track it here: https://tracking.sendcloud.sc/");
  });

  it("picks the tool the message is about when a chatbot has several", async () => {
    const chat = conversation([demoTool("woocommerce"), demoTool("sendcloud")]);
    const { reply } = await chat.say("Where is my package? tracking JVGL0612345678901234, postcode 1012 AB");
    expect(reply).toContain("Parcel en route");
    expect(fakes.woocommerce.requests).toHaveLength(0);
  });

  it("leaves other questions about orders to the knowledge entries", async () => {
    const { reply, toolCalls } = await conversation([demoTool("woocommerce")]).say("Can I return a product?");
    const returns = shopKnowledge.find((entry) => entry.id === "kb-returns");
    expect(reply).toBe(returns?.kind === "qa" ? returns.answer : undefined);
    expect(toolCalls).toBe(0);
  });

  it("answers 'busy' rather than guessing when the platform rate-limits", async () => {
    fakes.shopify.script({ kind: "rate_limited", retryAfter: "30" });
    const { reply } = await conversation([demoTool("shopify")]).say(
      "order #1001 bob.norman@mail.example.com",
    );
    expect(reply).toBe(
      "I can't look up your order right now: the system is busy. Please try again in a minute.",
    );
  });
});
