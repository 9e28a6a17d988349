/**
 * Hybrid retrieval over a chatbot's passages, in memory: lexical (BM25 over an inverted index, the
 * tokenizer and weights of agent/retrieval.ts) and semantic (cosine similarity of embeddings,
 * quantized to 8 bits), fused by reciprocal rank fusion. Pure and deterministic: the same passages,
 * vectors and question always give the same ranking; ties go to the passage that comes first.
 *
 * Built once per chatbot and knowledge version (knowledge/retriever.ts caches it per instance), so
 * a question costs one pass over the postings of its own terms and one pass over the vectors; no
 * table or object read.
 */
import {
  BM25_B,
  BM25_K1,
  FULL_BAR_ENTRIES,
  MIN_COVERAGE,
  MIN_SCORE,
  TITLE_WEIGHT,
  tokenize,
} from "#functions/agent/retrieval";
import type { Passage } from "#functions/knowledge/passage";

/** A passage as the index holds it: with the title of the source it came from. */
export interface IndexedPassage extends Passage {
  sourceTitle: string;
}

/** Candidates each ranking contributes to the fusion. */
export const CANDIDATES = 20;
/** Reciprocal rank fusion's constant (Cormack et al.): rank r contributes 1 / (RRF_K + r). */
export const RRF_K = 60;
/** A passage whose lexical match covers at least this idf-weighted share of the question is relevant. */
export const RELEVANT_COVERAGE = 0.3;

/** When a semantic match counts: per embedding model, set by configuration (knowledge/embeddings.ts). */
export interface SimilarityBars {
  /** Cosine similarity at which a passage answers the question (the scripted engine answers with it). */
  confident: number;
  /** Cosine similarity at which a passage is worth showing the model. */
  relevant: number;
}

interface LexicalIndex {
  terms: Map<string, number>;
  /** Per term: passage positions and weighted term frequencies, in passage order. */
  postings: { passages: Uint32Array; frequencies: Float32Array }[];
  lengths: Float32Array;
  averageLength: number;
}

export interface VectorIndex {
  /** The embedding model the vectors come from; a question embedded by another model is not compared. */
  model: string;
  dimensions: number;
  /** Row-major, one row of `dimensions` per passage, each row scaled to the int8 range. */
  values: Int8Array;
  /** Per passage: the factor that turns its row back into the (unit) vector. */
  scales: Float32Array;
  /** Per passage, the signs of its components, 32 to a word: the first, coarse pass of a large index. */
  signs: Uint32Array;
}

export interface SearchIndex {
  passages: readonly IndexedPassage[];
  lexical: LexicalIndex;
  vectors?: VectorIndex;
}

export interface RankedPassage {
  passage: IndexedPassage;
  /** Reciprocal rank fusion, scaled so that first in both rankings is 1. */
  score: number;
  lexical?: { score: number; coverage: number; rank: number };
  semantic?: { similarity: number; rank: number };
  /** Clears a bar that says it answers the question (a lexical or a semantic one). */
  confident: boolean;
}

/** The text of a passage that is matched and embedded: its headings (a Q/A's question) and its text. */
export function passageSearchText(passage: Pick<Passage, "titlePath" | "text">): string {
  return [...passage.titlePath, passage.text].join("\n");
}

/**
 * `tokenize` with its per-word work (folding, stop words, stemming) done once per distinct word of a
 * build: a knowledge base repeats its words, so most words come from the memo.
 */
function memoTokenizer(): (text: string) => string[] {
  const memo = new Map<string, string | null>();
  return (text) => {
    const terms: string[] = [];
    for (const word of text.split(/\s+/)) {
      if (!word) continue;
      let term = memo.get(word);
      if (term === undefined) {
        const tokens = tokenize(word);
        // A "word" that folds into several tokens (e-mail, 17:00) is tokenized in full each time.
        term = tokens.length === 1 ? (tokens[0] as string) : tokens.length === 0 ? null : tokens.join(" ");
        memo.set(word, term);
      }
      if (term === null) continue;
      if (term.includes(" ")) terms.push(...term.split(" "));
      else terms.push(term);
    }
    return terms;
  };
}

