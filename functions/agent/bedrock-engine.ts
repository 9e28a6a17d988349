/**
 * The Amazon Bedrock engine: one Converse call per round (ConverseStream when the turn streams its
 * reply), with a bounded tool loop. The client is built with `maxAttempts: 1` so that `withRetry`
 * (which knows the turn's deadline) is the only retry; the turn's signal is passed to every call so a
 * deadline stops the HTTP request. A stream is retried only until its response arrives: after that,
 * text may have reached the visitor, and a failure is the turn's fallback.
 */
import {
  BedrockRuntimeClient,
  type BedrockRuntimeClientConfig,
  BedrockRuntimeServiceException,
  type ContentBlock,
  ConverseCommand,
  type ConverseCommandInput,
  ConverseStreamCommand,
  type ImageFormat,
  type Message,
  type SystemContentBlock,
  type Tool,
  type ToolConfiguration,
  type ToolUseBlock,
} from "@aws-sdk/client-bedrock-runtime";
import { signalWithDeadline, withIdleLimit } from "#functions/agent/deadline";
import type {
  ChatEngine,
  EngineReply,
  EngineTurn,
  HistoryMessage,
  ImageInput,
  ImageMediaType,
  ToolSpec,
} from "#functions/agent/engine";
import { MAX_TOOL_ROUNDS } from "#functions/agent/engine";
import { EngineError, type EngineErrorReason } from "#functions/agent/engine-error";
import { ReplyText } from "#functions/agent/reply-text";
import {
  type FailureVerdict,
  parseRetryAfter,
  type RetryClock,
  type RetryPolicy,
  withRetry,
} from "#functions/agent/retry";
import { runToolCall } from "#functions/agent/tool-calls";
import { awsClientOptions } from "#functions/aws-clients";
import { groundedInstructions, passagesText, sourcesOf } from "#functions/knowledge/grounding";

/** How long a streamed reply may go without any data from the model before it counts as stalled. */
export const DEFAULT_STREAM_IDLE_MS = 10_000;

export interface BedrockClientOptions {
  region: string;
  /** A local Converse server (tests, local runtime); production uses the regional endpoint. */
  endpoint?: string;
  /** Defaults to the SDK's provider chain (the Lambda role); tests pass dummy keys. */
  credentials?: BedrockRuntimeClientConfig["credentials"];
}

/** One client per Lambda container, shared by turns. */
export function createBedrockClient(options: BedrockClientOptions): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    region: options.region,
    // One attempt (withRetry retries by the turn's deadline) and a backstop timeout.
    ...awsClientOptions("model"),
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });
}

export interface BedrockEngineOptions {
  client: BedrockRuntimeClient;
  /** Model ID, inference profile ID or ARN. */
  modelId: string;
  retry?: { policy?: Partial<RetryPolicy>; clock?: RetryClock };
  /** A stream that sends nothing for this long is given up as stalled (default DEFAULT_STREAM_IDLE_MS). */
  streamIdleMs?: number;
}

export function createBedrockEngine(options: BedrockEngineOptions): ChatEngine {
  return { kind: "bedrock", reply: (turn) => reply(options, turn) };
}

type DocumentType = NonNullable<ToolUseBlock["input"]>;

const imageFormats: Record<ImageMediaType, ImageFormat> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp",
};

/** One model round: what it wrote, why it stopped, and what it cost. */
interface Round {
  content: ContentBlock[];
  stopReason: string | undefined;
  usage: { inputTokens: number; outputTokens: number };
  /** The round wrote some text (a final round must). */
  hasText: boolean;
}

