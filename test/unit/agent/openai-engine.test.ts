import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChatEngine } from "#functions/agent/engine";
import { MAX_TOOL_ROUNDS } from "#functions/agent/engine";
import { EngineError } from "#functions/agent/engine-error";
import { createOpenAiEngine } from "#functions/agent/openai-engine";
import type { RetryClock } from "#functions/agent/retry";
import { aTurn, recordingToolBox } from "#test/fakes/engine-turn";
import { sampleImages } from "#test/fakes/image-server";
import {
  completionText,
  completionToolCalls,
  type FakeOpenAi,
  openAiError,
  sendReaching,
  startFakeOpenAi,
} from "#test/fakes/openai-server";

let openai: FakeOpenAi;
let engine: ChatEngine;

beforeEach(async () => {
  openai = await startFakeOpenAi();
  engine = createOpenAiEngine({
    baseUrl: `${openai.url}/v1`,
    model: "llama3.2-vision",
    apiKey: "test-key",
    send: sendReaching(openai),
    retry: { policy: { baseDelayMs: 10, minAttemptMs: 100 } },
  });
});

afterEach(async () => {
  await openai.close();
});

function sent(index: number): Record<string, unknown> {
  return openai.requests[index]?.body as Record<string, unknown>;
}

async function rejection(promise: Promise<unknown>): Promise<EngineError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(EngineError);
  return error as EngineError;
}

/** Real time, but sleeps are recorded and skipped. */
function recordingClock(): RetryClock & { sleeps: number[] } {
  const sleeps: number[] = [];
  return { sleeps, now: () => Date.now(), sleep: async (ms) => void sleeps.push(ms), random: () => 0.5 };
}

