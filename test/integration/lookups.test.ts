/**
 * Order look-ups through the whole stack (issue 4): the local runtime's message Lambda runs the
 * chatbot's look-up tool against the WooCommerce fake (started by global-setup; its request log is
 * read over the control API). The visitor talks to the API only; tools are seeded as the operator
 * CLI seeds them. Every test here counts the fake's requests, so this file keeps them to itself
 * (tests in one file run one after another).
 */
import { randomUUID } from "node:crypto";
import { GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { keys, prefixes, records } from "#functions/store/items";
import { converseText, converseToolUse } from "#test/fakes/bedrock-server";
import { bedrockControl } from "#test/fakes/keyed-bedrock";
import { wooDemo } from "#test/fakes/platforms/woocommerce";
import {
  api,
  domain,
  environment,
  isLocal,
  newConversation,
  platforms,
  runtimeLog,
  seedTenant,
  seedTool,
  type Tenant,
} from "#test/support/harness";

const JAN = "jan.jansen@example.nl";
/** Owns order 10010, not 1001. */
const KEES = "kees.deboer@example.com";

describe.runIf(isLocal)("order look-ups through the API", () => {
  /** Every API response body of this file, checked for credentials at the end. */
  const responses: string[] = [];

  async function send(tenant: Tenant, conversationId: string, message: string): Promise<string> {
    const response = await api.sendMessage(tenant.apiKey, { conversation_id: conversationId, message });
    responses.push(response.text);
    expect(response.status).toBe(200);
    return response.body.messages.map((reply) => reply.content).join("\n");
  }

  /** Order searches the shop received for `term`. */
  async function searches(term: string): Promise<number> {
    const log = await platforms.requests("woocommerce");
    return log.filter((request) => request.query.some(([name, value]) => name === "search" && value === term))
      .length;
  }

  async function shopTenant(options: { requestsPerMinute?: number; modelId?: string } = {}): Promise<Tenant> {
    const tenant = await seedTenant({
      chatbot: {
        fallbackReply: "Sorry, I can't help with that.",
        ...(options.modelId ? { engine: { kind: "bedrock" as const, modelId: options.modelId } } : {}),
      },
    });
    await seedTool(tenant, {
      kind: "woocommerce",
      name: "order_status",
      config: { ...wooDemo.config },
      credentials: { ...wooDemo.secrets },
      ...(options.requestsPerMinute === undefined ? {} : { requestsPerMinute: options.requestsPerMinute }),
    });
    return tenant;
  }

  async function storedConversation(tenant: Tenant, conversationId: string) {
    const { Item } = await domain().db.client.send(
      new GetCommand({
        TableName: domain().db.tableName,
        Key: keys.conversation(tenant.organizationId, conversationId),
        ConsistentRead: true,
      }),
    );
    return records.conversation(Item ?? {});
  }

  it("collects the order number, then the e-mail in the next message, then answers with the status (scripted)", async () => {
    // Prepare
    const shop = await shopTenant();
    const conversationId = await newConversation(shop);
    const before = await searches("1001");
    // Act
    const ask = await send(shop, conversationId, "Hi, where is my order #1001?");
    const afterAsk = await searches("1001");
    const kept = await storedConversation(shop, conversationId);
    const answer = await send(shop, conversationId, JAN);
    // Assess
    expect(ask).toContain("e-mail address");
    expect(ask).not.toContain("order number");
    expect(afterAsk).toBe(before);
    expect(kept.collected).toEqual({ order_number: "1001" });
    expect(answer).toContain("1001");
    expect(answer).toContain("processing");
    expect(answer).toContain("Linen shirt");
    expect(await searches("1001")).toBe(before + 1);
    expect((await storedConversation(shop, conversationId)).collected).toEqual({
      order_number: "1001",
      email: JAN,
    });
  });

  it("refuses a model's call with an e-mail the visitor never gave: no request, the model is told to ask", async () => {
    // Prepare
    const modelId = `test.lookup-${randomUUID()}`;
    const shop = await shopTenant({ modelId });
    const bedrock = bedrockControl(environment.bedrockControlUrl ?? "");
    await bedrock.script(
      modelId,
      converseToolUse([
        { toolUseId: "call-1", name: "order_status", input: { order_number: "1001", email: JAN } },
      ]),
      converseText("Could you tell me the e-mail address you ordered with?"),
    );
    const conversationId = await newConversation(shop);
    const before = await searches("1001");
    // Act
    const reply = await send(shop, conversationId, "Where is my order 1001?");
    // Assess
    expect(reply).toBe("Could you tell me the e-mail address you ordered with?");
    expect(await searches("1001")).toBe(before);
    const [first, second] = (await bedrock.requests(modelId)).map((request) => JSON.stringify(request));
    expect(first).toContain('"order_status"');
    expect(first).toContain('"required":["order_number","email"]');
    expect(second).toContain('"needs_input"');
    expect(second).toContain('"not_given_by_visitor"');
  });

  it("runs a model's call once the visitor gave both details, and hands it the order", async () => {
    // Prepare
    const modelId = `test.lookup-${randomUUID()}`;
    const shop = await shopTenant({ modelId });
    const bedrock = bedrockControl(environment.bedrockControlUrl ?? "");
    await bedrock.script(
      modelId,
      converseToolUse([
        { toolUseId: "call-1", name: "order_status", input: { order_number: "#1001", email: JAN } },
      ]),
      converseText("Your order 1001 is being processed."),
    );
    const conversationId = await newConversation(shop);
    const before = await searches("1001");
    // Act
    const reply = await send(shop, conversationId, `Order 1001 please, my e-mail is ${JAN}`);
    // Assess
    expect(reply).toBe("Your order 1001 is being processed.");
    expect(await searches("1001")).toBe(before + 1);
    const second = JSON.stringify((await bedrock.requests(modelId))[1]);
    expect(second).toContain('"found"');
    expect(second).toContain('"processing"');
    expect(second).not.toContain("Jansen");
  });

  it("reveals nothing when the e-mail does not match the order: same words as for no order at all", async () => {
    // Prepare
    const shop = await shopTenant();
    const [wrongOwner, noOrder] = [await newConversation(shop), await newConversation(shop)];
    const before = await searches("1001");
    // Act
    const mismatch = await send(shop, wrongOwner, `Where is order 1001? My e-mail is ${KEES}`);
    const missing = await send(shop, noOrder, `Where is order 999999? My e-mail is ${KEES}`);
    // Assess
    expect(await searches("1001")).toBe(before + 1);
    expect(mismatch).toBe(missing);
    for (const detail of ["processing", "Linen", "54.85", "Jan", "PostNL"])
      expect(mismatch).not.toContain(detail);
  });

  it("answers a repeated look-up in the conversation from its cache: no second request", async () => {
    // Prepare
    const shop = await shopTenant();
    const conversationId = await newConversation(shop);
    const before = await searches("1001");
    // Act
    const first = await send(shop, conversationId, `Status of order 1001, ${JAN}?`);
    const again = await send(shop, conversationId, `And where is order #1001 now? ${JAN.toUpperCase()}`);
    // Assess
    expect(first).toContain("processing");
    expect(again).toBe(first);
    expect(await searches("1001")).toBe(before + 1);
  });

  it("ignores a cached result past its expiry, though TTL has not deleted it yet", async () => {
    // Prepare
    const shop = await shopTenant();
    const conversationId = await newConversation(shop);
    const before = await searches("1001");
    await send(shop, conversationId, `Status of order 1001, ${JAN}?`);
    const { Items = [] } = await domain().db.client.send(
      new QueryCommand({
        TableName: domain().db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :cache)",
        ExpressionAttributeValues: {
          ":pk": prefixes.conversationPartition(shop.organizationId, conversationId),
          ":cache": "TOOLCACHE#",
        },
        ConsistentRead: true,
      }),
    );
    const [cached] = Items;
    const nowSeconds = Math.floor(Date.now() / 1000);
    await domain().db.client.send(
      new UpdateCommand({
        TableName: domain().db.tableName,
        Key: { PK: cached?.PK, SK: cached?.SK },
        UpdateExpression: "SET expiresAt = :past, #ttl = :past",
        ExpressionAttributeNames: { "#ttl": "ttl" },
        ExpressionAttributeValues: { ":past": nowSeconds - 1 },
      }),
    );
    // Act
    const again = await send(shop, conversationId, `Status of order 1001, ${JAN}?`);
    // Assess
    expect(Items).toHaveLength(1);
    expect(Number(cached?.ttl)).toBeGreaterThan(nowSeconds + 200);
    expect(Number(cached?.ttl)).toBeLessThanOrEqual(nowSeconds + 301);
    expect(JSON.stringify(cached)).not.toContain(JAN);
    expect(again).toContain("processing");
    expect(await searches("1001")).toBe(before + 2);
  });

  it("gives up on a slow platform inside the turn's deadline and says so (not the fallback)", async () => {
    // Prepare
    const shop = await shopTenant();
    const conversationId = await newConversation(shop);
    await platforms.script("woocommerce", { kind: "slow", delayMs: 10_000 });
    const started = Date.now();
    // Act
    const reply = await send(shop, conversationId, `Where is order 1001? ${JAN}`);
    // Assess
    expect(reply).toBe("I can't look up your order right now. Please try again later.");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("caps a tool's requests with its token bucket in the table", async () => {
    // Prepare
    const shop = await shopTenant({ requestsPerMinute: 1 });
    const [one, two] = [await newConversation(shop), await newConversation(shop)];
    const before = await searches("1001");
    // Act
    const admitted = await send(shop, one, `Where is order 1001? ${JAN}`);
    const capped = await send(shop, two, `Where is order 1001? ${JAN}`);
    // Assess
    expect(admitted).toContain("processing");
    expect(capped).toContain("busy");
    expect(await searches("1001")).toBe(before + 1);
  });

  it("honours the platform's 429 Retry-After: the tool sends nothing until the wait is over", async () => {
    // Prepare
    const shop = await shopTenant();
    const [one, two] = [await newConversation(shop), await newConversation(shop)];
    await platforms.script("woocommerce", { kind: "rate_limited", retryAfter: "30" });
    const before = await searches("1001");
    // Act
    const throttled = await send(shop, one, `Where is order 1001? ${JAN}`);
    const held = await send(shop, two, `Where is order 1001? ${JAN}`);
    // Assess
    expect(throttled).toContain("busy");
    expect(held).toContain("busy");
    expect(await searches("1001")).toBe(before + 1);
  });

  it("never puts the tool's credentials in an API response or the runtime's log", () => {
    const secrets = Object.values(wooDemo.secrets);
    const log = runtimeLog();
    expect(responses.length).toBeGreaterThan(5);
    expect(log).toContain('"message":"tool look-up"');
    for (const secret of secrets) {
      expect(responses.join("\n")).not.toContain(secret);
      expect(log).not.toContain(secret);
      expect(log).not.toContain(Buffer.from(`${wooDemo.secrets.consumerKey}:${secret}`).toString("base64"));
    }
  });
});
