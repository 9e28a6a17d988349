/**
 * `npm run bench -- --knowledge` (section 9 of `npm run bench`): figures for answering from knowledge.
 *
 * 1. Quality over the retrieval set (test/retrieval/demo-shop.ts: the demo shop's documents as
 *    passages, 68 questions, most paraphrased): recall@5 and MRR for lexical (BM25), semantic
 *    (embeddings) and hybrid (both, fused) retrieval, as a turn runs them. The embeddings are the
 *    local stand-ins' concept model (WordNet senses, test/fakes/concept-embedding.ts), not Titan:
 *    the semantic and hybrid figures measure that model, a floor for what Titan would give.
 * 2. Retrieval time at 1,000, 10,000 and 100,000 passages (synthetic: texts drawn from a vocabulary
 *    with a Zipf law, random unit vectors of 256 dimensions): p50 / p95 of one search (both rankings
 *    and the fusion), the index's build time and memory, and the bytes a cold instance reads.
 * 3. A turn's added latency on this machine: the question embedded through the real Bedrock SDK
 *    (InvokeModel, HTTP/2) against the local stand-in, plus the search over the demo shop.
 * 4. Cost per million turns, with the formula.
 */
import { randomUUID } from "node:crypto";
import { createBedrockClient } from "#functions/agent/bedrock-engine";
import { createTitanEmbedder } from "#functions/knowledge/embeddings";
import { createRetriever } from "#functions/knowledge/retriever";
import {
  buildSearchIndex,
  type IndexedPassage,
  passageSearchText,
  type SearchIndex,
  searchPassages,
} from "#functions/knowledge/search-index";
import { startModelStandIn } from "#lib/local/model-stand-in";
import { conceptEmbedding } from "#test/fakes/concept-embedding";
import { conceptBars } from "#test/fakes/knowledge-fixture";
import { demoShopPassages, retrievalSet } from "#test/retrieval/demo-shop";

const DIMENSIONS = 256;
const MODEL = "local-concepts";
const pad = (text: string, width: number) => text.padEnd(width);
const fixed = (value: number, digits = 2) => value.toFixed(digits);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

// ---------- 1. quality ----------

interface Quality {
  recallAt5: number;
  mrr: number;
  paraphraseRecallAt5: number;
}

function quality(index: SearchIndex, only: "lexical" | "semantic" | undefined): Quality {
  let found = 0;
  let reciprocal = 0;
  let paraphrases = 0;
  let paraphrasesFound = 0;
  for (const item of retrievalSet) {
    const ranked = searchPassages(
      index,
      item.question,
      { model: MODEL, vector: conceptEmbedding(item.question, DIMENSIONS) },
      { limit: 5, bars: conceptBars, ...(only ? { only } : {}) },
    );
    const rank = ranked.findIndex((entry) => item.expected.includes(entry.passage.passageId));
    if (rank >= 0) {
      found++;
      reciprocal += 1 / (rank + 1);
    }
    if (item.paraphrase) {
      paraphrases++;
      if (rank >= 0) paraphrasesFound++;
    }
  }
  return {
    recallAt5: found / retrievalSet.length,
    mrr: reciprocal / retrievalSet.length,
    paraphraseRecallAt5: paraphrasesFound / paraphrases,
  };
}

export function measureQuality(): Record<"lexical" | "semantic" | "hybrid", Quality> {
  const vectors = demoShopPassages.map((passage) =>
    Float32Array.from(conceptEmbedding(passageSearchText(passage), DIMENSIONS)),
  );
  const index = buildSearchIndex(demoShopPassages, { model: MODEL, dimensions: DIMENSIONS, vectors });
  return {
    lexical: quality(index, "lexical"),
    semantic: quality(index, "semantic"),
    hybrid: quality(index, undefined),
  };
}

// ---------- 2. time at scale ----------

