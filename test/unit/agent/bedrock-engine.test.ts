import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBedrockClient, createBedrockEngine } from "#functions/agent/bedrock-engine";
import type { ChatEngine } from "#functions/agent/engine";
import { MAX_TOOL_ROUNDS } from "#functions/agent/engine";
import { EngineError } from "#functions/agent/engine-error";
import {
  awsError,
  converseReply,
  converseText,
  converseToolUse,
  type FakeBedrock,
  startFakeBedrock,
} from "#test/fakes/bedrock-server";
import { aTurn, recordingToolBox } from "#test/fakes/engine-turn";
import { sampleImages } from "#test/fakes/image-server";

// A model id with ':' so the path must be URL-encoded, as for real model ids and ARNs.
const modelId = "anthropic.claude-3-haiku-20240307-v1:0";

let bedrock: FakeBedrock;
let engine: ChatEngine;

beforeEach(async () => {
  bedrock = await startFakeBedrock();
  const client = createBedrockClient({
    region: "eu-west-1",
    endpoint: bedrock.url,
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  });
  engine = createBedrockEngine({
    client,
    modelId,
    retry: { policy: { baseDelayMs: 10, minAttemptMs: 100 } },
  });
});

afterEach(async () => {
  await bedrock.close();
});

/** The JSON body of the n-th Converse request the fake received. */
function sent(index: number): Record<string, unknown> {
  return bedrock.requests[index]?.body as Record<string, unknown>;
}

async function rejection(promise: Promise<unknown>): Promise<EngineError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(EngineError);
  return error as EngineError;
}

