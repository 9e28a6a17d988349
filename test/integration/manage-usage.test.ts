/**
 * Usage per day and chatbot, counted by the turns themselves: visitor messages, replies, fallback
 * replies, look-ups by outcome, model tokens; one chatbot's or all; a range refused when it makes
 * no sense; another organization's usage never shows.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createChatbot } from "#functions/domain/chatbots";
import { converseText } from "#test/fakes/bedrock-server";
import { bedrockControl } from "#test/fakes/keyed-bedrock";
import { wooDemo } from "#test/fakes/platforms/woocommerce";
import { openStream } from "#test/support/event-stream-client";
import { api, domain, environment, isLocal, newConversation, seedTool } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  seedManagedTenant,
} from "#test/support/management";

interface Day {
  date: string;
  chatbot_id: string;
  visitor_messages: number;
  replies: number;
  fallbacks: number;
  lookups: Record<string, number>;
  input_tokens: number;
  output_tokens: number;
}

interface Usage {
  from: string;
  to: string;
  days: Day[];
  totals: Omit<Day, "date" | "chatbot_id">;
}

let home: ManagedTenant;
let other: ManagedTenant;
const today = () => new Date().toISOString().slice(0, 10);
const usage = (query = "", tenant = home) =>
  manage<Usage>("GET", `/manage/usage${query}`, {
    as: tenant.viewer.token,
    organization: tenant.organizationId,
  });

describe.runIf(hasIdentity && isLocal)("usage", () => {
  let modelBot: string;

  beforeAll(async () => {
    [home, other] = await Promise.all([
      seedManagedTenant({ knowledge: [{ question: "How long does shipping take?", answer: "Two days." }] }),
      seedManagedTenant(),
    ]);
    await seedTool(home, {
      kind: "woocommerce",
      name: "order_status",
      config: { ...wooDemo.config },
      credentials: { ...wooDemo.secrets },
    });
    const modelId = `test.model-${randomUUID()}`;
    modelBot = (
      await createChatbot(domain(), {
        organizationId: home.organizationId,
        name: "Model bot",
        engine: { kind: "bedrock", modelId },
      })
    ).chatbotId;
    await bedrockControl(environment.bedrockControlUrl ?? "").script(
      modelId,
      converseText("Hi there.", { inputTokens: 120, outputTokens: 9 }),
      converseText("Anything else?", { inputTokens: 200, outputTokens: 11 }),
    );

    // The scripted chatbot: a greeting, a knowledge answer, a fallback, and an order look-up over two turns.
    const scripted = await newConversation(home);
    for (const message of [
      "Hello",
      "How long does shipping take?",
      "qwerty zxcvb",
      "Where is my order 1001?",
      "jan.jansen@example.nl",
    ]) {
      const reply = await api.sendMessage(home.apiKey, { conversation_id: scripted, message });
      expect(reply.status).toBe(200);
    }
    const modelConversation = await api.startConversation(home.apiKey, { chatbot_id: modelBot });
    for (const message of ["Hi", "Thanks"]) {
      await api.sendMessage(home.apiKey, {
        conversation_id: modelConversation.body.conversation_id,
        message,
      });
    }
    await api.sendMessage(other.apiKey, { conversation_id: await newConversation(other), message: "Hello" });
  });

  it("counts each chatbot's day: visitor messages, replies, fallbacks, look-ups by outcome, model tokens", async () => {
    const report = await usage();
    expect(report.status).toBe(200);
    const scripted = report.body.days.find((day) => day.chatbot_id === home.chatbotId);
    expect(scripted).toMatchObject({
      date: today(),
      visitor_messages: 5,
      replies: 5,
      fallbacks: 1,
      lookups: { found: 1, not_found: 0, auth_failed: 0, rate_limited: 0, timeout: 0, unavailable: 0 },
      input_tokens: 0,
      output_tokens: 0,
    });
    const model = report.body.days.find((day) => day.chatbot_id === modelBot);
    expect(model).toMatchObject({
      visitor_messages: 2,
      replies: 2,
      fallbacks: 0,
      input_tokens: 320,
      output_tokens: 20,
    });
    expect(report.body.totals).toMatchObject({
      visitor_messages: 7,
      replies: 7,
      input_tokens: 320,
      output_tokens: 20,
    });
    expect(report.body.to).toBe(today());
  });

  it("counts a streamed turn like any other, and moves its conversation up the listing", async () => {
    // Prepare
    const tenant = await seedManagedTenant();
    await seedTool(tenant, {
      kind: "woocommerce",
      name: "order_status",
      config: { ...wooDemo.config },
      credentials: { ...wooDemo.secrets },
    });
    const older = await newConversation(tenant);
    const newer = await newConversation(tenant);
    // Act
    const streamed = await openStream({
      key: tenant.apiKey,
      body: { conversation_id: older, message: "Where is my order 1001? My e-mail is jan.jansen@example.nl" },
    });
    expect(streamed.status).toBe(200);
    expect((await streamed.rest()).map((event) => event.event)).toContain("message.end");
    // Assess
    const report = await usage("", tenant);
    expect(report.body.days).toEqual([
      expect.objectContaining({
        chatbot_id: tenant.chatbotId,
        visitor_messages: 1,
        replies: 1,
        fallbacks: 0,
        lookups: expect.objectContaining({ found: 1 }),
      }),
    ]);
    const listing = await manage<{
      conversations: { conversation_id: string; visitor_message_count: number }[];
    }>("GET", "/manage/conversations", { as: tenant.viewer.token, organization: tenant.organizationId });
    expect(listing.body.conversations.map((conversation) => conversation.conversation_id)).toEqual([
      older,
      newer,
    ]);
    expect(listing.body.conversations[0]).toMatchObject({ visitor_message_count: 1 });
  });

  it("reports one chatbot when asked, and none of another organization's", async () => {
    const one = await usage(`?chatbot_id=${modelBot}`);
    expect(one.body.days.map((day) => day.chatbot_id)).toEqual([modelBot]);
    const chatbots = (await usage()).body.days.map((day) => day.chatbot_id);
    expect(chatbots).not.toContain(other.chatbotId);
    const theirs = await usage(`?chatbot_id=${other.chatbotId}`);
    expect(theirs.body.days).toEqual([]);
    expect((await usage("", other)).body.totals.visitor_messages).toBe(1);
  });

  it("takes a range of days, and refuses a reversed, malformed or too long one", async () => {
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect((await usage(`?from=${yesterday}&to=${yesterday}`)).body.days).toEqual([]);
    expect((await usage(`?from=${today()}&to=${today()}`)).body.days.length).toBe(2);
    for (const query of [
      `?from=${today()}&to=${yesterday}`,
      "?from=2020-01-01&to=2026-01-01",
      "?from=22-11-2026",
    ]) {
      const refused = await usage(query);
      expect([query, refused.status, errorCode(refused)]).toEqual([query, 422, "invalid_argument"]);
    }
  });

  it("refuses days that do not exist (month 13, February 30): a 422 naming the field", async () => {
    const refusals: [query: string, field: string][] = [
      ["?to=2026-13-01", "to"],
      ["?from=2026-13-01&to=2026-12-31", "from"],
      ["?from=2026-02-30", "from"],
      ["?from=2026-02-01&to=2026-02-30", "to"],
      ["?to=2026-04-31", "to"],
      ["?from=2026-00-01", "from"],
    ];
    for (const [query, field] of refusals) {
      const refused = await usage(query);
      const fields = (
        refused.body as { error?: { details?: { fields?: { loc: unknown[]; type: string }[] } } }
      ).error?.details?.fields;
      expect([query, refused.status, errorCode(refused)]).toEqual([query, 422, "invalid_argument"]);
      expect([query, fields?.[0]?.loc, fields?.[0]?.type]).toEqual([
        query,
        ["query", field],
        "date_from_datetime_parsing",
      ]);
    }
    expect((await usage("?from=2024-02-29&to=2024-02-29")).status).toBe(200);
  });
});