/** A deterministic generator (LCG), so runs compare. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const vocabulary = Array.from({ length: 8_000 }, (_, i) => `w${i.toString(36)}x`);

function unitVector(values: Float32Array): Float32Array {
  let norm = 0;
  for (const value of values) norm += value * value;
  return values.map((value) => value / Math.sqrt(norm));
}

/** Vectors with structure, as embeddings have: topics (centroids) and passages scattered around them. */
function centroids(next: () => number): Float32Array[] {
  return Array.from({ length: 400 }, () =>
    unitVector(Float32Array.from({ length: DIMENSIONS }, () => next() - 0.5)),
  );
}

function near(vector: Float32Array, spread: number, next: () => number): Float32Array {
  return unitVector(Float32Array.from(vector, (value) => value + spread * (next() - 0.5)));
}

function syntheticPassages(
  count: number,
  next: () => number,
): { passages: IndexedPassage[]; vectors: Float32Array[] } {
  const topics = centroids(next);
  // Zipf-like word choice: a few words are common, most rare (as in real text).
  const word = () => vocabulary[Math.floor(vocabulary.length * next() ** 3)] as string;
  const passages: IndexedPassage[] = [];
  const vectors: Float32Array[] = [];
  for (let i = 0; i < count; i++) {
    const words = Array.from({ length: 60 + Math.floor(next() * 60) }, word);
    passages.push({
      passageId: `p${i}`,
      sourceId: `s${Math.floor(i / 200)}`,
      sourceTitle: `Source ${Math.floor(i / 200)}`,
      titlePath: [`Section ${i % 50}`],
      text: words.join(" "),
    });
    vectors.push(near(topics[Math.floor(next() * topics.length)] as Float32Array, 0.15, next));
  }
  return { passages, vectors };
}

export interface ScaleRow {
  passages: number;
  buildMs: number;
  heapMb: number;
  storedMb: number;
  parseMs: number;
  p50: number;
  p95: number;
  /** Share of searches whose semantic top 5 equals the exact (float, every vector) top 5. */
  exactTop5: number;
}

export function measureScale(sizes: readonly number[] = [1_000, 10_000, 100_000]): ScaleRow[] {
  const rows: ScaleRow[] = [];
  for (const size of sizes) {
    const next = random(size);
    const { passages, vectors } = syntheticPassages(size, next);
    // What a cold instance reads: the passages with their vectors as stored (JSON, int8 as base64).
    const stored = JSON.stringify({
      passages,
      vectors: vectors.map((vector) =>
        Buffer.from(Int8Array.from(vector, (value) => Math.round(value * 127 * 4)).buffer).toString("base64"),
      ),
    });
    const parseStarted = performance.now();
    JSON.parse(stored);
    const parseMs = performance.now() - parseStarted;
    const started = performance.now();
    const index = buildSearchIndex(passages, { model: MODEL, dimensions: DIMENSIONS, vectors });
    const buildMs = performance.now() - started;
    // The index's arrays (postings, lengths, int8 rows, scales, signs); the passages' texts come on top.
    const arrayBytes =
      index.lexical.postings.reduce(
        (sum, list) => sum + list.passages.byteLength + list.frequencies.byteLength,
        0,
      ) +
      index.lexical.lengths.byteLength +
      (index.vectors
        ? index.vectors.values.byteLength + index.vectors.scales.byteLength + index.vectors.signs.byteLength
        : 0);
    const heapMb = arrayBytes / 2 ** 20;
    const times: number[] = [];
    let agreeing = 0;
    let compared = 0;
    for (let i = 0; i < 120; i++) {
      const words = Array.from({ length: 5 }, () => vocabulary[Math.floor(vocabulary.length * next() ** 2)]);
      // A question near one of the passages, as a real question is near its answer.
      const query = near(vectors[Math.floor(next() * vectors.length)] as Float32Array, 0.12, next);
      const t = performance.now();
      searchPassages(
        index,
        words.join(" "),
        { model: MODEL, vector: query },
        { limit: 5, bars: conceptBars },
      );
      const elapsed = performance.now() - t;
      if (i >= 20) times.push(elapsed); // the first searches warm the JIT
      if (i % 6 === 0) {
        const approximate = searchPassages(
          index,
          "",
          { model: MODEL, vector: query },
          { limit: 5, bars: { confident: 2, relevant: -2 }, only: "semantic" },
        ).map((entry) => entry.passage.passageId);
        const exact = vectors
          .map((vector, row) => ({
            row,
            similarity: vector.reduce((sum, value, d) => sum + value * (query[d] as number), 0),
          }))
          .sort((a, b) => b.similarity - a.similarity)
          .slice(0, 5)
          .map(({ row }) => `p${row}`);
        compared++;
        if (exact.every((id, position) => approximate[position] === id)) agreeing++;
      }
    }
    rows.push({
      passages: size,
      buildMs,
      heapMb,
      storedMb: Buffer.byteLength(stored) / 2 ** 20,
      parseMs,
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      exactTop5: agreeing / compared,
    });
    void index;
  }
  return rows;
}

