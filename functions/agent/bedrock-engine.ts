/**
 * The Amazon Bedrock engine: one Converse call per round, with a bounded tool loop.
 * The client is built with `maxAttempts: 1` so that `withRetry` (which knows the turn's deadline) is
 * the only retry; the turn's signal is passed to every call so a deadline stops the HTTP request.
 */
import {
  BedrockRuntimeClient,
  type BedrockRuntimeClientConfig,
  BedrockRuntimeServiceException,
  type ContentBlock,
  ConverseCommand,
  type ConverseCommandOutput,
  type ImageFormat,
  type Message,
  type Tool,
  type ToolConfiguration,
  type ToolUseBlock,
} from "@aws-sdk/client-bedrock-runtime";
import { signalWithDeadline } from "#functions/agent/deadline";
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
import {
  type FailureVerdict,
  parseRetryAfter,
  type RetryClock,
  type RetryPolicy,
  withRetry,
} from "#functions/agent/retry";
import { runToolCall } from "#functions/agent/tool-calls";
import { awsClientOptions } from "#functions/aws-clients";

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

async function reply(options: BedrockEngineOptions, turn: EngineTurn): Promise<EngineReply> {
  const signal = signalWithDeadline(turn.signal, turn.deadline);
  const messages = toConverseMessages(turn.history, turn.message);
  const toolConfig = toToolConfig(turn.tools.specs);
  const usage = { inputTokens: 0, outputTokens: 0 };
  let modelLatencyMs = 0;
  let toolCalls = 0;
  try {
    for (let toolRounds = 0; ; toolRounds++) {
      const command = new ConverseCommand({
        modelId: options.modelId,
        messages,
        ...(turn.instructions.trim() ? { system: [{ text: turn.instructions }] } : {}),
        inferenceConfig: { maxTokens: turn.settings.maxOutputTokens, temperature: turn.settings.temperature },
        ...(toolConfig ? { toolConfig } : {}),
      });
      const started = Date.now();
      const output = await withRetry(() => options.client.send(command, { abortSignal: signal }), {
        deadline: turn.deadline,
        signal,
        classify: (error) => describeBedrockFailure(error),
        ...options.retry,
      });
      modelLatencyMs += Date.now() - started;
      usage.inputTokens += output.usage?.inputTokens ?? 0;
      usage.outputTokens += output.usage?.outputTokens ?? 0;

      const content = output.output?.message?.content ?? [];
      if (output.stopReason !== "tool_use") {
        return { messages: [finalText(output, content)], usage, modelLatencyMs, toolCalls };
      }
      if (toolRounds >= MAX_TOOL_ROUNDS) {
        throw new EngineError(
          "malformed_output",
          `Model still asked for tools after ${MAX_TOOL_ROUNDS} rounds`,
        );
      }
      const uses = content.flatMap((block) => (block.toolUse ? [block.toolUse] : []));
      if (uses.length === 0)
        throw new EngineError("malformed_output", "Stop reason tool_use without a toolUse block");
      const results: ContentBlock[] = [];
      for (const use of uses) {
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
      messages.push({ role: "assistant", content }, { role: "user", content: results });
    }
  } catch (error) {
    throw toEngineError(error, signal);
  }
}

/** The reply text of a round that did not ask for tools, or a typed error saying why there is none. */
function finalText(output: ConverseCommandOutput, content: readonly ContentBlock[]): string {
  const text = content
    .flatMap((block) => (typeof block.text === "string" ? [block.text.trim()] : []))
    .filter((part) => part.length > 0)
    .join("\n\n");
  switch (output.stopReason) {
    case "malformed_model_output":
    case "malformed_tool_use":
      throw new EngineError("malformed_output", `Stop reason ${output.stopReason}`);
    case "content_filtered":
    case "model_context_window_exceeded":
      throw new EngineError("model_error", `Stop reason ${output.stopReason}`);
    default:
      // end_turn, stop_sequence, max_tokens (a cut reply beats none), guardrail_intervened (the
      // guardrail's own message is meant for the visitor), and reasons newer than this code.
      if (!text)
        throw new EngineError("malformed_output", `No text in the reply (stop reason ${output.stopReason})`);
      return text;
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
  const status = error.$metadata.httpStatusCode;
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
