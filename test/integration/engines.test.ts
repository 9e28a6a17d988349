/**
 * Model engines through the whole stack (issue 3): the local runtime's message Lambda calls a
 * Bedrock Converse fake (through the real SDK) or an OpenAI-compatible fake (through its fetch client).
 * The runtime's turn budget is 3 s here (TURN_BUDGET_MS), so deadline tests are quick.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MessageRecord } from "#functions/store/items";
import { prefixes, records } from "#functions/store/items";
import { awsError, converseText } from "#test/fakes/bedrock-server";
import { sampleImages } from "#test/fakes/image-server";
import { bedrockControl } from "#test/fakes/keyed-bedrock";
import { completionText, type FakeOpenAi, openAiError, startFakeOpenAi } from "#test/fakes/openai-server";
import {
  api,
  domain,
  environment,
  isLocal,
  newConversation,
  reachable,
  runtimeLog,
  seedTenant,
  type Tenant,
} from "#test/support/harness";

async function storedMessages(tenant: Tenant, conversationId: string): Promise<MessageRecord[]> {
  const { Items } = await domain().db.client.send(
    new QueryCommand({
      TableName: domain().db.tableName,
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :messages)",
      ExpressionAttributeValues: {
        ":pk": prefixes.conversationPartition(tenant.organizationId, conversationId),
        ":messages": prefixes.messages,
      },
      ConsistentRead: true,
    }),
  );
  return (Items ?? []).map(records.message);
}

type ConverseRequest = {
  system?: { text: string }[];
  messages: {
    role: string;
    content: { text?: string; image?: { format: string; source: { bytes: string } } }[];
  }[];
  inferenceConfig?: { maxTokens?: number; temperature?: number };
};

describe.runIf(isLocal)("Bedrock engine through the API", () => {
  const bedrock = () => bedrockControl(environment.bedrockControlUrl ?? "");
  const bedrockTenant = async (modelId: string) =>
    seedTenant({
      chatbot: {
        engine: { kind: "bedrock", modelId },
        instructions: "You are the shop's assistant.",
        temperature: 0.2,
        maxOutputTokens: 300,
        fallbackReply: "Sorry, the assistant is busy. Please try again.",
      },
    });

  it("answers with the model's reply and stores token usage and latency with it", async () => {
    const modelId = `test.model-${randomUUID()}`;
    const shop = await bedrockTenant(modelId);
    await bedrock().script(
      modelId,
      converseText("Your parcel ships today.", { inputTokens: 120, outputTokens: 9 }),
    );
    const conversationId = await newConversation(shop);

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "When will it ship?",
    });

    expect(response.status).toBe(200);
    expect(response.body.messages.map((message) => message.content)).toEqual(["Your parcel ships today."]);
    const [request] = (await bedrock().requests(modelId)) as ConverseRequest[];
    expect(request?.system).toEqual([{ text: "You are the shop's assistant." }]);
    expect(request?.inferenceConfig).toMatchObject({ maxTokens: 300, temperature: 0.2 });
    const reply = (await storedMessages(shop, conversationId)).find(
      (message) => message.role === "assistant",
    );
    expect(reply).toMatchObject({ engine: "bedrock", usage: { inputTokens: 120, outputTokens: 9 } });
    expect(reply?.modelLatencyMs).toEqual(expect.any(Number));
  });

  it("sends the conversation's history in order (multi-turn memory)", async () => {
    const modelId = `test.model-${randomUUID()}`;
    const shop = await bedrockTenant(modelId);
    await bedrock().script(
      modelId,
      converseText("Nice to meet you, Ann."),
      converseText("You told me your name is Ann."),
    );
    const conversationId = await newConversation(shop);

    await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: "My name is Ann." });
    await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: "What is my name?" });

    const second = ((await bedrock().requests(modelId)) as ConverseRequest[])[1];
    expect(
      second?.messages.map((message) => [message.role, message.content.map((block) => block.text).join("")]),
    ).toEqual([
      ["user", "My name is Ann."],
      ["assistant", "Nice to meet you, Ann."],
      ["user", "What is my name?"],
    ]);
  });

  it("passes an image to the model as an image block", async () => {
    const modelId = `test.model-${randomUUID()}`;
    const shop = await bedrockTenant(modelId);
    await bedrock().script(modelId, converseText("A small PNG."));
    const conversationId = await newConversation(shop);

    await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "What is this?",
      attachments: [{ type: "image", data: sampleImages.png.toString("base64"), media_type: "image/png" }],
    });

    const [request] = (await bedrock().requests(modelId)) as ConverseRequest[];
    const image = request?.messages.at(-1)?.content.find((block) => block.image)?.image;
    expect(image?.format).toBe("png");
    expect(Buffer.from(image?.source.bytes ?? "", "base64").equals(sampleImages.png)).toBe(true);
  });

  it("retries a throttled model within the deadline", async () => {
    const modelId = `test.model-${randomUUID()}`;
    const shop = await bedrockTenant(modelId);
    await bedrock().script(
      modelId,
      awsError(429, "ThrottlingException", "Rate exceeded"),
      converseText("Made it."),
    );
    const conversationId = await newConversation(shop);

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "hi there model",
    });

    expect(response.body.messages[0]?.content).toBe("Made it.");
    expect(await bedrock().requests(modelId)).toHaveLength(2);
  });

  it("writes the turn's fallback metric (Embedded Metric Format) when the model keeps throttling", async () => {
    const modelId = `test.model-${randomUUID()}`;
    const shop = await bedrockTenant(modelId);
    const throttled = awsError(429, "ThrottlingException", "Rate exceeded");
    await bedrock().script(modelId, throttled, throttled, throttled, throttled, throttled);
    const conversationId = await newConversation(shop);

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "hello?",
    });

    expect(response.status).toBe(200);
    expect(response.body.messages[0]?.content).toBe("Sorry, the assistant is busy. Please try again.");
    const requestId = response.headers.get("x-request-id");
    const documents = runtimeLog()
      .split("\n")
      .filter((line) => line.startsWith("{") && line.includes('"_aws"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((document) => document.requestId === requestId);
    expect(documents).toHaveLength(1);
    expect(documents[0]).toMatchObject({
      Stage: "local",
      Engine: "bedrock",
      Outcome: "fallback",
      Reason: "model_throttled",
      Turns: 1,
      Fallbacks: 1,
      _aws: {
        CloudWatchMetrics: expect.arrayContaining([
          {
            Namespace: "ChatbotApi",
            Dimensions: [["Stage"], ["Stage", "Reason"]],
            Metrics: [{ Name: "Fallbacks", Unit: "Count" }],
          },
        ]),
      },
    });
  });

  it("gives the fallback reply within the deadline when the model is too slow, keeping the visitor's message", async () => {
    const modelId = `test.model-${randomUUID()}`;
    const shop = await bedrockTenant(modelId);
    await bedrock().script(modelId, { ...converseText("too late"), delayMs: 15_000 });
    const conversationId = await newConversation(shop);
    const started = Date.now();

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "Are you there?",
    });

    expect(Date.now() - started).toBeLessThan(8_000);
    expect(response.status).toBe(200);
    expect(response.body.messages.map((message) => message.content)).toEqual([
      "Sorry, the assistant is busy. Please try again.",
    ]);
    const stored = await storedMessages(shop, conversationId);
    expect(stored.map((message) => [message.role, message.content, message.fallback ?? false])).toEqual([
      ["user", "Are you there?", false],
      ["assistant", "Sorry, the assistant is busy. Please try again.", true],
    ]);
    expect(runtimeLog()).toContain("engine failed; answering with the fallback reply");
  });

  it("gives the fallback reply for malformed model output", async () => {
    const modelId = `test.model-${randomUUID()}`;
    const shop = await bedrockTenant(modelId);
    await bedrock().script(modelId, { body: "this is not JSON" });
    const conversationId = await newConversation(shop);

    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "hello model?",
    });

    expect(response.status).toBe(200);
    expect(response.body.messages[0]?.content).toBe("Sorry, the assistant is busy. Please try again.");
  });
});

describe.runIf(isLocal)("OpenAI-compatible engine through the API", () => {
  let openAi: FakeOpenAi;
  const secretName = `openai-${randomUUID().slice(0, 8)}`;
  const apiKey = `sk-test-${randomUUID()}`;

  beforeAll(async () => {
    openAi = await startFakeOpenAi();
    const directory = environment.modelSecretsDirectory ?? "";
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, secretName), `${apiKey}\n`);
  });
  afterAll(async () => {
    await openAi.close();
  });

  const openAiTenant = () =>
    seedTenant({
      chatbot: {
        engine: {
          kind: "openai",
          baseUrl: `${reachable(openAi.url)}/v1`,
          model: "gpt-test",
          apiKeySecret: secretName,
        },
        instructions: "Be brief.",
        fallbackReply: "Fallback from the OpenAI bot.",
      },
    });

  it("answers through chat completions with the key from the secret store, never logging it", async () => {
    const shop = await openAiTenant();
    openAi.enqueue(
      completionText("Hello from the compatible model.", { prompt_tokens: 40, completion_tokens: 8 }),
    );
    const conversationId = await newConversation(shop);

    const response = await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: "Hi!" });

    expect(response.body.messages[0]?.content).toBe("Hello from the compatible model.");
    const request = openAi.requests.at(-1);
    expect(request?.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(request?.body).toMatchObject({
      model: "gpt-test",
      messages: [{ role: "system", content: "Be brief." }, { role: "user" }],
    });
    const reply = (await storedMessages(shop, conversationId)).find(
      (message) => message.role === "assistant",
    );
    expect(reply).toMatchObject({ engine: "openai", usage: { inputTokens: 40, outputTokens: 8 } });
    expect(runtimeLog()).not.toContain(apiKey);
  });

  it("talks to a server that needs no key (e.g. Ollama) without an Authorization header", async () => {
    const shop = await seedTenant({
      chatbot: {
        engine: { kind: "openai", baseUrl: `${reachable(openAi.url)}/v1`, model: "llama3.2" },
        fallbackReply: "Fallback from the keyless bot.",
      },
    });
    openAi.enqueue(completionText("Hello without a key."));
    const conversationId = await newConversation(shop);

    const response = await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: "Hi!" });

    expect(response.body.messages[0]?.content).toBe("Hello without a key.");
    const request = openAi.requests.at(-1);
    expect(request?.headers).not.toHaveProperty("authorization");
    expect(request?.body).toMatchObject({ model: "llama3.2" });
  });

  it("sends an image as a data URL content part", async () => {
    const shop = await openAiTenant();
    openAi.enqueue(completionText("I see a JPEG."));
    const conversationId = await newConversation(shop);

    await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "look",
      attachments: [{ type: "image", data: sampleImages.jpeg.toString("base64"), media_type: "image/jpeg" }],
    });

    const body = openAi.requests.at(-1)?.body as { messages: { content: unknown }[] } | undefined;
    const last = body?.messages.at(-1);
    expect(JSON.stringify(last?.content)).toContain(
      `data:image/jpeg;base64,${sampleImages.jpeg.toString("base64")}`,
    );
  });

  it("retries a 429 with Retry-After, and falls back when the provider keeps failing", async () => {
    const shop = await openAiTenant();
    openAi.enqueue(
      openAiError(429, "slow down", "rate_limit_exceeded", { "retry-after": "0" }),
      completionText("After the wait."),
    );
    const conversationId = await newConversation(shop);

    const retried = await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: "first" });
    openAi.enqueue(
      openAiError(500, "boom", "server_error"),
      openAiError(500, "boom", "server_error"),
      openAiError(500, "boom", "server_error"),
    );
    const failed = await api.sendMessage(shop.apiKey, { conversation_id: conversationId, message: "second" });

    expect(retried.body.messages[0]?.content).toBe("After the wait.");
    expect(failed.status).toBe(200);
    expect(failed.body.messages[0]?.content).toBe("Fallback from the OpenAI bot.");
  });
});