// ---------- 3. a turn's added latency ----------

export async function measureTurnRetrieval(): Promise<{
  embedP50: number;
  embedP95: number;
  totalP50: number;
  totalP95: number;
}> {
  const models = await startModelStandIn();
  try {
    const client = createBedrockClient({
      region: "us-east-1",
      endpoint: models.endpoint,
      credentials: { accessKeyId: "bench", secretAccessKey: "bench" },
    });
    const embedder = createTitanEmbedder({ client, bars: conceptBars });
    const retriever = createRetriever(async (_org, _bot, version) => ({
      version,
      passages: demoShopPassages,
    }));
    const organizationId = randomUUID();
    const ask = (question: string) =>
      retriever.retrieve({ organizationId, chatbotId: "demo", version: 1, question, embedder });
    await ask("warm up"); // loads and embeds the passages once, as a new instance does
    const embeds: number[] = [];
    const totals: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (const item of retrievalSet) {
        const result = await ask(item.question);
        embeds.push(result.timings.embedMs);
        totals.push(result.timings.embedMs + result.timings.searchMs);
      }
    }
    return {
      embedP50: percentile(embeds, 50),
      embedP95: percentile(embeds, 95),
      totalP50: percentile(totals, 50),
      totalP95: percentile(totals, 95),
    };
  } finally {
    await models.close();
  }
}

// ---------- 4. cost ----------

/** us-east-1 list prices (the same date as bin/bench.ts's). */
const prices = {
  titanPerMillionTokens: 0.02,
  lambdaArmGbSecond: 0.0000133334,
  writeRequestUnit: 0.625 / 1e6,
  s3GetPerThousand: 0.0004,
  s3VectorsQueryPerMillion: 2.5,
  s3VectorsPerTbProcessed: 0.004,
};

export function costPerMillionTurns(searchMs: number, gapShare: number): { lines: string[]; total: number } {
  const questionTokens = 20;
  const embedding = (questionTokens * prices.titanPerMillionTokens) / 1e6; // per turn
  const searchCompute = (searchMs / 1000) * 1 * prices.lambdaArmGbSecond; // 1024 MB
  const gap = gapShare * prices.writeRequestUnit;
  const total = (embedding + searchCompute + gap) * 1e6;
  const s3Vectors =
    prices.s3VectorsQueryPerMillion + ((100_000 * 1_100) / 1e12) * prices.s3VectorsPerTbProcessed * 1e6;
  return {
    total,
    lines: [
      `question's embedding: ${questionTokens} tokens × $${prices.titanPerMillionTokens} per million tokens = $${fixed(embedding * 1e6)}`,
      `search's compute: ${fixed(searchMs)} ms × 1 GB (1024 MB) × $${prices.lambdaArmGbSecond} per GB-s = $${fixed(searchCompute * 1e6)}`,
      `gap record: ${Math.round(gapShare * 100)} % of turns × 1 WRU × $0.625 per million = $${fixed(gap * 1e6)}`,
      `chatbot read: 1 GetItem of the item instead of a Query of the whole partition (≈ 1 RRU instead of up to ≈ 1,000): saves up to ≈ $125`,
      `cold loads: one S3 GET per source per instance and knowledge version ($${prices.s3GetPerThousand} per 1,000): amortized, ≪ $0.01`,
      `total added: ≈ $${fixed(total)} per million turns (model tokens for the passages aside: ≈ 5 × 150 tokens of input per turn)`,
      `for comparison, S3 Vectors' QueryVectors: $${prices.s3VectorsQueryPerMillion} per million calls + data processed (100,000 vectors × ≈ 1.1 KB × $${prices.s3VectorsPerTbProcessed} per TB) ≈ $${fixed(s3Vectors)}, before any lexical search`,
    ],
  };
}