export function buildSearchIndex(
  passages: readonly IndexedPassage[],
  embeddings?: { model: string; dimensions: number; vectors: readonly (Float32Array | number[])[] },
): SearchIndex {
  const memoTokenize = memoTokenizer();
  const terms = new Map<string, number>();
  const building: { passages: number[]; frequencies: number[] }[] = [];
  const lengths = new Float32Array(passages.length);
  passages.forEach((passage, position) => {
    const fields: [string, number][] = [
      [[passage.sourceTitle, ...passage.titlePath].join(" "), TITLE_WEIGHT],
      [passage.text, 1],
    ];
    const frequencies = new Map<string, number>();
    let length = 0;
    for (const [text, weight] of fields) {
      const tokens = memoTokenize(text);
      length += weight * tokens.length;
      for (const token of tokens) frequencies.set(token, (frequencies.get(token) ?? 0) + weight);
    }
    lengths[position] = length;
    for (const [term, frequency] of frequencies) {
      let id = terms.get(term);
      if (id === undefined) {
        id = building.length;
        terms.set(term, id);
        building.push({ passages: [], frequencies: [] });
      }
      const list = building[id] as { passages: number[]; frequencies: number[] };
      list.passages.push(position);
      list.frequencies.push(frequency);
    }
  });
  const total = lengths.reduce((sum, length) => sum + length, 0);
  const lexical: LexicalIndex = {
    terms,
    postings: building.map((list) => ({
      passages: Uint32Array.from(list.passages),
      frequencies: Float32Array.from(list.frequencies),
    })),
    lengths,
    averageLength: passages.length ? total / passages.length : 0,
  };
  if (!embeddings || embeddings.vectors.length !== passages.length || passages.length === 0) {
    return { passages, lexical };
  }
  return {
    passages,
    lexical,
    vectors: quantize(embeddings.model, embeddings.dimensions, embeddings.vectors),
  };
}

/** Unit vectors → one int8 row each (scaled by its largest component), the scale kept beside it. */
export function quantize(
  model: string,
  dimensions: number,
  vectors: readonly (Float32Array | number[])[],
): VectorIndex {
  const values = new Int8Array(vectors.length * dimensions);
  const scales = new Float32Array(vectors.length);
  const words = Math.ceil(dimensions / 32);
  const signs = new Uint32Array(vectors.length * words);
  vectors.forEach((vector, row) => {
    if (vector.length !== dimensions)
      throw new Error(`a vector of ${vector.length} dimensions, not ${dimensions}`);
    let norm = 0;
    let largest = 0;
    for (let i = 0; i < dimensions; i++) {
      const value = vector[i] as number;
      norm += value * value;
      largest = Math.max(largest, Math.abs(value));
    }
    norm = Math.sqrt(norm);
    if (norm === 0 || largest === 0) return;
    const factor = 127 / largest;
    for (let i = 0; i < dimensions; i++) {
      const value = vector[i] as number;
      values[row * dimensions + i] = Math.round(value * factor);
      const word = row * words + (i >>> 5);
      if (value > 0) signs[word] = ((signs[word] as number) | (1 << (i & 31))) >>> 0;
    }
    // row · q × scale = (vector / norm) · q
    scales[row] = 1 / (factor * norm);
  });
  return { model, dimensions, values, scales, signs };
}

/** A question's embedding, with the model that made it. */
export interface QueryVector {
  model: string;
  vector: Float32Array | number[];
}

export interface SearchOptions {
  /** Passages to return at most. */
  limit: number;
  bars: SimilarityBars;
  /** One ranking alone (the bench compares them); turns use both. */
  only?: "lexical" | "semantic";
}

/**
 * The passages for a question, best first: the union of the lexical and the semantic candidates,
 * fused by reciprocal rank, keeping those that are relevant (a lexical match covering enough of the
 * question, or a semantic one above the relevance bar).
 */
