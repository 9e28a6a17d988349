/**
 * The engine for OpenAI-compatible Chat Completions (OpenAI, Ollama, vLLM, hosted providers), on the
 * runtime's fetch (agent/openai-http.ts). Only fields every provider understands are sent (and, when
 * the turn streams, `stream` with `stream_options.include_usage`, which they accept for usage in a
 * stream); the reply is validated, because providers differ in what they leave out. `withRetry` and
 * the turn's signal retry and time out, by the turn's deadline; a stream is retried only until its
 * response arrives.
 */
import * as z from "zod/mini";
import { signalWithDeadline, withIdleLimit } from "#functions/agent/deadline";
import type {
  ChatEngine,
  EngineReply,
  EngineTurn,
  HistoryMessage,
  ToolInputSchema,
  ToolOutcome,
  ToolSpec,
} from "#functions/agent/engine";
import { MAX_TOOL_ROUNDS } from "#functions/agent/engine";
import { EngineError, type EngineErrorReason } from "#functions/agent/engine-error";
import { type ChatApi, ChatApiError, createChatApi } from "#functions/agent/openai-http";
import { ReplyText } from "#functions/agent/reply-text";
import {
  type FailureVerdict,
  parseRetryAfter,
  type RetryClock,
  type RetryPolicy,
  withRetry,
} from "#functions/agent/retry";
import { runToolCall } from "#functions/agent/tool-calls";
import { groundedInstructions, passagesText, sourcesOf } from "#functions/knowledge/grounding";
import { BlockedAddressError } from "#functions/net/outbound-address";
import type { OutboundSend } from "#functions/net/outbound-http";

/** How long a streamed reply may go without any data from the model before it counts as stalled. */
const DEFAULT_STREAM_IDLE_MS = 10_000;

export interface OpenAiEngineOptions {
  /** Up to and including the version segment, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseUrl: string;
  model: string;
  /** Empty for providers without keys (a local Ollama): then no Authorization header is sent. */
  apiKey: string;
  /** The guarded outbound client every model request goes through (net/outbound-http.ts). */
  send: OutboundSend;
  retry?: { policy?: Partial<RetryPolicy>; clock?: RetryClock };
  /** A stream that sends nothing for this long is given up as stalled (default 10 s). */
  streamIdleMs?: number;
}

export function createOpenAiEngine(options: OpenAiEngineOptions): ChatEngine {
  const api = createChatApi({ baseUrl: options.baseUrl, apiKey: options.apiKey, send: options.send });
  return { kind: "openai", reply: (turn) => reply(api, options, turn) };
}

type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };
interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}
type WireMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ContentPart[] }
  | { role: "assistant"; content: string | null; tool_calls?: WireToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };
interface WireTool {
  type: "function";
  function: { name: string; description: string; parameters: ToolInputSchema };
}
interface ChatRequest {
  model: string;
  messages: WireMessage[];
  temperature: number;
  /** `max_tokens` rather than `max_completion_tokens`: the one every compatible server accepts. */
  max_tokens: number;
  tools?: WireTool[];
}

/** What we need from a reply; anything else a provider adds is ignored. */
const chatResponseSchema = z.object({
  choices: z.array(
    z.object({
      message: z.object({
        content: z.optional(z.nullable(z.string())),
        tool_calls: z.optional(
          z.nullable(
            z.array(
              z.object({
                id: z.optional(z.nullable(z.string())),
                function: z.object({
                  name: z.string(),
                  // A JSON string per the spec; a few servers send the object itself.
                  arguments: z.optional(z.union([z.string(), z.record(z.string(), z.unknown())])),
                }),
              }),
            ),
          ),
        ),
      }),
      finish_reason: z.optional(z.nullable(z.string())),
    }),
  ),
  usage: z.optional(
    z.nullable(
      z.object({
        prompt_tokens: z.optional(z.nullable(z.number())),
        completion_tokens: z.optional(z.nullable(z.number())),
      }),
    ),
  ),
});

