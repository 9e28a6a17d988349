/**
 * A chatbot's knowledge as a turn retrieves it: the search index (knowledge/search-index.ts) of the
 * chatbot's passages, built once per Lambda instance and knowledge version, and kept while the
 * chatbot's item says that version is current. A turn therefore reads nothing that grows with the
 * knowledge: the version comes with the chatbot's item (read anyway), the index from memory; only
 * an instance that has not seen this version yet loads the passages (`KnowledgeLoader`).
 *
 * The question is embedded once per turn, by the chatbot's embedder (knowledge/embeddings.ts),
 * within a short time limit: a question that cannot be embedded in time is searched lexically only,
 * and the turn goes on. Passages that come without vectors (none were made when they were
 * published) are embedded when loaded, each text once per instance.
 */
import { createHash } from "node:crypto";
import type { Embedder } from "#functions/knowledge/embeddings";
import {
  buildSearchIndex,
  type IndexedPassage,
  passageSearchText,
  type RankedPassage,
  type SearchIndex,
  searchPassages,
} from "#functions/knowledge/search-index";
import { describeError, log } from "#functions/log";

/** A chatbot's passages as stored for one knowledge version, with their vectors when they have them. */
export interface LoadedKnowledge {
  version: number;
  passages: IndexedPassage[];
  /** One vector per passage, in order, all from `model`. */
  embeddings?: { model: string; dimensions: number; vectors: Float32Array[] };
}

/** Where a chatbot's passages come from (knowledge/index-store.ts). */
export type KnowledgeLoader = (
  organizationId: string,
  chatbotId: string,
  version: number,
) => Promise<LoadedKnowledge>;

/** Passages a turn puts before the model (and the search route answers) at most. */
export const PASSAGES_PER_TURN = 5;
/** How long a turn waits for its question's embedding before it searches lexically only. */
export const QUESTION_EMBEDDING_TIMEOUT_MS = 1_500;
/** How long embedding the passages of a loaded version may take before the index is built lexical only. */
const PASSAGE_EMBEDDING_TIMEOUT_MS = 10_000;
/** Vectors of passage texts kept per instance, so a new knowledge version embeds only what is new. */
const PASSAGE_VECTOR_CACHE = 5_000;
/** Indexes kept per instance (an instance serves the chatbots of every organization). */
const INDEXES_KEPT = 50;

export interface RetrievalRequest {
  organizationId: string;
  chatbotId: string;
  /** The chatbot item's knowledge version (0: none published). */
  version: number;
  question: string;
  embedder: Embedder | undefined;
  limit?: number;
  signal?: AbortSignal;
  /** Passages already read for this version (a cold instance reads them beside the chatbot). */
  preloaded?: LoadedKnowledge;
}

export interface Retrieval {
  passages: RankedPassage[];
  /** The best passage clears a bar that says it answers the question. */
  confident: boolean;
  /** The question's embedding took part (false: lexical only). */
  semantic: boolean;
  /** The chatbot has passages at all. */
  hasKnowledge: boolean;
  /** Milliseconds spent: loading (0 when cached), embedding the question, searching. */
  timings: { loadMs: number; embedMs: number; searchMs: number };
  /** The question's embedding, when one was made. */
  questionVector?: { model: string; values: Float32Array };
}

interface CachedIndex {
  version: number;
  model: string | undefined;
  index: SearchIndex;
  /** The passages could not be embedded at this time: lexical only until a minute later. */
  embeddingFailedAt?: number;
}

/** How long an index whose passages could not be embedded serves lexically before trying again. */
const EMBEDDING_RETRY_MS = 60_000;

export interface Retriever {
  retrieve(request: RetrievalRequest): Promise<Retrieval>;
  /** The index is in memory for this version: nothing to read. */
  has(organizationId: string, chatbotId: string, version?: number): boolean;
}