export async function printKnowledgeFigures(): Promise<void> {
  console.log(
    `\n9. Answering from knowledge\n\nRetrieval quality over the retrieval set (${retrievalSet.length} questions, ${retrievalSet.filter((item) => item.paraphrase).length} paraphrased, ${demoShopPassages.length} passages of the demo shop's documents; embeddings: the local concept model, not Titan)\n`,
  );
  console.log(`${pad("retrieval", 12)}${pad("recall@5", 11)}${pad("MRR", 8)}recall@5 of paraphrases`);
  for (const [name, figures] of Object.entries(measureQuality())) {
    console.log(
      `${pad(name, 12)}${pad(fixed(figures.recallAt5), 11)}${pad(fixed(figures.mrr), 8)}${fixed(figures.paraphraseRecallAt5)}`,
    );
  }
  console.log(
    "\nRetrieval time in the function (one search: BM25 over the question's postings, cosine of the int8 vectors (above 5,000 after a pass over their signs), fusion; 100 searches after 20 to warm up)\n",
  );
  console.log(
    `${pad("passages", 10)}${pad("search p50", 12)}${pad("p95", 10)}${pad("top 5 = exact", 15)}${pad("index build", 13)}${pad("index arrays", 14)}${pad("stored (JSON)", 15)}parse`,
  );
  const scale = measureScale();
  for (const row of scale) {
    console.log(
      `${pad(row.passages.toLocaleString("en"), 10)}${pad(`${fixed(row.p50)} ms`, 12)}${pad(`${fixed(row.p95)} ms`, 10)}${pad(`${fixed(row.exactTop5 * 100, 0)} %`, 15)}${pad(`${fixed(row.buildMs, 0)} ms`, 13)}${pad(`${fixed(row.heapMb, 0)} MB`, 14)}${pad(`${fixed(row.storedMb, 0)} MB`, 15)}${fixed(row.parseMs, 0)} ms`,
    );
  }
  const turn = await measureTurnRetrieval();
  console.log(
    `\nA turn's retrieval on this machine (demo shop, ${demoShopPassages.length} passages, index warm): the question's embedding through the Bedrock SDK against the local stand-in p50 ${fixed(turn.embedP50)} ms, p95 ${fixed(turn.embedP95)} ms; embedding + search p50 ${fixed(turn.totalP50)} ms, p95 ${fixed(turn.totalP95)} ms.`,
  );
  console.log(
    "Table calls a warm turn adds: none (the chatbot's item by GetItem replaces the Query of its partition; tools and knowledge from memory); a turn the knowledge could not answer: + 1 UpdateItem beside the reply's write (no extra round trip). A cold instance or a new version: the tools' and entries' Query beside the GetItem.",
  );
  const biggest = scale.at(-1);
  const cost = costPerMillionTurns(biggest?.p50 ?? 0, 0.2);
  console.log(
    `\nCost per million turns added by retrieval (at ${biggest?.passages.toLocaleString("en")} passages, 20 % of turns gaps):\n`,
  );
  for (const line of cost.lines) console.log(`  ${line}`);
}