async function reply(options: BedrockEngineOptions, turn: EngineTurn): Promise<EngineReply> {
  const signal = signalWithDeadline(turn.signal, turn.deadline);
  const messages = toConverseMessages(turn.history, turn.message);
  const toolConfig = toToolConfig(turn.tools.specs);
  const system = systemBlocks(options.modelId, turn);
  const usage = { inputTokens: 0, outputTokens: 0 };
  // Every round's text is part of the reply (a tool round's "Let me check that."), streamed or not.
  const text = new ReplyText(turn.onText);
  let modelLatencyMs = 0;
  let toolCalls = 0;
  try {
    for (let toolRounds = 0; ; toolRounds++) {
      const input: ConverseCommandInput = {
        modelId: options.modelId,
        messages,
        ...(system.length > 0 ? { system } : {}),
        inferenceConfig: { maxTokens: turn.settings.maxOutputTokens, temperature: turn.settings.temperature },
        ...(toolConfig ? { toolConfig } : {}),
      };
      const started = Date.now();
      const round = turn.onText
        ? await streamRound(options, input, turn, signal, text)
        : await converseRound(options, input, turn, signal, text);
      modelLatencyMs += Date.now() - started;
      usage.inputTokens += round.usage.inputTokens;
      usage.outputTokens += round.usage.outputTokens;

      if (round.stopReason !== "tool_use") {
        checkFinalRound(round);
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
      const uses = round.content.flatMap((block) => (block.toolUse ? [block.toolUse] : []));
      if (uses.length === 0)
        throw new EngineError("malformed_output", "Stop reason tool_use without a toolUse block");
      const results: ContentBlock[] = [];
      for (const use of uses) {
        turn.onToolCall?.(use.name ?? "", text.value);
        const outcome = await runToolCall(turn.tools, use.name ?? "", use.input ?? {}, signal);
        toolCalls++;
        results.push({
          toolResult: {
            toolUseId: use.toolUseId,
            status: outcome.status,
            content: [{ json: toDocument(outcome.content) }],
          },
        });
      }
      messages.push({ role: "assistant", content: round.content }, { role: "user", content: results });
    }
  } catch (error) {
    throw toEngineError(error, signal);
  }
}

/**
 * Models that take Converse cache points (Bedrock's prompt caching): Anthropic Claude 3.5 Haiku,
 * 3.7 Sonnet and the Claude 4 families, and the Amazon Nova models. Others refuse the block, so it is
 * sent to these only; by model id, inference profile or ARN alike.
 */
const cachePointModels =
  /anthropic\.claude-(3-5-haiku|3-7-sonnet|sonnet-4|opus-4|haiku-4)|amazon\.nova-(micro|lite|pro|premier)/;

export function supportsCachePoints(modelId: string): boolean {
  return cachePointModels.test(modelId);
}

/**
 * The system prompt: the chatbot's instructions; with knowledge, the grounding rule after them, a
 * cache point (where the model takes one) closing that stable prefix, and the turn's passages last.
 */
export function systemBlocks(
  modelId: string,
  turn: Pick<EngineTurn, "instructions" | "knowledge">,
): SystemContentBlock[] {
  if (!turn.knowledge) return turn.instructions.trim() ? [{ text: turn.instructions }] : [];
  return [
    { text: groundedInstructions(turn.instructions) },
    ...(supportsCachePoints(modelId) ? [{ cachePoint: { type: "default" as const } }] : []),
    { text: passagesText(turn.knowledge) },
  ];
}

/** A round read at once (Converse). */
async function converseRound(
  options: BedrockEngineOptions,
  input: ConverseCommandInput,
  turn: EngineTurn,
  signal: AbortSignal,
  text: ReplyText,
): Promise<Round> {
  const command = new ConverseCommand(input);
  const output = await withRetry(() => options.client.send(command, { abortSignal: signal }), {
    deadline: turn.deadline,
    signal,
    classify: (error) => describeBedrockFailure(error),
    ...options.retry,
  });
  const content = output.output?.message?.content ?? [];
  let hasText = false;
  for (const block of content) {
    if (typeof block.text !== "string") continue;
    text.block();
    text.append(block.text);
    hasText ||= block.text.trim() !== "";
  }
  return {
    content,
    stopReason: output.stopReason,
    usage: { inputTokens: output.usage?.inputTokens ?? 0, outputTokens: output.usage?.outputTokens ?? 0 },
    hasText,
  };
}

interface StreamedBlock {
  text?: string;
  toolUse?: { toolUseId?: string | undefined; name?: string | undefined; input: string };
}

/**
 * A round streamed (ConverseStream): text goes to the reply as it arrives; tool uses are assembled
 * from their pieces of JSON. A stream that sends nothing for the idle limit is ended as stalled; one
 * that ends without messageStop was cut off.
 */
async function streamRound(
  options: BedrockEngineOptions,
  input: ConverseCommandInput,
  turn: EngineTurn,
  signal: AbortSignal,
  text: ReplyText,
): Promise<Round> {
  const idleMs = options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS;
  const stop = new AbortController();
  const roundSignal = AbortSignal.any([signal, stop.signal]);
  const command = new ConverseStreamCommand(input);
  const output = await withRetry(() => options.client.send(command, { abortSignal: roundSignal }), {
    deadline: turn.deadline,
    signal: roundSignal,
    classify: (error) => describeBedrockFailure(error),
    ...options.retry,
  });
  if (!output.stream) throw new EngineError("model_error", "ConverseStream answered without a stream");

  const blocks = new Map<number, StreamedBlock>();
  const blockAt = (index: number): StreamedBlock => {
    const block = blocks.get(index) ?? {};
    blocks.set(index, block);
    return block;
  };
  let stopReason: string | undefined;
  let hasText = false;
  const usage = { inputTokens: 0, outputTokens: 0 };
  const stalled = () => {
    const error = new EngineError("stalled", `No data from the model for ${idleMs} ms`);
    stop.abort(error);
    return error;
  };
  for await (const event of withIdleLimit(output.stream, idleMs, stalled)) {
    if (event.contentBlockStart?.start?.toolUse) {
      const { toolUseId, name } = event.contentBlockStart.start.toolUse;
      blockAt(event.contentBlockStart.contentBlockIndex ?? 0).toolUse = { toolUseId, name, input: "" };
    } else if (event.contentBlockDelta) {
      const block = blockAt(event.contentBlockDelta.contentBlockIndex ?? 0);
      const delta = event.contentBlockDelta.delta;
      if (typeof delta?.text === "string") {
        if (block.text === undefined) {
          block.text = "";
          text.block();
        }
        block.text += delta.text;
        text.append(delta.text);
        hasText ||= delta.text.trim() !== "";
      } else if (delta?.toolUse) {
        block.toolUse ??= { input: "" };
        block.toolUse.input += delta.toolUse.input ?? "";
      }
    } else if (event.messageStop) {
      stopReason = event.messageStop.stopReason ?? "end_turn";
    } else if (event.metadata?.usage) {
      usage.inputTokens = event.metadata.usage.inputTokens ?? 0;
      usage.outputTokens = event.metadata.usage.outputTokens ?? 0;
    }
  }
  // An aborted request may end the stream quietly rather than fail it.
  roundSignal.throwIfAborted();
  if (stopReason === undefined) throw new EngineError("model_error", "The stream ended without messageStop");

  const content = [...blocks.entries()]
    .sort(([a], [b]) => a - b)
    .flatMap(([, block]): ContentBlock[] => {
      if (block.toolUse) {
        const { toolUseId, name, input: json } = block.toolUse;
        return [{ toolUse: { toolUseId, name, input: parseToolInput(json) } }];
      }
      return block.text === undefined ? [] : [{ text: block.text }];
    });
  return { content, stopReason, usage, hasText };
}

/** A streamed tool use's input: JSON text, sent in pieces; none at all means no arguments. */
function parseToolInput(json: string): DocumentType {
  if (json.trim() === "") return {};
  try {
    return JSON.parse(json) as DocumentType;
  } catch {
    throw new EngineError("malformed_output", "A tool use's input is not JSON");
  }
}

/** A round that did not ask for tools must have ended well and written text; else a typed error says why. */
function checkFinalRound(round: Round): void {
  switch (round.stopReason) {
    case "malformed_model_output":
    case "malformed_tool_use":
      throw new EngineError("malformed_output", `Stop reason ${round.stopReason}`);
    case "content_filtered":
    case "model_context_window_exceeded":
      throw new EngineError("model_error", `Stop reason ${round.stopReason}`);
    default:
      // end_turn, stop_sequence, max_tokens (a cut reply beats none), guardrail_intervened (the
      // guardrail's own message is meant for the visitor), and reasons newer than this code.
      if (!round.hasText)
        throw new EngineError("malformed_output", `No text in the reply (stop reason ${round.stopReason})`);
  }
}

/**
 * History and the new message as Converse messages: roles must alternate, so consecutive messages of
 * one role are merged; and the first must be the user's, so leading assistant messages (usually the
 * welcome message) are dropped. Images go before the text, as Anthropic's models prefer.
 */
export function toConverseMessages(
  history: readonly HistoryMessage[],
  message: EngineTurn["message"],
): Message[] {
  const messages: Message[] = [];
  const append = (role: "user" | "assistant", content: ContentBlock[]) => {
    if (content.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === role) last.content = [...(last.content ?? []), ...content];
    else messages.push({ role, content });
  };
  for (const earlier of history) {
    if (earlier.text.trim()) append(earlier.role, [{ text: earlier.text }]);
  }
  const newContent: ContentBlock[] = message.images.map(toImageBlock);
  if (message.text.trim()) newContent.push({ text: message.text });
  if (newContent.length === 0)
    throw new EngineError("configuration", "The new message has neither text nor images");
  append("user", newContent);
  while (messages[0]?.role === "assistant") messages.shift();
  return messages;
}

function toImageBlock(image: ImageInput): ContentBlock {
  return { image: { format: imageFormats[image.mediaType], source: { bytes: image.bytes } } };
}

function toToolConfig(specs: readonly ToolSpec[]): ToolConfiguration | undefined {
  if (specs.length === 0) return undefined;
  const tools: Tool[] = specs.map((spec) => ({
    toolSpec: {
      name: spec.name,
      description: spec.description,
      inputSchema: { json: toDocument(spec.inputSchema) },
    },
  }));
  return { tools, toolChoice: { auto: {} } };
}

/** Plain JSON in, Smithy document out (drops undefined and anything JSON cannot carry). */
function toDocument(value: unknown): DocumentType {
  return JSON.parse(JSON.stringify(value ?? null));
}

const retryableErrorNames = new Set([
  "ThrottlingException",
  "ModelNotReadyException",
  "InternalServerException",
  "ServiceUnavailableException",
]);
const retryableStatuses = new Set([429, 500, 502, 503, 504]);

const reasonsByErrorName: Record<string, EngineErrorReason> = {
  ThrottlingException: "throttled",
  ServiceQuotaExceededException: "throttled",
  ModelTimeoutException: "timeout",
  AccessDeniedException: "configuration",
  ResourceNotFoundException: "configuration",
  ValidationException: "configuration",
  UnrecognizedClientException: "configuration",
  ExpiredTokenException: "configuration",
};

/** How a failed Converse call counts: its reason if final, and whether a retry may help. */
export function describeBedrockFailure(error: unknown): FailureVerdict & { reason: EngineErrorReason } {
  if (!(error instanceof BedrockRuntimeServiceException)) {
    // Network failures and the like: not in the retry list, and not our configuration.
    return { reason: "model_error", retryable: false };
  }
  // An exception sent inside an event stream has no HTTP status of its own.
  const status = error.$metadata?.httpStatusCode;
  const retryable =
    retryableErrorNames.has(error.name) || (status !== undefined && retryableStatuses.has(status));
  const reason = reasonsByErrorName[error.name] ?? (status === 429 ? "throttled" : "model_error");
  const headers = error.$response?.headers ?? {};
  const retryAfterMs = parseRetryAfter({ retryAfter: headers["retry-after"] }, Date.now());
  return retryAfterMs === undefined ? { reason, retryable } : { reason, retryable, retryAfterMs };
}

function toEngineError(error: unknown, signal: AbortSignal): EngineError {
  if (error instanceof EngineError) return error;
  if (signal.aborted) return new EngineError("timeout", "The turn's deadline passed", { cause: error });
  const { reason } = describeBedrockFailure(error);
  const label = error instanceof Error ? error.name : "Unknown error";
  return new EngineError(reason, `Bedrock Converse failed: ${label}`, { cause: error });
}