/** What we need from a streamed chunk; an `error` object is how some servers fail mid-stream. */
const chatChunkSchema = z.object({
  choices: z.optional(
    z.nullable(
      z.array(
        z.object({
          delta: z.optional(
            z.nullable(
              z.object({
                content: z.optional(z.nullable(z.string())),
                tool_calls: z.optional(
                  z.nullable(
                    z.array(
                      z.object({
                        index: z.optional(z.number()),
                        id: z.optional(z.nullable(z.string())),
                        function: z.optional(
                          z.object({
                            name: z.optional(z.nullable(z.string())),
                            arguments: z.optional(z.nullable(z.string())),
                          }),
                        ),
                      }),
                    ),
                  ),
                ),
              }),
            ),
          ),
          finish_reason: z.optional(z.nullable(z.string())),
        }),
      ),
    ),
  ),
  usage: z.optional(
    z.nullable(
      z.object({
        prompt_tokens: z.optional(z.nullable(z.number())),
        completion_tokens: z.optional(z.nullable(z.number())),
      }),
    ),
  ),
  error: z.optional(z.unknown()),
});

/** One model round: its text, the tools it asked for, why it stopped, and what it cost. */
interface Round {
  content: string | null;
  toolCalls: { id?: string | null | undefined; name: string; arguments: string | Record<string, unknown> }[];
  finishReason: string | null | undefined;
  usage: { inputTokens: number; outputTokens: number };
}

interface RoundContext {
  api: ChatApi;
  options: OpenAiEngineOptions;
  turn: EngineTurn;
  signal: AbortSignal;
}

async function reply(api: ChatApi, options: OpenAiEngineOptions, turn: EngineTurn): Promise<EngineReply> {
  const signal = signalWithDeadline(turn.signal, turn.deadline);
  const request: ChatRequest = {
    model: options.model,
    messages: toChatMessages(systemPrompt(turn), turn.history, turn.message),
    temperature: turn.settings.temperature,
    max_tokens: turn.settings.maxOutputTokens,
    ...(turn.tools.specs.length > 0 ? { tools: turn.tools.specs.map(toWireTool) } : {}),
  };
  const usage = { inputTokens: 0, outputTokens: 0 };
  // Every round's text is part of the reply (a tool round's "Let me check that."), streamed or not.
  const text = new ReplyText(turn.onText);
  const context: RoundContext = { api, options, turn, signal };
  let modelLatencyMs = 0;
  let toolCalls = 0;
  try {
    for (let toolRounds = 0; ; toolRounds++) {
      const started = Date.now();
      const round = turn.onText
        ? await streamRound(context, request, text)
        : await completeRound(context, request);
      modelLatencyMs += Date.now() - started;
      usage.inputTokens += round.usage.inputTokens;
      usage.outputTokens += round.usage.outputTokens;
      if (!turn.onText && round.content) {
        text.block();
        text.append(round.content);
      }

      // Some servers (older Ollama) say finish_reason "stop" with tool calls: the calls decide.
      if (round.toolCalls.length === 0) {
        if (round.finishReason === "content_filter")
          throw new EngineError("model_error", "Reply was filtered");
        if (!round.content?.trim())
          throw new EngineError("malformed_output", `No text in the reply (finish ${round.finishReason})`);
        const sources = sourcesOf(turn.knowledge?.cited ?? []);
        return {
          messages: [text.value],
          usage,
          modelLatencyMs,
          toolCalls,
          ...(sources.length ? { sources } : {}),
        };
      }
      if (toolRounds >= MAX_TOOL_ROUNDS) {
        throw new EngineError(
          "malformed_output",
          `Model still asked for tools after ${MAX_TOOL_ROUNDS} rounds`,
        );
      }
      const calls: WireToolCall[] = round.toolCalls.map((call, index) => ({
        id: call.id || `call_${toolRounds}_${index}`,
        type: "function",
        function: {
          name: call.name,
          arguments:
            typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
        },
      }));
      request.messages.push({ role: "assistant", content: round.content ?? null, tool_calls: calls });
      for (const call of calls) {
        const input = parseArguments(call.function.arguments);
        let outcome: ToolOutcome;
        if (input === undefined) {
          // Told, the model can correct itself in the next round; counted against MAX_TOOL_ROUNDS.
          outcome = { status: "error", content: { error: "The arguments were not a JSON object." } };
        } else {
          turn.onToolCall?.(call.function.name, text.value);
          outcome = await runToolCall(turn.tools, call.function.name, input, signal);
          toolCalls++;
        }
        request.messages.push({
          role: "tool",
          tool_call_id: call.id,
          content: JSON.stringify({ status: outcome.status, content: outcome.content }),
        });
      }
    }
  } catch (error) {
    throw toEngineError(error, signal);
  }
}