export function createRetriever(
  load: KnowledgeLoader,
  clock: () => number = () => performance.now(),
): Retriever {
  const indexes = new Map<string, CachedIndex>();
  const building = new Map<string, Promise<CachedIndex>>();
  const passageVectors = new Map<string, Float32Array>();

  const keyOf = (organizationId: string, chatbotId: string) => `${organizationId}/${chatbotId}`;

  async function embedPassages(
    passages: readonly IndexedPassage[],
    embedder: Embedder,
  ): Promise<Float32Array[]> {
    const texts = passages.map(passageSearchText);
    const keys = texts.map(
      (text) => `${embedder.model}:${createHash("sha256").update(text).digest("base64")}`,
    );
    const missing = [...new Set(keys.filter((key) => !passageVectors.has(key)))];
    if (missing.length > 0) {
      const missingTexts = missing.map((key) => texts[keys.indexOf(key)] as string);
      const vectors = await embedder.embed(missingTexts, AbortSignal.timeout(PASSAGE_EMBEDDING_TIMEOUT_MS));
      missing.forEach((key, position) => {
        passageVectors.set(key, vectors[position] as Float32Array);
      });
      while (passageVectors.size > PASSAGE_VECTOR_CACHE) {
        const oldest = passageVectors.keys().next().value;
        if (oldest === undefined) break;
        passageVectors.delete(oldest);
      }
    }
    return keys.map((key) => passageVectors.get(key) as Float32Array);
  }

  async function build(request: RetrievalRequest): Promise<CachedIndex> {
    const loaded =
      request.preloaded?.version === request.version
        ? request.preloaded
        : await load(request.organizationId, request.chatbotId, request.version);
    const { embedder } = request;
    let embeddings = loaded.embeddings;
    let embeddingFailedAt: number | undefined;
    if (embedder && embeddings?.model !== embedder.model && loaded.passages.length > 0) {
      try {
        embeddings = {
          model: embedder.model,
          dimensions: embedder.dimensions,
          vectors: await embedPassages(loaded.passages, embedder),
        };
        if (embeddings.vectors[0]) embeddings.dimensions = embeddings.vectors[0].length;
      } catch (error) {
        // Lexical retrieval still works; the next version (or instance) tries again.
        log.warn("could not embed the chatbot's passages; retrieving lexically", describeError(error));
        embeddings = undefined;
        embeddingFailedAt = Date.now();
      }
    }
    return {
      version: loaded.version,
      model: embeddings?.model,
      index: buildSearchIndex(loaded.passages, embeddings),
      ...(embeddingFailedAt === undefined ? {} : { embeddingFailedAt }),
    };
  }

  async function indexFor(request: RetrievalRequest): Promise<{ cached: CachedIndex; loadMs: number }> {
    const key = keyOf(request.organizationId, request.chatbotId);
    const found = indexes.get(key);
    const wantedModel = request.embedder?.model;
    const usable =
      found?.version === request.version &&
      (found.model === wantedModel ||
        !wantedModel ||
        (found.embeddingFailedAt !== undefined && Date.now() - found.embeddingFailedAt < EMBEDDING_RETRY_MS));
    if (found && usable) {
      // Most recently used last.
      indexes.delete(key);
      indexes.set(key, found);
      return { cached: found, loadMs: 0 };
    }
    const started = clock();
    const flightKey = `${key}#${request.version}#${wantedModel ?? ""}`;
    let flight = building.get(flightKey);
    if (!flight) {
      flight = build(request).finally(() => building.delete(flightKey));
      building.set(flightKey, flight);
    }
    const cached = await flight;
    indexes.delete(key);
    indexes.set(key, cached);
    while (indexes.size > INDEXES_KEPT) {
      const oldest = indexes.keys().next().value;
      if (oldest === undefined) break;
      indexes.delete(oldest);
    }
    return { cached, loadMs: clock() - started };
  }

  async function embedQuestion(
    embedder: Embedder,
    question: string,
    signal: AbortSignal | undefined,
  ): Promise<Float32Array | undefined> {
    const timeout = AbortSignal.timeout(QUESTION_EMBEDDING_TIMEOUT_MS);
    try {
      const [vector] = await embedder.embed(
        [question],
        signal ? AbortSignal.any([signal, timeout]) : timeout,
      );
      return vector;
    } catch (error) {
      log.warn("could not embed the question; retrieving lexically", describeError(error));
      return undefined;
    }
  }

  return {
    has(organizationId, chatbotId, version) {
      const found = indexes.get(keyOf(organizationId, chatbotId));
      return found !== undefined && (version === undefined || found.version === version);
    },
    async retrieve(request) {
      const none: Retrieval = {
        passages: [],
        confident: false,
        semantic: false,
        hasKnowledge: false,
        timings: { loadMs: 0, embedMs: 0, searchMs: 0 },
      };
      if (request.version <= 0 && !request.preloaded?.passages.length) {
        // Nothing published: remembered, so the next turns read nothing for it either.
        indexes.set(keyOf(request.organizationId, request.chatbotId), {
          version: request.version,
          model: undefined,
          index: buildSearchIndex([]),
        });
        return none;
      }
      const question = request.question.trim();
      const embedStarted = clock();
      // The question's embedding and the index (from memory, or loaded) at the same time.
      const [vector, { cached, loadMs }] = await Promise.all([
        request.embedder && question ? embedQuestion(request.embedder, question, request.signal) : undefined,
        indexFor(request),
      ]);
      const embedMs = request.embedder && question ? clock() - embedStarted : 0;
      if (cached.index.passages.length === 0 || !question) {
        return {
          ...none,
          hasKnowledge: cached.index.passages.length > 0,
          timings: { loadMs, embedMs, searchMs: 0 },
        };
      }
      const searchStarted = clock();
      const passages = searchPassages(
        cached.index,
        question,
        vector && request.embedder ? { model: request.embedder.model, vector } : undefined,
        {
          limit: request.limit ?? PASSAGES_PER_TURN,
          bars: request.embedder?.bars ?? { confident: 1.1, relevant: 1.1 },
        },
      );
      return {
        passages,
        confident: passages.some((passage) => passage.confident),
        semantic: vector !== undefined && cached.index.vectors !== undefined,
        hasKnowledge: true,
        timings: { loadMs, embedMs, searchMs: clock() - searchStarted },
        ...(vector && request.embedder
          ? { questionVector: { model: request.embedder.model, values: vector } }
          : {}),
      };
    },
  };
}
