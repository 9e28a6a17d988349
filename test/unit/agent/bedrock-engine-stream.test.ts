/**
 * The Bedrock engine with a delta sink: ConverseStream through the real SDK against a local server
 * that frames each event as AWS does (application/vnd.amazon.eventstream, CRC32s), dripping tokens,
 * holding, stalling or failing mid-stream on cue.
 */
import { crc32 } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBedrockClient, createBedrockEngine } from "#functions/agent/bedrock-engine";
import type { ChatEngine, EngineTurn } from "#functions/agent/engine";
import { EngineError } from "#functions/agent/engine-error";
import {
  awsError,
  converseReply,
  converseStream,
  converseStreamToolUse,
  converseText,
  converseToolUse,
  type FakeBedrock,
  startFakeBedrock,
} from "#test/fakes/bedrock-server";
import { aTurn, recordingToolBox } from "#test/fakes/engine-turn";
import { eventStreamFrame } from "#test/fakes/stream-steps";

const modelId = "anthropic.claude-3-haiku-20240307-v1:0";
const STREAM_IDLE_MS = 400;

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
    streamIdleMs: STREAM_IDLE_MS,
  });
});

afterEach(async () => {
  await bedrock.close();
});

/** A turn whose deltas are collected. */
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

describe("Bedrock engine, streaming", () => {
  it("frames events as AWS event-stream messages: prelude, headers, payload and both CRC32s", () => {
    const frame = Buffer.from(eventStreamFrame("event", "contentBlockDelta", { delta: { text: "Hi" } }));
    const total = frame.readUInt32BE(0);
    const headersLength = frame.readUInt32BE(4);
    expect(total).toBe(frame.length);
    expect(frame.readUInt32BE(8)).toBe(crc32(frame.subarray(0, 8)));
    expect(frame.readUInt32BE(total - 4)).toBe(crc32(frame.subarray(0, total - 4)));
    const payload = frame.subarray(12 + headersLength, total - 4).toString("utf8");
    expect(JSON.parse(payload)).toEqual({ delta: { text: "Hi" } });
    expect(frame.subarray(12, 12 + headersLength).toString("latin1")).toContain(":event-type");
  });

  it("hands over each piece of text as it arrives, before the model has finished", async () => {
    // Prepare: the model holds the rest of its reply after two tokens until the test releases it
    bedrock.enqueue(
      converseStream("Your parcel ships today from Utrecht.", {
        holdAfter: 2,
        usage: { inputTokens: 31, outputTokens: 7 },
      }),
    );
    const { turn, deltas } = streamingTurn();
    // Act
    const replying = engine.reply(turn);
    await until(() => deltas.length === 2);
    const beforeRelease = deltas.join("");
    bedrock.release();
    const reply = await replying;
    // Assess
    expect(beforeRelease).toBe("Your parcel");
    expect(deltas.join("")).toBe("Your parcel ships today from Utrecht.");
    expect(reply).toMatchObject({
      messages: ["Your parcel ships today from Utrecht."],
      usage: { inputTokens: 31, outputTokens: 7 },
      toolCalls: 0,
    });
    expect(bedrock.requests[0]?.path).toBe(`/model/${encodeURIComponent(modelId)}/converse-stream`);
  });

  it("sends the same request as Converse, and ends with the same reply", async () => {
    const tools = recordingToolBox({ status: "success", content: { status: "shipped" } });
    const input = { order_number: "1042", email: "ann@example.com" };
    bedrock.enqueue(
      converseToolUse([{ toolUseId: "t1", name: "lookup_order", input }]),
      converseText("  It has shipped.\n"),
      converseStreamToolUse([{ toolUseId: "t1", name: "lookup_order", input }]),
      converseStream("  It has shipped.\n"),
    );
    const read = await engine.reply(aTurn({ tools }));
    const { turn, deltas } = streamingTurn({ tools });
    const streamed = await engine.reply(turn);
    expect(streamed.messages).toEqual(read.messages);
    expect(deltas.join("")).toBe("It has shipped.");
    expect(bedrock.requests[2]?.body).toEqual(bedrock.requests[0]?.body);
    expect(bedrock.requests[3]?.body).toEqual(bedrock.requests[1]?.body);
    expect(tools.calls).toEqual([
      { name: "lookup_order", input },
      { name: "lookup_order", input },
    ]);
  });

  it("keeps a tool round's preamble as part of the reply, streamed or not", async () => {
    const tools = recordingToolBox({ status: "success", content: { status: "shipped" } });
    const input = { order_number: "1042" };
    bedrock.enqueue(
      converseReply(
        [{ text: "Let me check that." }, { toolUse: { toolUseId: "t1", name: "lookup_order", input } }],
        "tool_use",
        { inputTokens: 5, outputTokens: 5 },
      ),
      converseText("It has shipped."),
      converseStreamToolUse([{ toolUseId: "t1", name: "lookup_order", input }], {
        preamble: "Let me check that.",
      }),
      converseStream("It has shipped."),
    );
    const read = await engine.reply(aTurn({ tools }));
    const { turn, deltas } = streamingTurn({ tools });
    const streamed = await engine.reply(turn);
    expect(read.messages).toEqual(["Let me check that.\n\nIt has shipped."]);
    expect(streamed.messages).toEqual(read.messages);
    expect(deltas.join("")).toBe("Let me check that.\n\nIt has shipped.");
    // The tool's input arrived in pieces of JSON text; the next round sends it back as an object.
    expect((bedrock.requests[3]?.body as { messages: unknown[] } | undefined)?.messages.at(-2)).toEqual({
      role: "assistant",
      content: [
        { text: "Let me check that." },
        { toolUse: { toolUseId: "t1", name: "lookup_order", input } },
      ],
    });
  });

  it("retries throttling before the stream starts, within the deadline", async () => {
    bedrock.enqueue(awsError(429, "ThrottlingException", "Rate exceeded"), converseStream("Here you go."));
    const { turn, deltas } = streamingTurn();
    const reply = await engine.reply(turn);
    expect(reply.messages).toEqual(["Here you go."]);
    expect(deltas.join("")).toBe("Here you go.");
    expect(bedrock.requests).toHaveLength(2);
  });

  it("reports a model that stalls mid-stream as stalled, once no data came for the idle limit", async () => {
    bedrock.enqueue(converseStream("Your parcel", { ending: "stall" }));
    const { turn, deltas } = streamingTurn({ deadline: Date.now() + 10_000 });
    const started = Date.now();
    const error = await rejection(engine.reply(turn));
    expect(error.reason).toBe("stalled");
    expect(deltas.join("")).toBe("Your parcel");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("reports an exception frame mid-stream as a model error", async () => {
    bedrock.enqueue(
      converseStream("Your parcel", {
        ending: { exception: "modelStreamErrorException", message: "The model failed" },
      }),
    );
    const { turn, deltas } = streamingTurn();
    const error = await rejection(engine.reply(turn));
    expect(error.reason).toBe("model_error");
    expect(deltas.join("")).toBe("Your parcel");
  });

  it("reports a dropped connection, or a stream that ends without messageStop, as a model error", async () => {
    bedrock.enqueue(converseStream("Your parcel", { ending: "reset" }));
    expect((await rejection(engine.reply(streamingTurn().turn))).reason).toBe("model_error");
    const truncated = converseStream("Your parcel ships");
    truncated.stream = truncated.stream?.filter(
      (step) => !("event" in step) || (step.event !== "messageStop" && step.event !== "metadata"),
    );
    bedrock.enqueue(truncated);
    expect((await rejection(engine.reply(streamingTurn().turn))).reason).toBe("model_error");
  });

  it("stops with timeout when the turn's deadline passes mid-stream", async () => {
    bedrock.enqueue(converseStream("one two three four five six seven eight nine ten", { intervalMs: 150 }));
    const { turn } = streamingTurn({ deadline: Date.now() + 400 });
    const error = await rejection(engine.reply(turn));
    expect(error.reason).toBe("timeout");
  });

  it("turns a streamed reply without text, or a filtered one, into a typed error", async () => {
    bedrock.enqueue(converseStream(""));
    expect((await rejection(engine.reply(streamingTurn().turn))).reason).toBe("malformed_output");
    bedrock.enqueue(converseStream("Some text", { stopReason: "content_filtered" }));
    expect((await rejection(engine.reply(streamingTurn().turn))).reason).toBe("model_error");
  });
});
