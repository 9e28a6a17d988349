/**
 * Embeddings: the vectors semantic retrieval compares. Two wire protocols, each with its real client:
 *
 * - Amazon Bedrock InvokeModel (the AWS SDK) with Amazon Titan Text Embeddings V2
 *   (`amazon.titan-embed-text-v2:0`, 256 dimensions, normalized): one text per call, as the model
 *   takes it. The embedder of scripted and Bedrock chatbots.
 * - An OpenAI-compatible `POST {base}/embeddings` (the guarded outbound client, net/outbound-http.ts,
 *   as every model call): many texts per call. The embedder of an `openai` chatbot, on that
 *   chatbot's own server and key.
 *
 * Passages are embedded when they are published (ingestion), a question once per turn. A turn whose
 * question cannot be embedded in time retrieves lexically only (knowledge/retriever.ts): it never
 * fails for it.
 */
import { type BedrockRuntimeClient, InvokeModelCommand } from "@aws-sdk/client-bedrock-runtime";
import { TITAN_DIMENSIONS, TITAN_V2 } from "#functions/knowledge/models";
import type { SimilarityBars } from "#functions/knowledge/search-index";
import type { OutboundSend } from "#functions/net/outbound-http";

export interface Embedder {
  /** Names the vector space: vectors of different models are never compared. */
  readonly model: string;
  readonly dimensions: number;
  /** When a similarity in this model's space counts as relevant or as an answer. */
  readonly bars: SimilarityBars;
  /** One vector per text, in order. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

export { TITAN_DIMENSIONS, TITAN_V2 };

/** Titan V2 takes up to 50,000 characters; passages are far shorter, questions too. */
const TITAN_MAX_CHARACTERS = 50_000;
/** Calls in flight at once when many passages are embedded. */
const CONCURRENCY = 8;

/**
 * Starting bars per model: where paraphrases and unrelated texts fall for that model. Configuration
 * (EMBEDDING_SIMILARITY_BARS) overrides them; the local runtime's stand-in model sets its own.
 */
const defaultBars: Record<string, SimilarityBars> = {
  [TITAN_V2]: { confident: 0.55, relevant: 0.35 },
  "text-embedding-3-small": { confident: 0.5, relevant: 0.3 },
  "text-embedding-3-large": { confident: 0.5, relevant: 0.3 },
};
const fallbackBars: SimilarityBars = { confident: 0.55, relevant: 0.35 };

/** The bars for a model: `confident,relevant` from configuration if given, else the model's defaults. */
export function similarityBars(model: string, configured?: string): SimilarityBars {
  const [confident, relevant] = (configured ?? "").split(",").map(Number);
  if (
    confident !== undefined &&
    relevant !== undefined &&
    confident > 0 &&
    relevant > 0 &&
    relevant <= confident
  )
    return { confident, relevant };
  return defaultBars[model] ?? fallbackBars;
}

export class EmbeddingError extends Error {
  override readonly name = "EmbeddingError";
}

export function createTitanEmbedder(options: {
  client: BedrockRuntimeClient;
  model?: string;
  dimensions?: number;
  bars?: SimilarityBars;
}): Embedder {
  const model = options.model ?? TITAN_V2;
  const dimensions = options.dimensions ?? TITAN_DIMENSIONS;
  const one = async (text: string, signal?: AbortSignal): Promise<Float32Array> => {
    const output = await options.client.send(
      new InvokeModelCommand({
        modelId: model,
        contentType: "application/json",
        accept: "application/json",
        body: JSON.stringify({
          inputText: text.slice(0, TITAN_MAX_CHARACTERS),
          dimensions,
          normalize: true,
          embeddingTypes: ["float"],
        }),
      }),
      signal ? { abortSignal: signal } : {},
    );
    const answer = JSON.parse(new TextDecoder().decode(output.body)) as {
      embedding?: unknown;
      embeddingsByType?: { float?: unknown };
    };
    return vectorOf(answer.embeddingsByType?.float ?? answer.embedding, dimensions);
  };
  return {
    model,
    dimensions,
    bars: options.bars ?? similarityBars(model),
    embed: (texts, signal) => inBatches(texts, CONCURRENCY, (text) => one(text, signal)),
  };
}

/** Texts per `/embeddings` request (OpenAI accepts up to 2,048 inputs; smaller servers fewer). */
const OPENAI_BATCH = 64;
/** A batch's answer: 64 vectors of up to 3,072 floats as JSON text, with room. */
const MAX_EMBEDDINGS_BYTES = 16 * 1024 * 1024;
/** A request without a caller's signal is given up after this long. */
const EMBEDDINGS_TIMEOUT_MS = 30_000;

export function createOpenAiEmbedder(options: {
  /** Up to and including the version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Empty: send no Authorization header (a local server). */
  apiKey: string;
  model: string;
  /** Asked of models that can shorten their vectors (text-embedding-3-*); else whatever the model gives. */
  dimensions?: number;
  bars?: SimilarityBars;
  /** The guarded outbound client (net/outbound-http.ts): the address guard judges every connection. */
  send: OutboundSend;
}): Embedder {
  const url = new URL(`${options.baseUrl.replace(/\/+$/, "")}/embeddings`);
  let dimensions = options.dimensions ?? 0;
  const batch = async (texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> => {
    const response = await options.send({
      url,
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: options.model,
        input: texts,
        encoding_format: "float",
        ...(options.dimensions ? { dimensions: options.dimensions } : {}),
      }),
      signal: signal ?? AbortSignal.timeout(EMBEDDINGS_TIMEOUT_MS),
    });
    if (response.status < 200 || response.status > 299) {
      response.discard();
      throw new EmbeddingError(`embeddings: HTTP ${response.status}`);
    }
    let answer: { data?: { index?: number; embedding?: unknown }[] };
    try {
      answer = JSON.parse(new TextDecoder().decode(await response.read(MAX_EMBEDDINGS_BYTES)));
    } catch (error) {
      if (error instanceof SyntaxError) throw new EmbeddingError("embeddings: the answer is not JSON");
      throw error;
    }
    const data = answer.data ?? [];
    if (data.length !== texts.length)
      throw new EmbeddingError(`embeddings: ${data.length} vectors for ${texts.length} texts`);
    const ordered = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return ordered.map((item) => {
      const vector = vectorOf(item.embedding, dimensions || undefined);
      dimensions ||= vector.length;
      return vector;
    });
  };
  return {
    model: options.model,
    get dimensions() {
      return dimensions;
    },
    bars: options.bars ?? similarityBars(options.model),
    async embed(texts, signal) {
      const chunks: (readonly string[])[] = [];
      for (let start = 0; start < texts.length; start += OPENAI_BATCH)
        chunks.push(texts.slice(start, start + OPENAI_BATCH));
      return (await inBatches(chunks, 2, (chunk) => batch(chunk, signal))).flat();
    },
  };
}

function vectorOf(value: unknown, dimensions: number | undefined): Float32Array {
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((item) => typeof item === "number" && Number.isFinite(item))
  )
    throw new EmbeddingError("embeddings: the answer holds no vector");
  if (dimensions !== undefined && value.length !== dimensions)
    throw new EmbeddingError(`embeddings: a vector of ${value.length} dimensions, not ${dimensions}`);
  return Float32Array.from(value as number[]);
}

/** Maps `items` with at most `concurrency` calls in flight, results in order. */
async function inBatches<T, R>(
  items: readonly T[],
  concurrency: number,
  map: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const position = next++;
      results[position] = await map(items[position] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