export function searchPassages(
  index: SearchIndex,
  question: string,
  query: QueryVector | undefined,
  options: SearchOptions,
): RankedPassage[] {
  const lexical = options.only === "semantic" ? [] : lexicalCandidates(index, question);
  const semantic =
    options.only !== "lexical" &&
    query &&
    index.vectors &&
    query.model === index.vectors.model &&
    query.vector.length === index.vectors.dimensions
      ? semanticCandidates(index.vectors, query.vector)
      : [];
  const fused = new Map<number, RankedPassage>();
  const entry = (position: number): RankedPassage => {
    let found = fused.get(position);
    if (!found) {
      found = { passage: index.passages[position] as IndexedPassage, score: 0, confident: false };
      fused.set(position, found);
    }
    return found;
  };
  const minScore = MIN_SCORE * Math.min(1, index.passages.length / FULL_BAR_ENTRIES);
  lexical.forEach((candidate, rank) => {
    const ranked = entry(candidate.position);
    ranked.lexical = { score: candidate.score, coverage: candidate.coverage, rank: rank + 1 };
    ranked.score += 1 / (RRF_K + rank + 1);
    if (candidate.coverage > MIN_COVERAGE && candidate.score >= minScore) ranked.confident = true;
  });
  semantic.forEach((candidate, rank) => {
    const ranked = entry(candidate.position);
    ranked.semantic = { similarity: candidate.similarity, rank: rank + 1 };
    ranked.score += 1 / (RRF_K + rank + 1);
    if (candidate.similarity >= options.bars.confident) ranked.confident = true;
  });
  const best = 2 / (RRF_K + 1);
  return [...fused.entries()]
    .filter(
      ([, ranked]) =>
        ranked.confident ||
        (ranked.lexical?.coverage ?? 0) >= RELEVANT_COVERAGE ||
        (ranked.semantic?.similarity ?? -1) >= options.bars.relevant,
    )
    .sort(([a, left], [b, right]) => right.score - left.score || a - b)
    .slice(0, options.limit)
    .map(([, ranked]) => ({ ...ranked, score: ranked.score / best }));
}

interface LexicalCandidate {
  position: number;
  score: number;
  coverage: number;
}

/** Per-instance scratch arrays of the lexical search, grown to the largest index searched. */
let scratch: { scores: Float64Array; matched: Float64Array; touched: Uint32Array } | undefined;

/**
 * BM25 over the postings of the question's terms, accumulated in flat arrays (no allocation per
 * posting); the CANDIDATES best, ties by position.
 */
function lexicalCandidates(index: SearchIndex, question: string): LexicalCandidate[] {
  const { lexical } = index;
  const count = index.passages.length;
  if (count === 0) return [];
  const termsOfQuestion = [...new Set(tokenize(question))];
  const weights = termsOfQuestion.map((term) => {
    const id = lexical.terms.get(term);
    const frequency = id === undefined ? 0 : (lexical.postings[id]?.passages.length ?? 0);
    return Math.log(1 + (count - frequency + 0.5) / (frequency + 0.5));
  });
  const totalWeight = weights.reduce((sum, weight) => sum + weight, 0);
  if (!scratch || scratch.scores.length < count) {
    scratch = {
      scores: new Float64Array(count),
      matched: new Float64Array(count),
      touched: new Uint32Array(count),
    };
  }
  const { scores, matched, touched } = scratch;
  let touchedCount = 0;
  const k1 = BM25_K1;
  const lengthFactor = BM25_B / (lexical.averageLength || 1);
  termsOfQuestion.forEach((term, position) => {
    const id = lexical.terms.get(term);
    if (id === undefined) return;
    const list = lexical.postings[id];
    if (!list) return;
    const weight = weights[position] ?? 0;
    const { passages, frequencies } = list;
    for (let i = 0; i < passages.length; i++) {
      const passage = passages[i] as number;
      const frequency = frequencies[i] as number;
      const norm = k1 * (1 - BM25_B + lengthFactor * (lexical.lengths[passage] as number));
      if (matched[passage] === 0) touched[touchedCount++] = passage;
      scores[passage] = (scores[passage] as number) + (weight * frequency * (k1 + 1)) / (frequency + norm);
      matched[passage] = (matched[passage] as number) + weight;
    }
  });
  // The best CANDIDATES of the touched passages, kept sorted (best first).
  const best: LexicalCandidate[] = [];
  let floor = -Infinity;
  for (let i = 0; i < touchedCount; i++) {
    const position = touched[i] as number;
    const score = scores[position] as number;
    const candidate = {
      position,
      score,
      coverage: totalWeight ? (matched[position] as number) / totalWeight : 0,
    };
    scores[position] = 0;
    matched[position] = 0;
    if (
      best.length === CANDIDATES &&
      (score < floor || (score === floor && position > (best.at(-1) as LexicalCandidate).position))
    )
      continue;
    let at = best.length;
    while (at > 0) {
      const before = best[at - 1] as LexicalCandidate;
      if (before.score > score || (before.score === score && before.position < position)) break;
      at--;
    }
    best.splice(at, 0, candidate);
    if (best.length > CANDIDATES) best.pop();
    floor = (best.at(-1) as LexicalCandidate).score;
  }
  return best;
}