describe("OpenAI-compatible engine", () => {
  it("sends a Chat Completions request with only portable fields and returns the reply", async () => {
    // Prepare
    openai.enqueue(completionText("Hello! How can I help?", { prompt_tokens: 25, completion_tokens: 7 }));
    // Act
    const reply = await engine.reply(
      aTurn({ instructions: "Be brief.", message: { text: "Hi", images: [] } }),
    );
    // Assess
    expect(reply).toMatchObject({
      messages: ["Hello! How can I help?"],
      usage: { inputTokens: 25, outputTokens: 7 },
      toolCalls: 0,
    });
    expect(engine.kind).toBe("openai");
    expect(openai.requests[0]?.path).toBe("/v1/chat/completions");
    expect(openai.requests[0]?.headers.authorization).toBe("Bearer test-key");
    expect(sent(0)).toEqual({
      model: "llama3.2-vision",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
      temperature: 0.2,
      max_tokens: 512,
    });
  });

  it("works with a base URL without /v1 and sends no Authorization header without a key", async () => {
    const keyless = createOpenAiEngine({
      baseUrl: openai.url,
      model: "m",
      apiKey: "",
      send: sendReaching(openai),
    });
    openai.enqueue(completionText("Hi!"));
    await keyless.reply(aTurn());
    expect(openai.requests[0]?.path).toBe("/chat/completions");
    expect(openai.requests[0]?.headers.authorization).toBeUndefined();
  });

  it("replays the history in order after the system prompt", async () => {
    openai.enqueue(completionText("It ships tomorrow."));
    const history = [
      { role: "assistant" as const, text: "Welcome to the shop!" },
      { role: "user" as const, text: "I ordered a lamp." },
      { role: "assistant" as const, text: "Thanks, what is your question?" },
    ];
    await engine.reply(
      aTurn({ instructions: "", history, message: { text: "When does it ship?", images: [] } }),
    );
    expect(sent(0).messages).toEqual([
      { role: "assistant", content: "Welcome to the shop!" },
      { role: "user", content: "I ordered a lamp." },
      { role: "assistant", content: "Thanks, what is your question?" },
      { role: "user", content: "When does it ship?" },
    ]);
  });

  it("sends an image as an image_url part with a data: URL", async () => {
    openai.enqueue(completionText("A small JPEG."));
    const images = [{ mediaType: "image/jpeg" as const, bytes: new Uint8Array(sampleImages.jpeg) }];
    await engine.reply(aTurn({ instructions: "", message: { text: "What is this?", images } }));
    expect(sent(0).messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          {
            type: "image_url",
            image_url: { url: `data:image/jpeg;base64,${sampleImages.jpeg.toString("base64")}` },
          },
        ],
      },
    ]);
  });

  it("runs a tool round trip through tool_calls and role tool, summing usage", async () => {
    // Prepare
    const tools = recordingToolBox({ status: "success", content: { status: "shipped" } });
    const input = { order_number: "1042", email: "ann@example.com" };
    openai.enqueue(
      completionToolCalls([{ id: "call_1", name: "lookup_order", arguments: JSON.stringify(input) }], {
        prompt_tokens: 40,
        completion_tokens: 9,
      }),
      completionText("Your order has shipped.", { prompt_tokens: 60, completion_tokens: 11 }),
    );
    // Act
    const reply = await engine.reply(aTurn({ instructions: "", tools }));
    // Assess
    expect(tools.calls).toEqual([{ name: "lookup_order", input }]);
    expect(reply).toMatchObject({
      messages: ["Your order has shipped."],
      usage: { inputTokens: 100, outputTokens: 20 },
      toolCalls: 1,
    });
    expect(sent(0).tools).toEqual([
      {
        type: "function",
        function: {
          name: "lookup_order",
          description: tools.specs[0]?.description,
          parameters: tools.specs[0]?.inputSchema,
        },
      },
    ]);
    expect((sent(1).messages as unknown[]).slice(-2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "lookup_order", arguments: JSON.stringify(input) },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: "call_1",
        content: JSON.stringify({ status: "success", content: { status: "shipped" } }),
      },
    ]);
  });

  it("tells the model when its tool arguments are not JSON, without calling the tool", async () => {
    const tools = recordingToolBox({ status: "success", content: {} });
    openai.enqueue(
      completionToolCalls([{ id: "call_1", name: "lookup_order", arguments: "{order: 1042" }]),
      completionText("Could you give me your order number again?"),
    );
    const reply = await engine.reply(aTurn({ tools }));
    expect(tools.calls).toEqual([]);
    expect(reply.toolCalls).toBe(0);
    expect((sent(1).messages as { role: string; content: string }[]).at(-1)?.content).toContain(
      "not a JSON object",
    );
  });

  it("retries a 429 after the server's Retry-After, then answers", async () => {
    // Prepare
    const clock = recordingClock();
    const patient = createOpenAiEngine({
      baseUrl: `${openai.url}/v1`,
      model: "m",
      apiKey: "k",
      send: sendReaching(openai),
      retry: { clock },
    });
    openai.enqueue(
      openAiError(429, "Slow down", "rate_limit_error", { "retry-after": "2" }),
      completionText("Done."),
    );
    // Act
    const reply = await patient.reply(aTurn({ deadline: Date.now() + 10_000 }));
    // Assess
    expect(reply.messages).toEqual(["Done."]);
    expect(clock.sleeps).toEqual([2_000]);
    expect(openai.requests).toHaveLength(2);
  });

  it("retries a 500, and gives up at once when Retry-After does not fit the deadline", async () => {
    openai.enqueue(openAiError(500, "Oops", "server_error"), completionText("Recovered."));
    expect((await engine.reply(aTurn())).messages).toEqual(["Recovered."]);

    openai.enqueue(openAiError(429, "Slow down", "rate_limit_error", { "retry-after": "30" }));
    const error = await rejection(engine.reply(aTurn({ deadline: Date.now() + 3_000 })));
    expect(error.reason).toBe("throttled");
    expect(openai.requests).toHaveLength(3);
  });

  it("does not retry a 400", async () => {
    openai.enqueue(openAiError(400, "Bad request", "invalid_request_error"), completionText("never sent"));
    const error = await rejection(engine.reply(aTurn()));
    expect(error.reason).toBe("configuration");
    expect(openai.requests).toHaveLength(1);
  });

  it("rejects promptly with timeout when the model is slower than the deadline", async () => {
    openai.enqueue({ ...completionText("Too late."), delayMs: 10_000 });
    const started = Date.now();
    const error = await rejection(engine.reply(aTurn({ deadline: Date.now() + 300 })));
    expect(error.reason).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("turns malformed output into a typed error: invalid JSON, no choices, no text", async () => {
    openai.enqueue({ body: "{not json" }, { body: { choices: [] } }, completionText(null));
    for (let attempt = 0; attempt < 3; attempt++) {
      const error = await rejection(engine.reply(aTurn()));
      expect(error.reason).toBe("malformed_output");
    }
  });

  it(`stops a model that keeps asking for tools after ${MAX_TOOL_ROUNDS} rounds`, async () => {
    const tools = recordingToolBox({ status: "error", content: { error: "Order not found" } });
    const again = completionToolCalls([{ id: "c", name: "lookup_order", arguments: "{}" }]);
    openai.enqueue(...Array.from({ length: MAX_TOOL_ROUNDS + 2 }, () => again));
    const error = await rejection(engine.reply(aTurn({ tools })));
    expect(error.reason).toBe("malformed_output");
    expect(tools.calls).toHaveLength(MAX_TOOL_ROUNDS);
    expect(openai.requests).toHaveLength(MAX_TOOL_ROUNDS + 1);
  });
});
