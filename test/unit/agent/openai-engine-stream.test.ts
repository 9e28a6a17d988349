/**
 * The OpenAI-compatible engine with a delta sink: `stream: true` against a local server that sends
 * Server-Sent Events chunks at a pace, and holds, stalls, fails or cuts the stream on cue.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChatEngine, EngineTurn } from "#functions/agent/engine";
import { EngineError } from "#functions/agent/engine-error";
import { createOpenAiEngine } from "#functions/agent/openai-engine";
import { aTurn, recordingToolBox } from "#test/fakes/engine-turn";
import {
  completionStream,
  completionStreamToolCalls,
  completionText,
  completionToolCalls,
  type FakeOpenAi,
  openAiError,
  sendReaching,
  startFakeOpenAi,
} from "#test/fakes/openai-server";

const STREAM_IDLE_MS = 400;

let openai: FakeOpenAi;
let engine: ChatEngine;

beforeEach(async () => {
  openai = await startFakeOpenAi();
  engine = createOpenAiEngine({
    baseUrl: `${openai.url}/v1`,
    model: "llama3.2",
    apiKey: "test-key",
    send: sendReaching(openai),
    retry: { policy: { baseDelayMs: 10, minAttemptMs: 100 } },
    streamIdleMs: STREAM_IDLE_MS,
  });
});

afterEach(async () => {
  await openai.close();
});

function streamingTurn(overrides: Partial<EngineTurn> = {}): { turn: EngineTurn; deltas: string[] } {
  const deltas: string[] = [];
  return { turn: aTurn({ onText: (delta) => deltas.push(delta), ...overrides }), deltas };
}

async function rejection(promise: Promise<unknown>): Promise<EngineError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(EngineError);
  return error as EngineError;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("OpenAI-compatible engine, streaming", () => {
  it("asks for a stream with usage, and hands over each piece of text before the model has finished", async () => {
    // Prepare
    openai.enqueue(
      completionStream("Your parcel ships today from Utrecht.", {
        holdAfter: 2,
        usage: { prompt_tokens: 40, completion_tokens: 8 },
      }),
    );
    const { turn, deltas } = streamingTurn();
    // Act
    const replying = engine.reply(turn);
    await until(() => deltas.length === 2);
    const beforeRelease = deltas.join("");
    openai.release();
    const reply = await replying;
    // Assess
    expect(beforeRelease).toBe("Your parcel");
    expect(deltas.join("")).toBe("Your parcel ships today from Utrecht.");
    expect(reply).toMatchObject({
      messages: ["Your parcel ships today from Utrecht."],
      usage: { inputTokens: 40, outputTokens: 8 },
      toolCalls: 0,
    });
    expect(openai.requests[0]?.body).toMatchObject({
      model: "llama3.2",
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(openai.requests[0]?.headers.authorization).toBe("Bearer test-key");
  });

  it("sends the same request as without streaming (but for the stream fields), and ends with the same reply", async () => {
    const tools = recordingToolBox({ status: "success", content: { status: "shipped" } });
    const args = JSON.stringify({ order_number: "1042", email: "ann@example.com" });
    openai.enqueue(
      completionToolCalls([{ id: "call_1", name: "lookup_order", arguments: args }]),
      completionText("  It has shipped.\n"),
      completionStreamToolCalls([{ id: "call_1", name: "lookup_order", arguments: args }]),
      completionStream("  It has shipped.\n"),
    );
    const read = await engine.reply(aTurn({ tools }));
    const { turn, deltas } = streamingTurn({ tools });
    const streamed = await engine.reply(turn);
    expect(streamed.messages).toEqual(read.messages);
    expect(deltas.join("")).toBe("It has shipped.");
    const {
      stream: _s,
      stream_options: _o,
      ...streamedRequest
    } = (openai.requests[3]?.body ?? {}) as Record<string, unknown>;
    expect(streamedRequest).toEqual(openai.requests[1]?.body);
    expect(tools.calls).toHaveLength(2);
    expect(tools.calls[1]).toEqual({ name: "lookup_order", input: JSON.parse(args) });
  });

  it("keeps a tool round's preamble as part of the reply, streamed or not", async () => {
    const tools = recordingToolBox({ status: "success", content: { status: "shipped" } });
    const calls = [{ id: "call_1", name: "lookup_order", arguments: '{"order_number":"1042"}' }];
    const withPreamble = completionToolCalls(calls);
    const body = withPreamble.body as { choices: { message: { content: string | null } }[] };
    if (body.choices[0]) body.choices[0].message.content = "Let me check that.";
    openai.enqueue(
      withPreamble,
      completionText("It has shipped."),
      completionStreamToolCalls(calls, { preamble: "Let me check that." }),
      completionStream("It has shipped."),
    );
    const read = await engine.reply(aTurn({ tools }));
    const { turn, deltas } = streamingTurn({ tools });
    const streamed = await engine.reply(turn);
    expect(read.messages).toEqual(["Let me check that.\n\nIt has shipped."]);
    expect(streamed.messages).toEqual(read.messages);
    expect(deltas.join("")).toBe(read.messages[0]);
  });

  it("reassembles lines and characters split across network writes", async () => {
    openai.enqueue(completionStream("Grüße aus Köln — ça va? 🚚 unterwegs", { splitWrites: true }));
    const { turn, deltas } = streamingTurn();
    const reply = await engine.reply(turn);
    expect(reply.messages).toEqual(["Grüße aus Köln — ça va? 🚚 unterwegs"]);
    expect(deltas.join("")).toBe("Grüße aus Köln — ça va? 🚚 unterwegs");
  });

  it("retries a 429 before the stream starts", async () => {
    openai.enqueue(
      openAiError(429, "Slow down", "rate_limit_error", { "retry-after-ms": "20" }),
      completionStream("Here you go."),
    );
    const reply = await engine.reply(streamingTurn().turn);
    expect(reply.messages).toEqual(["Here you go."]);
    expect(openai.requests).toHaveLength(2);
  });

  it("reports a model that stalls mid-stream as stalled", async () => {
    openai.enqueue(completionStream("Your parcel", { ending: "stall" }));
    const { turn, deltas } = streamingTurn({ deadline: Date.now() + 10_000 });
    const started = Date.now();
    const error = await rejection(engine.reply(turn));
    expect(error.reason).toBe("stalled");
    expect(deltas.join("")).toBe("Your parcel");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("reports an error chunk, a dropped connection or a stream cut before its end as a model error", async () => {
    openai.enqueue(completionStream("Your parcel", { ending: { error: "The model crashed" } }));
    expect((await rejection(engine.reply(streamingTurn().turn))).reason).toBe("model_error");
    openai.enqueue(completionStream("Your parcel", { ending: "reset" }));
    expect((await rejection(engine.reply(streamingTurn().turn))).reason).toBe("model_error");
    const cut = completionStream("Your parcel ships");
    cut.stream = cut.stream?.filter(
      (step) => !("chunk" in step) || !/finish_reason":"|\[DONE\]|usage/.test(step.chunk),
    );
    openai.enqueue(cut);
    expect((await rejection(engine.reply(streamingTurn().turn))).reason).toBe("model_error");
  });

  it("accepts a stream that finished but sent no [DONE]", async () => {
    openai.enqueue(completionStream("All done.", { ending: "truncate" }));
    expect((await engine.reply(streamingTurn().turn)).messages).toEqual(["All done."]);
  });

  it("stops with timeout when the turn's deadline passes mid-stream", async () => {
    openai.enqueue(completionStream("one two three four five six seven eight nine ten", { intervalMs: 150 }));
    const error = await rejection(engine.reply(streamingTurn({ deadline: Date.now() + 400 }).turn));
    expect(error.reason).toBe("timeout");
  });

  it("turns a filtered or empty streamed reply into a typed error", async () => {
    openai.enqueue(completionStream("Some text", { finishReason: "content_filter" }));
    expect((await rejection(engine.reply(streamingTurn().turn))).reason).toBe("model_error");
    openai.enqueue(completionStream(""));
    expect((await rejection(engine.reply(streamingTurn().turn))).reason).toBe("malformed_output");
  });
});