interface SemanticCandidate {
  position: number;
  similarity: number;
}

/** Up to this many vectors are compared exactly, one by one; above it, a coarse pass by signs comes first. */
export const EXACT_SEARCH_LIMIT = 5_000;
/** Rows the coarse pass keeps for the exact comparison: a generous multiple of the candidates. */
export const COARSE_KEEP = 20 * CANDIDATES;

/**
 * The CANDIDATES most similar vectors by cosine. A small index is compared row by row (int8 rows);
 * a large one first by the Hamming distance of the components' signs (32 per word, a popcount each:
 * a small part of the work), keeping the COARSE_KEEP nearest, which are then compared exactly. The
 * sign pass is an approximation: the bench measures how often it changes the top 5.
 */
function semanticCandidates(vectors: VectorIndex, query: Float32Array | number[]): SemanticCandidate[] {
  const { dimensions, scales } = vectors;
  const rows = scales.length;
  const q = Float32Array.from(query);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) norm += (q[i] as number) * (q[i] as number);
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dimensions; i++) q[i] = (q[i] as number) / norm;
  const best = new TopCandidates();
  if (rows <= EXACT_SEARCH_LIMIT) {
    for (let row = 0; row < rows; row++) best.offer(row, similarity(vectors, row, q));
    return best.list;
  }
  for (const row of nearestBySigns(vectors, q)) best.offer(row, similarity(vectors, row, q));
  return best.list;
}

/** Cosine of row `row` with the unit query `q`. */
function similarity(vectors: VectorIndex, row: number, q: Float32Array): number {
  const { dimensions, values } = vectors;
  const offset = row * dimensions;
  let a = 0;
  let b = 0;
  let i = 0;
  for (; i + 1 < dimensions; i += 2) {
    a += (values[offset + i] as number) * (q[i] as number);
    b += (values[offset + i + 1] as number) * (q[i + 1] as number);
  }
  if (i < dimensions) a += (values[offset + i] as number) * (q[i] as number);
  return (a + b) * (vectors.scales[row] as number);
}

/** The rows whose signs differ least from the query's: COARSE_KEEP of them (ties at the edge too, up to twice that). */
function nearestBySigns(vectors: VectorIndex, q: Float32Array): number[] {
  const { dimensions, signs, scales } = vectors;
  const rows = scales.length;
  const words = Math.ceil(dimensions / 32);
  const querySigns = new Uint32Array(words);
  for (let i = 0; i < dimensions; i++) {
    if ((q[i] as number) > 0) querySigns[i >>> 5] = ((querySigns[i >>> 5] as number) | (1 << (i & 31))) >>> 0;
  }
  const distances = new Uint16Array(rows);
  const histogram = new Uint32Array(dimensions + 1);
  for (let row = 0; row < rows; row++) {
    let distance = 0;
    const offset = row * words;
    for (let w = 0; w < words; w++) {
      let x = ((signs[offset + w] as number) ^ (querySigns[w] as number)) >>> 0;
      x -= (x >>> 1) & 0x55555555;
      x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
      x = (x + (x >>> 4)) & 0x0f0f0f0f;
      distance += Math.imul(x, 0x01010101) >>> 24;
    }
    distances[row] = distance;
    histogram[distance] = (histogram[distance] as number) + 1;
  }
  let threshold = 0;
  for (let kept = 0; threshold <= dimensions; threshold++) {
    kept += histogram[threshold] as number;
    if (kept >= COARSE_KEEP) break;
  }
  const chosen: number[] = [];
  for (let row = 0; row < rows && chosen.length < 2 * COARSE_KEEP; row++) {
    if ((distances[row] as number) <= threshold) chosen.push(row);
  }
  return chosen;
}

/** The best CANDIDATES offered so far, kept sorted (best first; ties: the earlier row). */
class TopCandidates {
  readonly list: SemanticCandidate[] = [];
  private floor = -Infinity;
  offer(position: number, similarity: number): void {
    const list = this.list;
    if (list.length === CANDIDATES && similarity <= this.floor) return;
    let at = list.length;
    while (at > 0 && (list[at - 1] as SemanticCandidate).similarity < similarity) at--;
    list.splice(at, 0, { position, similarity });
    if (list.length > CANDIDATES) list.pop();
    this.floor = (list[list.length - 1] as SemanticCandidate).similarity;
  }
}