describe("Bedrock engine", () => {
  it("sends instructions, settings and the message through Converse and returns the reply", async () => {
    // Prepare
    bedrock.enqueue(converseText("Hello! How can I help you today?", { inputTokens: 30, outputTokens: 12 }));
    // Act
    const reply = await engine.reply(
      aTurn({ instructions: "Be brief.", message: { text: "Hi", images: [] } }),
    );
    // Assess
    expect(reply).toMatchObject({
      messages: ["Hello! How can I help you today?"],
      usage: { inputTokens: 30, outputTokens: 12 },
      toolCalls: 0,
    });
    expect(reply.modelLatencyMs).toBeGreaterThanOrEqual(0);
    expect(engine.kind).toBe("bedrock");
    expect(bedrock.requests[0]?.params.modelId).toBe(modelId);
    expect(sent(0)).toEqual({
      messages: [{ role: "user", content: [{ text: "Hi" }] }],
      system: [{ text: "Be brief." }],
      inferenceConfig: { maxTokens: 512, temperature: 0.2 },
    });
  });

  it("replays the history in order, merging same-role neighbours and starting with the user", async () => {
    // Prepare: the welcome message first, and a user message whose answer was lost
    bedrock.enqueue(converseText("It ships tomorrow."));
    const history = [
      { role: "assistant" as const, text: "Welcome to the shop!" },
      { role: "user" as const, text: "I ordered a lamp." },
      { role: "assistant" as const, text: "Thanks, what is your question?" },
      { role: "user" as const, text: "When does it ship?" },
    ];
    // Act
    await engine.reply(aTurn({ history, message: { text: "Hello?", images: [] } }));
    // Assess
    expect(sent(0).messages).toEqual([
      { role: "user", content: [{ text: "I ordered a lamp." }] },
      { role: "assistant", content: [{ text: "Thanks, what is your question?" }] },
      { role: "user", content: [{ text: "When does it ship?" }, { text: "Hello?" }] },
    ]);
  });

  it("sends an image as an image block with its format and bytes", async () => {
    bedrock.enqueue(converseText("A small PNG."));
    const images = [{ mediaType: "image/png" as const, bytes: new Uint8Array(sampleImages.png) }];
    await engine.reply(aTurn({ message: { text: "What is this?", images } }));
    expect(sent(0).messages).toEqual([
      {
        role: "user",
        content: [
          { image: { format: "png", source: { bytes: sampleImages.png.toString("base64") } } },
          { text: "What is this?" },
        ],
      },
    ]);
  });

  it("runs a tool round trip: calls the tool with the model's input and sends the result back", async () => {
    // Prepare
    const tools = recordingToolBox({ status: "success", content: { status: "shipped", carrier: "PostNL" } });
    const input = { order_number: "1042", email: "ann@example.com" };
    bedrock.enqueue(
      converseToolUse([{ toolUseId: "tooluse_1", name: "lookup_order", input }], {
        inputTokens: 40,
        outputTokens: 9,
      }),
      converseText("Your order has shipped with PostNL.", { inputTokens: 60, outputTokens: 11 }),
    );
    // Act
    const reply = await engine.reply(aTurn({ tools, message: { text: "Where is order 1042?", images: [] } }));
    // Assess
    expect(tools.calls).toEqual([{ name: "lookup_order", input }]);
    expect(reply).toMatchObject({
      messages: ["Your order has shipped with PostNL."],
      usage: { inputTokens: 100, outputTokens: 20 },
      toolCalls: 1,
    });
    expect(sent(0).toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: "lookup_order",
            description: tools.specs[0]?.description,
            inputSchema: { json: tools.specs[0]?.inputSchema },
          },
        },
      ],
      toolChoice: { auto: {} },
    });
    expect((sent(1).messages as unknown[]).slice(-2)).toEqual([
      { role: "assistant", content: [{ toolUse: { toolUseId: "tooluse_1", name: "lookup_order", input } }] },
      {
        role: "user",
        content: [
          {
            toolResult: {
              toolUseId: "tooluse_1",
              status: "success",
              content: [{ json: { status: "shipped", carrier: "PostNL" } }],
            },
          },
        ],
      },
    ]);
  });

  it("retries throttling within the deadline and then answers", async () => {
    bedrock.enqueue(awsError(429, "ThrottlingException", "Rate exceeded"), converseText("Here you go."));
    const reply = await engine.reply(aTurn());
    expect(reply.messages).toEqual(["Here you go."]);
    expect(bedrock.requests).toHaveLength(2);
  });

  it("reports throttled when every attempt is throttled", async () => {
    bedrock.enqueue(
      ...Array.from({ length: 5 }, () => awsError(429, "ThrottlingException", "Rate exceeded")),
    );
    const error = await rejection(engine.reply(aTurn()));
    expect(error.reason).toBe("throttled");
    expect(bedrock.requests).toHaveLength(3);
  });

  it("does not retry a validation error, and the SDK itself does not retry either", async () => {
    bedrock.enqueue(awsError(400, "ValidationException", "Bad input"), converseText("never sent"));
    const error = await rejection(engine.reply(aTurn()));
    expect(error.reason).toBe("configuration");
    expect(bedrock.requests).toHaveLength(1);
  });

  it("leaves retries to our helper alone (client maxAttempts is 1)", async () => {
    // Prepare: our policy allows a single attempt; the SDK's default would make three
    const client = createBedrockClient({
      region: "eu-west-1",
      endpoint: bedrock.url,
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
    });
    const single = createBedrockEngine({ client, modelId, retry: { policy: { maxAttempts: 1 } } });
    bedrock.enqueue(awsError(503, "ServiceUnavailableException", "Busy"), converseText("never sent"));
    // Act
    const error = await rejection(single.reply(aTurn()));
    // Assess
    expect(error.reason).toBe("model_error");
    expect(bedrock.requests).toHaveLength(1);
  });

  it("rejects promptly with timeout when the model is slower than the deadline", async () => {
    // Prepare
    bedrock.enqueue({ ...converseText("Too late."), delayMs: 10_000 });
    const started = Date.now();
    // Act
    const error = await rejection(engine.reply(aTurn({ deadline: Date.now() + 300 })));
    // Assess
    expect(error.reason).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("stops when the turn's signal aborts", async () => {
    const controller = new AbortController();
    bedrock.enqueue({ ...converseText("Too late."), delayMs: 10_000 });
    setTimeout(() => controller.abort(), 50);
    const error = await rejection(engine.reply(aTurn({ signal: controller.signal })));
    expect(error.reason).toBe("timeout");
  });

  it("turns malformed model output into a typed error", async () => {
    bedrock.enqueue(
      converseReply([{ text: "{{{" }], "malformed_model_output", { inputTokens: 1, outputTokens: 1 }),
    );
    const error = await rejection(engine.reply(aTurn()));
    expect(error.reason).toBe("malformed_output");
  });

  it("turns a reply without text into a typed error", async () => {
    bedrock.enqueue(converseReply([], "end_turn", { inputTokens: 1, outputTokens: 1 }));
    const error = await rejection(engine.reply(aTurn()));
    expect(error.reason).toBe("malformed_output");
  });

  it(`stops a model that keeps asking for tools after ${MAX_TOOL_ROUNDS} rounds`, async () => {
    // Prepare
    const tools = recordingToolBox({ status: "error", content: { error: "Order not found" } });
    const again = converseToolUse([{ toolUseId: "t", name: "lookup_order", input: { order_number: "1" } }]);
    bedrock.enqueue(...Array.from({ length: MAX_TOOL_ROUNDS + 2 }, () => again));
    // Act
    const error = await rejection(engine.reply(aTurn({ tools })));
    // Assess
    expect(error.reason).toBe("malformed_output");
    expect(tools.calls).toHaveLength(MAX_TOOL_ROUNDS);
    expect(bedrock.requests).toHaveLength(MAX_TOOL_ROUNDS + 1);
  });
});