/** A round read at once. */
async function completeRound(
  { api, options, turn, signal }: RoundContext,
  request: ChatRequest,
): Promise<Round> {
  const raw = await withRetry(() => api.complete(request, signal), {
    deadline: turn.deadline,
    signal,
    classify: (error) => describeOpenAiFailure(error),
    ...options.retry,
  });
  const parsed = chatResponseSchema.safeParse(raw);
  const choice = parsed.success ? parsed.data.choices[0] : undefined;
  if (!parsed.success || !choice) throw new EngineError("malformed_output", "Reply is not a chat completion");
  return {
    content: choice.message.content ?? null,
    toolCalls: (choice.message.tool_calls ?? []).map((call) => ({
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments ?? {},
    })),
    finishReason: choice.finish_reason,
    usage: {
      inputTokens: parsed.data.usage?.prompt_tokens ?? 0,
      outputTokens: parsed.data.usage?.completion_tokens ?? 0,
    },
  };
}

/**
 * A round streamed: text goes to the reply as it arrives; tool calls are assembled by index from
 * their pieces. A stream that sends nothing for the idle limit is ended as stalled; one that ends
 * before the model said why it finished was cut off.
 */
async function streamRound(
  { api, options, turn, signal }: RoundContext,
  request: ChatRequest,
  text: ReplyText,
): Promise<Round> {
  const idleMs = options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS;
  const stop = new AbortController();
  const roundSignal = AbortSignal.any([signal, stop.signal]);
  const chunks = await withRetry(
    () => api.stream({ ...request, stream_options: { include_usage: true } }, roundSignal),
    {
      deadline: turn.deadline,
      signal: roundSignal,
      classify: (error) => describeOpenAiFailure(error),
      ...options.retry,
    },
  );
  const stalled = () => {
    const error = new EngineError("stalled", `No data from the model for ${idleMs} ms`);
    stop.abort(error);
    return error;
  };
  text.block();
  let content: string | null = null;
  let finishReason: string | null | undefined;
  const calls = new Map<number, { id?: string | null | undefined; name: string; arguments: string }>();
  const usage = { inputTokens: 0, outputTokens: 0 };
  for await (const raw of withIdleLimit(chunks, idleMs, stalled)) {
    const parsed = chatChunkSchema.safeParse(raw);
    if (!parsed.success)
      throw new EngineError("malformed_output", "A streamed chunk is not a completion chunk");
    if (parsed.data.error !== undefined) throw new EngineError("model_error", "The stream reported an error");
    if (parsed.data.usage) {
      usage.inputTokens = parsed.data.usage.prompt_tokens ?? 0;
      usage.outputTokens = parsed.data.usage.completion_tokens ?? 0;
    }
    const choice = parsed.data.choices?.[0];
    if (!choice) continue;
    const piece = choice.delta?.content;
    if (piece) {
      content = (content ?? "") + piece;
      text.append(piece);
    }
    for (const [position, call] of (choice.delta?.tool_calls ?? []).entries()) {
      const index = call.index ?? position;
      const known = calls.get(index) ?? { name: "", arguments: "" };
      if (call.id) known.id = call.id;
      known.name += call.function?.name ?? "";
      known.arguments += call.function?.arguments ?? "";
      calls.set(index, known);
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  // An aborted request may end the body quietly rather than fail it.
  roundSignal.throwIfAborted();
  if (!finishReason) throw new EngineError("model_error", "The stream ended before the model finished");
  return {
    content,
    toolCalls: [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call),
    finishReason,
    usage,
  };
}

/** System prompt, history in order, then the new message (text part first, then images as data URLs). */
/** The system message: the chatbot's instructions; with knowledge, the grounding rule and the turn's passages. */
export function systemPrompt(turn: Pick<EngineTurn, "instructions" | "knowledge">): string {
  if (!turn.knowledge) return turn.instructions;
  return `${groundedInstructions(turn.instructions)}\n\n${passagesText(turn.knowledge)}`;
}

export function toChatMessages(
  instructions: string,
  history: readonly HistoryMessage[],
  message: EngineTurn["message"],
): WireMessage[] {
  const messages: WireMessage[] = [];
  if (instructions.trim()) messages.push({ role: "system", content: instructions });
  for (const earlier of history) {
    if (earlier.text.trim()) messages.push({ role: earlier.role, content: earlier.text });
  }
  if (message.images.length === 0) {
    if (!message.text.trim())
      throw new EngineError("configuration", "The new message has neither text nor images");
    // A plain string is what every compatible server accepts; parts only when there are images.
    messages.push({ role: "user", content: message.text });
    return messages;
  }
  const parts: ContentPart[] = message.text.trim() ? [{ type: "text", text: message.text }] : [];
  for (const image of message.images) {
    const url = `data:${image.mediaType};base64,${Buffer.from(image.bytes).toString("base64")}`;
    parts.push({ type: "image_url", image_url: { url } });
  }
  messages.push({ role: "user", content: parts });
  return messages;
}

function toWireTool(spec: ToolSpec): WireTool {
  return {
    type: "function",
    function: { name: spec.name, description: spec.description, parameters: spec.inputSchema },
  };
}

function parseArguments(text: string): Record<string, unknown> | undefined {
  if (!text.trim()) return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const retryableStatuses = new Set([429, 500, 502, 503, 504]);

/** How a failed completion call counts: its reason if final, and whether a retry may help. */
export function describeOpenAiFailure(error: unknown): FailureVerdict & { reason: EngineErrorReason } {
  if (error instanceof SyntaxError) return { reason: "malformed_output", retryable: false };
  // The model server's address is not a public one: a setting to fix, never worth a retry.
  if (error instanceof BlockedAddressError) return { reason: "configuration", retryable: false };
  if (!(error instanceof ChatApiError)) {
    // Connection refused, DNS failure: not in the retry list (the endpoint is likely misconfigured or down).
    return { reason: "model_error", retryable: false };
  }
  const status = error.status;
  const reason: EngineErrorReason =
    status === 429
      ? "throttled"
      : status === 408
        ? "timeout"
        : status >= 400 && status < 500
          ? "configuration"
          : "model_error";
  if (!retryableStatuses.has(status)) return { reason, retryable: false };
  const headers = error.headers;
  const retryAfterMs = parseRetryAfter(
    { retryAfter: headers["retry-after"], retryAfterMs: headers["retry-after-ms"] },
    Date.now(),
  );
  return retryAfterMs === undefined ? { reason, retryable: true } : { reason, retryable: true, retryAfterMs };
}

function toEngineError(error: unknown, signal: AbortSignal): EngineError {
  if (error instanceof EngineError) return error;
  if (signal.aborted) return new EngineError("timeout", "The turn's deadline passed", { cause: error });
  const { reason } = describeOpenAiFailure(error);
  const label =
    error instanceof ChatApiError
      ? `HTTP ${error.status}`
      : error instanceof BlockedAddressError
        ? `blocked address (${error.reason})`
        : "no response";
  return new EngineError(reason, `Chat completion failed: ${label}`, { cause: error });
}
