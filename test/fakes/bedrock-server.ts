/**
 * A local Amazon Bedrock Runtime that speaks the Converse protocol:
 * `POST /model/{modelId}/converse` with JSON, and `POST /model/{modelId}/converse-stream` with an
 * AWS event stream (binary frames with CRC32s, test/fakes/stream-steps.ts); AWS-style errors as
 * status + `x-amzn-ErrorType` + `{"message": …}`, over cleartext HTTP/2 as the SDK's default handler
 * expects. It ignores the SigV4 signature, so the real SDK can talk to it with dummy keys.
 */
import { titanEmbeddingAnswer } from "#test/fakes/embedding-answers";
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from "#test/fakes/scripted-http";
import { type StreamStep, tokens } from "#test/fakes/stream-steps";

export type FakeBedrock = ScriptedServer;

/**
 * Converse and ConverseStream answer from the test's queue; InvokeModel (`/model/{id}/invoke`, an
 * embedding model) answers by itself with the local concept model (test/fakes/embedding-answers.ts),
 * unless `scriptedInvoke` queues its answers too (to make it fail).
 */
export function startFakeBedrock(options: { scriptedInvoke?: boolean } = {}): Promise<FakeBedrock> {
  return startScriptedServer(
    (method, path) => {
      const match = /^\/model\/([^/]+)\/(converse(?:-stream)?|invoke)$/.exec(path);
      return method === "POST" && match?.[1] ? { modelId: decodeURIComponent(match[1]) } : undefined;
    },
    awsError(404, "UnknownOperationException", "Unknown operation"),
    "h2c",
    options.scriptedInvoke
      ? undefined
      : (_method, path, body) => (path.endsWith("/invoke") ? titanEmbeddingAnswer(body) : undefined),
  );
}

export interface FakeUsage {
  inputTokens: number;
  outputTokens: number;
}

/** A final answer: one text block, stop reason `end_turn` unless told otherwise. */
export function converseText(
  text: string,
  usage: FakeUsage = { inputTokens: 10, outputTokens: 5 },
  stopReason = "end_turn",
): ScriptedResponse {
  return converseReply([{ text }], stopReason, usage);
}

/** A round asking for tools: one toolUse block per call (converseReply builds one with text too). */
export function converseToolUse(
  calls: { toolUseId: string; name: string; input: Record<string, unknown> }[],
  usage: FakeUsage = { inputTokens: 20, outputTokens: 8 },
): ScriptedResponse {
  return converseReply(
    calls.map((call) => ({ toolUse: call })),
    "tool_use",
    usage,
  );
}

export function converseReply(content: unknown[], stopReason: string, usage: FakeUsage): ScriptedResponse {
  return {
    body: {
      output: { message: { role: "assistant", content } },
      stopReason,
      usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens },
      metrics: { latencyMs: 42 },
    },
  };
}

export function awsError(
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): ScriptedResponse {
  return { status, headers: { "x-amzn-errortype": type, ...headers }, body: { message } };
}

// ---------- ConverseStream (POST /model/{modelId}/converse-stream) ----------

export interface ConverseStreamOptions {
  usage?: FakeUsage;
  stopReason?: string;
  /** Milliseconds between tokens (50 tokens/s: 20). */
  intervalMs?: number;
  /** Wait for the test to release the stream after this many tokens. */
  holdAfter?: number;
  /** After the tokens: end normally (default), stall, drop the connection, or send an exception frame. */
  ending?: "end" | "stall" | "reset" | { exception: string; message: string };
}

/**
 * A streamed final answer: messageStart, one contentBlockDelta per token, contentBlockStop,
 * messageStop and metadata, each an event-stream frame (payloads padded with `p`, as Bedrock does).
 */
export function converseStream(text: string, options: ConverseStreamOptions = {}): ScriptedResponse {
  const usage = options.usage ?? { inputTokens: 10, outputTokens: 5 };
  const steps: StreamStep[] = [{ event: "messageStart", payload: { role: "assistant", p: "abcd" } }];
  tokens(text).forEach((token, index) => {
    if (index > 0 && options.intervalMs) steps.push({ pause: options.intervalMs });
    if (options.holdAfter !== undefined && index === options.holdAfter) steps.push({ hold: true });
    steps.push({
      event: "contentBlockDelta",
      payload: { contentBlockIndex: 0, delta: { text: token }, p: "abcdefgh" },
    });
  });
  const ending = options.ending ?? "end";
  if (ending === "stall") steps.push({ stall: true });
  else if (ending === "reset") steps.push({ reset: true });
  else if (typeof ending === "object")
    steps.push({ exception: ending.exception, payload: { message: ending.message } });
  else
    steps.push(
      { event: "contentBlockStop", payload: { contentBlockIndex: 0, p: "ab" } },
      { event: "messageStop", payload: { stopReason: options.stopReason ?? "end_turn", p: "abc" } },
      {
        event: "metadata",
        payload: {
          usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens },
          metrics: { latencyMs: 42 },
          p: "abcdef",
        },
      },
    );
  return { headers: { "content-type": "application/vnd.amazon.eventstream" }, stream: steps };
}

/** A streamed round asking for tools: optional preamble text, then one toolUse block per call. */
export function converseStreamToolUse(
  calls: { toolUseId: string; name: string; input: Record<string, unknown> }[],
  options: { preamble?: string; usage?: FakeUsage } = {},
): ScriptedResponse {
  const usage = options.usage ?? { inputTokens: 20, outputTokens: 8 };
  const steps: StreamStep[] = [{ event: "messageStart", payload: { role: "assistant" } }];
  let index = 0;
  if (options.preamble) {
    for (const token of tokens(options.preamble))
      steps.push({ event: "contentBlockDelta", payload: { contentBlockIndex: 0, delta: { text: token } } });
    steps.push({ event: "contentBlockStop", payload: { contentBlockIndex: 0 } });
    index = 1;
  }
  for (const call of calls) {
    const input = JSON.stringify(call.input);
    const half = Math.floor(input.length / 2);
    steps.push(
      {
        event: "contentBlockStart",
        payload: {
          contentBlockIndex: index,
          start: { toolUse: { toolUseId: call.toolUseId, name: call.name } },
        },
      },
      // The input arrives as JSON text in pieces.
      {
        event: "contentBlockDelta",
        payload: { contentBlockIndex: index, delta: { toolUse: { input: input.slice(0, half) } } },
      },
      {
        event: "contentBlockDelta",
        payload: { contentBlockIndex: index, delta: { toolUse: { input: input.slice(half) } } },
      },
      { event: "contentBlockStop", payload: { contentBlockIndex: index } },
    );
    index++;
  }
  steps.push(
    { event: "messageStop", payload: { stopReason: "tool_use" } },
    {
      event: "metadata",
      payload: { usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens } },
    },
  );
  return { headers: { "content-type": "application/vnd.amazon.eventstream" }, stream: steps };
}
