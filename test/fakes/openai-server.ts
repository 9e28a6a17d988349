/**
 * A local OpenAI-compatible server: `POST /v1/chat/completions` (and `/chat/completions`, for a
 * base URL without the version segment), with `tool_calls`, usage, OpenAI-style errors
 * (`{"error": {"message", "type", "code"}}`, a `Retry-After` header on 429 when asked), and
 * streamed answers (`stream: true`: Server-Sent Events `data: {chunk}` lines, then `data: [DONE]`).
 * `POST /v1/embeddings` (and `/embeddings`) answers with the local concept model, unscripted
 * (test/fakes/embedding-answers.ts): the queue holds chat answers only.
 */
import { createOutboundClient, type OutboundSend } from "#functions/net/outbound-http";
import { conceptEmbedding } from "#test/fakes/concept-embedding";
import { openAiEmbeddingsAnswer } from "#test/fakes/embedding-answers";
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from "#test/fakes/scripted-http";
import { type StreamStep, tokens } from "#test/fakes/stream-steps";

export type FakeOpenAi = ScriptedServer;

export function startFakeOpenAi(): Promise<FakeOpenAi> {
  // WordNet is read once, now, rather than inside the first embeddings request.
  conceptEmbedding("warm up", 8);
  return startScriptedServer(
    (method, path) =>
      method === "POST" && /^(\/v1)?\/(chat\/completions|embeddings)$/.test(path) ? {} : undefined,
    openAiError(404, "Not found", "invalid_request_error"),
    "http1",
    (_method, path, body) => (path.endsWith("/embeddings") ? openAiEmbeddingsAnswer(body) : undefined),
  );
}

/**
 * The engine's outbound client, allowed to reach this fake (on loopback, which the address guard
 * refuses to everything else), the way the local runtime allows its own fakes.
 */
export function sendReaching(fake: { url: string }): OutboundSend {
  return createOutboundClient({
    allowPrivate: [{ address: "127.0.0.1", port: Number(new URL(fake.url).port) }],
  });
}

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export function completionText(
  text: string | null,
  usage: FakeUsage = { prompt_tokens: 11, completion_tokens: 6 },
  finishReason = "stop",
): ScriptedResponse {
  return completion({ role: "assistant", content: text }, finishReason, usage);
}

export function completionToolCalls(
  calls: { id: string; name: string; arguments: string }[],
  usage: FakeUsage = { prompt_tokens: 21, completion_tokens: 9 },
  /** Text the model writes beside its calls (none: `content` null). */
  content: string | null = null,
): ScriptedResponse {
  return completion(
    {
      role: "assistant",
      content,
      tool_calls: calls.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.arguments },
      })),
    },
    "tool_calls",
    usage,
  );
}

function completion(message: unknown, finishReason: string, usage: FakeUsage): ScriptedResponse {
  return {
    body: {
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "fake-model",
      choices: [{ index: 0, message, finish_reason: finishReason }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

export function openAiError(
  status: number,
  message: string,
  type: string,
  headers: Record<string, string> = {},
): ScriptedResponse {
  return { status, headers, body: { error: { message, type, code: null } } };
}

export interface CompletionStreamOptions {
  usage?: FakeUsage;
  finishReason?: string;
  /** Milliseconds between tokens (50 tokens/s: 20). */
  intervalMs?: number;
  /** Wait for the test to release the stream after this many tokens. */
  holdAfter?: number;
  /** After the tokens: end with `[DONE]` (default), stall, drop the connection, end without `[DONE]`, or send an error chunk. */
  ending?: "end" | "stall" | "reset" | "truncate" | { error: string };
  /** Split each SSE line in two TCP writes (a client must reassemble lines and UTF-8 characters). */
  splitWrites?: boolean;
}

const sse = (data: unknown) => `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
const chunkOf = (delta: unknown, finishReason: string | null = null) => ({
  id: "chatcmpl-fake",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "fake-model",
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});

/** A streamed answer: a role chunk, one content chunk per token, the finish chunk, a usage chunk, `[DONE]`. */
export function completionStream(text: string, options: CompletionStreamOptions = {}): ScriptedResponse {
  const usage = options.usage ?? { prompt_tokens: 11, completion_tokens: 6 };
  const lines: StreamStep[] = [{ chunk: sse(chunkOf({ role: "assistant", content: "" })) }];
  const push = (line: string) => {
    if (!options.splitWrites) return void lines.push({ chunk: line });
    // Split inside the line, and inside a multi-byte character when there is one.
    const bytes = Buffer.from(line);
    const nonAscii = bytes.findIndex((byte) => byte >= 0x80);
    const at = nonAscii > 0 ? nonAscii + 1 : Math.floor(bytes.length / 2);
    // A pause between the halves, so the client reads them apart.
    lines.push(
      { base64: bytes.subarray(0, at).toString("base64") },
      { pause: 10 },
      { base64: bytes.subarray(at).toString("base64") },
    );
  };
  tokens(text).forEach((token, index) => {
    if (index > 0 && options.intervalMs) lines.push({ pause: options.intervalMs });
    if (options.holdAfter !== undefined && index === options.holdAfter) lines.push({ hold: true });
    push(sse(chunkOf({ content: token })));
  });
  const ending = options.ending ?? "end";
  if (ending === "stall") lines.push({ stall: true });
  else if (ending === "reset") lines.push({ reset: true });
  else if (typeof ending === "object")
    lines.push({ chunk: sse({ error: { message: ending.error, type: "server_error", code: null } }) });
  else {
    lines.push({ chunk: sse(chunkOf({}, options.finishReason ?? "stop")) });
    lines.push({
      chunk: sse({
        ...chunkOf({}),
        choices: [],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      }),
    });
    if (ending === "end") lines.push({ chunk: sse("[DONE]") });
  }
  return { headers: { "content-type": "text/event-stream" }, stream: lines };
}

/** A streamed round asking for tools: each call's arguments arrive in two pieces, by index. */
export function completionStreamToolCalls(
  calls: { id: string; name: string; arguments: string }[],
  options: { preamble?: string } = {},
): ScriptedResponse {
  const lines: StreamStep[] = [{ chunk: sse(chunkOf({ role: "assistant", content: null })) }];
  for (const token of tokens(options.preamble ?? "")) lines.push({ chunk: sse(chunkOf({ content: token })) });
  calls.forEach((call, index) => {
    const half = Math.floor(call.arguments.length / 2);
    lines.push(
      {
        chunk: sse(
          chunkOf({
            tool_calls: [
              {
                index,
                id: call.id,
                type: "function",
                function: { name: call.name, arguments: call.arguments.slice(0, half) },
              },
            ],
          }),
        ),
      },
      {
        chunk: sse(chunkOf({ tool_calls: [{ index, function: { arguments: call.arguments.slice(half) } }] })),
      },
    );
  });
  lines.push({ chunk: sse(chunkOf({}, "tool_calls")) }, { chunk: sse("[DONE]") });
  return { headers: { "content-type": "text/event-stream" }, stream: lines };
}
