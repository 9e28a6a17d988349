/**
 * The engine for OpenAI-compatible Chat Completions (OpenAI, Ollama, vLLM, hosted providers), through
 * `openai-fetch`: 18 KB where the official client weighs 150–390 KB. Only fields every provider
 * understands are sent; the reply is validated, because providers differ in what they leave out.
 * ky's retries and timeout are switched off: `withRetry` and the turn's signal do both, by deadline.
 */
import { APIError, type ChatParams, OpenAIClient } from "openai-fetch";
import * as z from "zod/mini";
import { signalWithDeadline } from "#functions/agent/deadline";
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
import {
  type FailureVerdict,
  parseRetryAfter,
  type RetryClock,
  type RetryPolicy,
  withRetry,
} from "#functions/agent/retry";
import { runToolCall } from "#functions/agent/tool-calls";

export interface OpenAiEngineOptions {
  /** Up to and including the version segment, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseUrl: string;
  model: string;
  /** Empty for providers without keys (a local Ollama): then no Authorization header is sent. */
  apiKey: string;
  retry?: { policy?: Partial<RetryPolicy>; clock?: RetryClock };
}

export function createOpenAiEngine(options: OpenAiEngineOptions): ChatEngine {
  const client = new OpenAIClient({
    // openai-fetch falls back to OPENAI_API_KEY when given none: never send that key to another provider.
    apiKey: options.apiKey || "none",
    baseUrl: options.baseUrl,
    kyOptions: {
      retry: 0,
      timeout: false,
      hooks: {
        beforeRequest: [
          (request) => {
            // OpenAI-Organization may come from the environment; it is OpenAI-specific.
            request.headers.delete("OpenAI-Organization");
            if (!options.apiKey) request.headers.delete("Authorization");
          },
        ],
      },
    },
  });
  return { kind: "openai", reply: (turn) => reply(client, options, turn) };
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

async function reply(
  client: OpenAIClient,
  options: OpenAiEngineOptions,
  turn: EngineTurn,
): Promise<EngineReply> {
  const signal = signalWithDeadline(turn.signal, turn.deadline);
  const request: ChatRequest = {
    model: options.model,
    messages: toChatMessages(turn.instructions, turn.history, turn.message),
    temperature: turn.settings.temperature,
    max_tokens: turn.settings.maxOutputTokens,
    ...(turn.tools.specs.length > 0 ? { tools: turn.tools.specs.map(toWireTool) } : {}),
  };
  const usage = { inputTokens: 0, outputTokens: 0 };
  let modelLatencyMs = 0;
  let toolCalls = 0;
  try {
    for (let toolRounds = 0; ; toolRounds++) {
      const started = Date.now();
      const raw: unknown = await withRetry(
        // openai-fetch types `content` as a string only; the wire format also takes content parts (images).
        () => client.createChatCompletion(request as unknown as ChatParams, { signal }),
        {
          deadline: turn.deadline,
          signal,
          classify: (error) => describeOpenAiFailure(error),
          ...options.retry,
        },
      );
      modelLatencyMs += Date.now() - started;
      const parsed = chatResponseSchema.safeParse(raw);
      const choice = parsed.success ? parsed.data.choices[0] : undefined;
      if (!parsed.success || !choice)
        throw new EngineError("malformed_output", "Reply is not a chat completion");
      usage.inputTokens += parsed.data.usage?.prompt_tokens ?? 0;
      usage.outputTokens += parsed.data.usage?.completion_tokens ?? 0;

      // Some servers (older Ollama) say finish_reason "stop" with tool calls: the calls decide.
      const requested = choice.message.tool_calls ?? [];
      if (requested.length === 0) {
        if (choice.finish_reason === "content_filter")
          throw new EngineError("model_error", "Reply was filtered");
        const text = choice.message.content?.trim();
        if (!text)
          throw new EngineError("malformed_output", `No text in the reply (finish ${choice.finish_reason})`);
        return { messages: [text], usage, modelLatencyMs, toolCalls };
      }
      if (toolRounds >= MAX_TOOL_ROUNDS) {
        throw new EngineError(
          "malformed_output",
          `Model still asked for tools after ${MAX_TOOL_ROUNDS} rounds`,
        );
      }
      const calls: WireToolCall[] = requested.map((call, index) => ({
        id: call.id || `call_${toolRounds}_${index}`,
        type: "function",
        function: {
          name: call.function.name,
          arguments:
            typeof call.function.arguments === "string"
              ? call.function.arguments
              : JSON.stringify(call.function.arguments ?? {}),
        },
      }));
      request.messages.push({
        role: "assistant",
        content: choice.message.content ?? null,
        tool_calls: calls,
      });
      for (const call of calls) {
        const input = parseArguments(call.function.arguments);
        let outcome: ToolOutcome;
        if (input === undefined) {
          // Told, the model can correct itself in the next round; counted against MAX_TOOL_ROUNDS.
          outcome = { status: "error", content: { error: "The arguments were not a JSON object." } };
        } else {
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

/** System prompt, history in order, then the new message (text part first, then images as data URLs). */
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
  if (!(error instanceof APIError) || typeof error.status !== "number") {
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
  const headers = error.headers ?? {};
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
  const label = error instanceof APIError && error.status ? `HTTP ${error.status}` : "no response";
  return new EngineError(reason, `Chat completion failed: ${label}`, { cause: error });
}
