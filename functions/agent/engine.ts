/**
 * The contract between a conversation turn and the engine that writes the chatbot's reply.
 *
 * A turn (domain/messages) loads the chatbot, the windowed history and the visitor's new message,
 * resolves image attachments to bytes, builds a ToolBox, and calls `engine.reply()` with a deadline.
 * Engines never touch the table and never decide the fallback text: if `reply()` rejects or the
 * signal aborts, the turn answers with the chatbot's fallback reply. Everything here is plain data
 * so each engine can be tested against a local server speaking its real protocol.
 */
import type { GroundingPassage, SourceRef } from "#functions/knowledge/grounding";

export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** A picture the visitor sent, already fetched or decoded, and size-checked. */
export interface ImageInput {
  mediaType: ImageMediaType;
  bytes: Uint8Array;
}

/** One earlier message of the conversation, oldest first. Images are not replayed from history. */
export interface HistoryMessage {
  role: "user" | "assistant";
  text: string;
}

/** JSON Schema (draft 2020-12 subset) describing a tool's input object. */
export interface ToolInputSchema {
  type: "object";
  properties: Record<
    string,
    { type: "string"; description: string; pattern?: string; format?: string; enum?: string[] }
  >;
  required: string[];
  additionalProperties?: false;
}

export interface ToolSpec {
  /** Model-facing name: `^[a-zA-Z][a-zA-Z0-9_]{0,63}$`. */
  name: string;
  /** Tells the model when to use the tool and which details it must collect first. */
  description: string;
  inputSchema: ToolInputSchema;
}

/** What a tool call gives back to the model. Never throws; failures are `status: "error"`. */
export interface ToolOutcome {
  status: "success" | "error";
  /** JSON object shown to the model (no secrets, no data the visitor may not see). */
  content: Record<string, unknown>;
}

/**
 * The tools a chatbot may use in this turn. The implementation (tools/) enforces
 * collect-before-call itself: an engine may ask for anything, the ToolBox decides.
 */
export interface ToolBox {
  specs: readonly ToolSpec[];
  call(name: string, input: unknown, signal: AbortSignal): Promise<ToolOutcome>;
}

export const emptyToolBox: ToolBox = {
  specs: [],
  call: async (name) => ({ status: "error", content: { error: `Unknown tool ${name}` } }),
};

export interface EngineSettings {
  temperature: number;
  maxOutputTokens: number;
}

/**
 * The chatbot's knowledge for this turn, retrieved before the engine runs (knowledge/retriever.ts).
 * Absent when the chatbot has no knowledge at all: the engine then answers as it always did.
 */
export interface TurnKnowledge {
  /** The relevant passages, best first, fitted to the input budget; empty when none matched. */
  passages: readonly GroundingPassage[];
  /** The best passage that clears the confidence bar: what the scripted engine answers with. */
  answer?: GroundingPassage;
  /**
   * The passages among `passages` that clear the confidence bar: what a model's reply cites as its
   * sources (the others are context the model may use, not what the answer rests on).
   */
  cited: readonly GroundingPassage[];
}

export interface EngineTurn {
  /** The chatbot's instructions (system prompt). May be empty. */
  instructions: string;
  /** The business's passages for this question; model engines answer from them (knowledge/grounding.ts). */
  knowledge?: TurnKnowledge;
  history: readonly HistoryMessage[];
  message: { text: string; images: readonly ImageInput[] };
  tools: ToolBox;
  settings: EngineSettings;
  /** Aborted when the turn's deadline passes; engines must stop promptly. */
  signal: AbortSignal;
  /** Epoch milliseconds by which the reply must be ready (retries only while time remains). */
  deadline: number;
  /**
   * When set, the reply is streamed: the engine hands over the first reply message's text as the
   * model produces it, each piece final (agent/reply-text.ts), so the pieces add up to `messages[0]`.
   * An engine that has its reply at once hands it over in one piece.
   */
  onText?: (delta: string) => void;
  /**
   * Told of each tool call just before it runs, with the reply's text so far (streamed or not:
   * the same text, and in a stream what the visitor has been shown by then).
   */
  onToolCall?: (name: string, textSoFar: string) => void;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface EngineReply {
  /** The chatbot's reply messages for this turn, in order, at least one, none empty. */
  messages: string[];
  /** Present for model engines. */
  usage?: TokenUsage;
  /** Wall time spent waiting on the model, summed over the tool loop. */
  modelLatencyMs?: number;
  /** Number of tool calls executed in this turn. */
  toolCalls: number;
  /** The sources the reply drew on (absent: none). */
  sources?: SourceRef[];
}

export interface ChatEngine {
  readonly kind: "bedrock" | "openai" | "scripted";
  reply(turn: EngineTurn): Promise<EngineReply>;
}

/** Upper bound on model → tools → model rounds in one turn. */
export const MAX_TOOL_ROUNDS = 4;
