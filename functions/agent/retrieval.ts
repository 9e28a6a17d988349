/**
 * Finds the knowledge entry that answers a visitor's question, without a model: BM25 (Okapi, with
 * field weights as in BM25F) over folded, stop-word-free, lightly stemmed tokens. Pure and
 * deterministic: the same entries and question always give the same answer; equal scores go to the
 * entry whose id sorts first.
 *
 * "No answer" is decided by two thresholds on the best entry: it must cover enough of the question's
 * information (the idf-weighted share of the question's terms it contains, unknown terms counting
 * as the rarest), and its BM25 score must be high enough that a single common word cannot carry it.
 */

export type KnowledgeEntry =
  | { id: string; kind: "qa"; question: string; answer: string }
  | { id: string; kind: "snippet"; title?: string; text: string };

/** BM25 term-frequency saturation. */
export const BM25_K1 = 1.2;
/** BM25 length normalisation. */
export const BM25_B = 0.75;
/** A term in a Q/A question or snippet title counts this many times one in the answer or text. */
export const TITLE_WEIGHT = 2;
/**
 * The best entry must contain more than this idf-weighted share of the question's terms: more than
 * half its information, so "do you sell bicycles?" is not answered by "Do you sell gift cards?".
 */
export const MIN_COVERAGE = 0.5;
/** Least BM25 score of the best entry, in a knowledge base of at least FULL_BAR_ENTRIES entries. */
export const MIN_SCORE = 1;
/**
 * Idf, and so every score, shrinks with the number of entries (one entry: ≈ 0.3 per term), so the
 * score bar grows with the knowledge base up to this size; below it, coverage does the deciding.
 */
export const FULL_BAR_ENTRIES = 10;

interface IndexedEntry {
  entry: KnowledgeEntry;
  /** Weighted term frequencies over the entry's fields. */
  frequencies: Map<string, number>;
  /** Weighted length in tokens. */
  length: number;
}

export interface KnowledgeIndex {
  readonly entries: readonly IndexedEntry[];
  /** Number of entries containing each term. */
  readonly documentFrequency: ReadonlyMap<string, number>;
  readonly averageLength: number;
}

export interface RankedEntry {
  entry: KnowledgeEntry;
  score: number;
  /** Idf-weighted share of the query's terms found in the entry, 0–1. */
  coverage: number;
}

export interface KnowledgeAnswer {
  entryId: string;
  text: string;
  score: number;
  coverage: number;
}

export function buildKnowledgeIndex(entries: readonly KnowledgeEntry[]): KnowledgeIndex {
  const indexed = entries.map((entry): IndexedEntry => {
    const fields: [string, number][] =
      entry.kind === "qa"
        ? [
            [entry.question, TITLE_WEIGHT],
            [entry.answer, 1],
          ]
        : [
            [entry.title ?? "", TITLE_WEIGHT],
            [entry.text, 1],
          ];
    const frequencies = new Map<string, number>();
    let length = 0;
    for (const [text, weight] of fields) {
      const tokens = tokenize(text);
      length += weight * tokens.length;
      for (const token of tokens) frequencies.set(token, (frequencies.get(token) ?? 0) + weight);
    }
    return { entry, frequencies, length };
  });
  const documentFrequency = new Map<string, number>();
  for (const { frequencies } of indexed) {
    for (const term of frequencies.keys())
      documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  }
  const totalLength = indexed.reduce((sum, { length }) => sum + length, 0);
  return {
    entries: indexed,
    documentFrequency,
    averageLength: indexed.length ? totalLength / indexed.length : 0,
  };
}

/** Every entry that shares a term with the query, best first (ties by id). */
export function rankEntries(index: KnowledgeIndex, query: string): RankedEntry[] {
  const terms = [...new Set(tokenize(query))];
  const weights = terms.map((term) => idf(index, term));
  const totalWeight = weights.reduce((sum, weight) => sum + weight, 0);
  const ranked: RankedEntry[] = [];
  for (const { entry, frequencies, length } of index.entries) {
    let score = 0;
    let matchedWeight = 0;
    terms.forEach((term, position) => {
      const frequency = frequencies.get(term);
      if (!frequency) return;
      const weight = weights[position] ?? 0;
      const norm = BM25_K1 * (1 - BM25_B + (BM25_B * length) / (index.averageLength || 1));
      score += (weight * frequency * (BM25_K1 + 1)) / (frequency + norm);
      matchedWeight += weight;
    });
    if (score > 0) ranked.push({ entry, score, coverage: totalWeight ? matchedWeight / totalWeight : 0 });
  }
  return ranked.sort((a, b) => b.score - a.score || compareIds(a.entry.id, b.entry.id));
}

/** The best entry's answer if it clears both thresholds; otherwise undefined ("no answer"). */
export function findAnswer(index: KnowledgeIndex, query: string): KnowledgeAnswer | undefined {
  const best = rankEntries(index, query)[0];
  const minScore = MIN_SCORE * Math.min(1, index.entries.length / FULL_BAR_ENTRIES);
  if (!best || best.coverage <= MIN_COVERAGE || best.score < minScore) return undefined;
  const text = best.entry.kind === "qa" ? best.entry.answer : bestSentences(index, best.entry.text, query);
  return { entryId: best.entry.id, text: text.trim(), score: best.score, coverage: best.coverage };
}

/**
 * A snippet's answer: the whole text when short (two sentences or fewer), otherwise the sentence that
 * matches the query best, plus the next best when it matches at least half as well, in text order.
 */
export function bestSentences(index: KnowledgeIndex, text: string, query: string): string {
  const sentences = splitSentences(text);
  if (sentences.length <= 2) return text;
  const terms = [...new Set(tokenize(query))];
  const scores = sentences.map((sentence) => {
    const present = new Set(tokenize(sentence));
    return terms.reduce((sum, term) => (present.has(term) ? sum + idf(index, term) : sum), 0);
  });
  const order = scores
    .map((score, position) => ({ score, position }))
    .sort((a, b) => b.score - a.score || a.position - b.position);
  const best = order[0];
  if (!best || best.score === 0) return text;
  const chosen = order.slice(0, 2).filter(({ score }) => score >= best.score / 2);
  return chosen
    .map(({ position }) => position)
    .sort((a, b) => a - b)
    .map((position) => sentences[position])
    .join(" ");
}

function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0);
}

/** Okapi idf, kept positive; a term no entry contains gets the highest value (it is the rarest). */
function idf(index: KnowledgeIndex, term: string): number {
  const count = index.entries.length;
  const frequency = index.documentFrequency.get(term) ?? 0;
  return Math.log(1 + (count - frequency + 0.5) / (frequency + 0.5));
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Lower-cases and strips accents (é → e, ü → u, ß → ss), so "Café" and "cafe" are one word. */
export function foldText(text: string): string {
  return text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/ß/g, "ss")
    .replace(/æ/g, "ae")
    .replace(/œ/g, "oe")
    .replace(/ø/g, "o")
    .replace(/ł/g, "l");
}

/** Folded words without stop words, each stemmed. */
export function tokenize(text: string): string[] {
  return foldText(text)
    .replace(/\b([a-z])-(?=[a-z])/g, "$1") // "e-mail" is "email", "T-shirt" is "tshirt"
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 1 && !stopWords.has(word))
    .map(stem);
}

/**
 * A light suffix-stripping stemmer for English: plurals, -ing, -ed, -ment, a final -y or -e and a
 * doubled final consonant, so "shipping", "shipped", "ships" and "shipment" meet at "ship", and
 * "deliveries", "delivered" and "delivery" at "deliver". Short words and numbers are left alone.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let result = word;
  if (result.endsWith("ies") && result.length > 4) result = `${result.slice(0, -3)}y`;
  else if (result.endsWith("sses")) result = result.slice(0, -2);
  else if (/(xes|zes|ches|shes)$/.test(result)) result = result.slice(0, -2);
  else if (result.endsWith("s") && !/(ss|us|is)$/.test(result)) result = result.slice(0, -1);
  for (const suffix of ["ment", "ing", "ed"]) {
    const base = result.slice(0, -suffix.length);
    if (result.endsWith(suffix) && base.length >= 3 && /[aeiouy]/.test(base)) {
      result = base;
      break;
    }
  }
  if (result.length > 4 && /[^aeiou]y$/.test(result)) result = result.slice(0, -1);
  else if (result.length > 4 && result.endsWith("e")) result = result.slice(0, -1);
  if (result.length > 3 && /([^aeious])\1$/.test(result)) result = result.slice(0, -1);
  return result;
}

/** True for a function word (English, Dutch, German, French, Spanish, folded) or conversational filler. */
export function isStopWord(word: string): boolean {
  return stopWords.has(word);
}

/** Function words of English, Dutch, German, French and Spanish (folded), and conversational filler. */
const stopWords = new Set(
  `a about above after again all also am an and any are as at be because been before being below between both
  but by can could did do does doing done down during each either else ever every few for from further get
  gets getting give go going got had has have having he her here hers him his how however i if in into is it
  its itself just let me might mine more most much must my myself no nor not now of off on once only or other
  our ours out over own per same shall she should so some such than that the their theirs them then there
  these they this those through to too under until up upon us very via was we were what whatever when where
  whether which while who whom whose why will with within without would yes yet you your yours yourself
  hi hello hey dear please thanks thank thx ok okay like want wanted need know tell wondering question
  many take takes taking took make makes making made anyone anybody someone somebody
  something anything don doesn didn isn aren wasn won ll ve re
  aan al alle als bij dan dat de der deze die dit doen door dus een en er had heb hebben het hier hij hoe
  hun ik in is je jij jullie kan kun kunnen maar me met mijn mij na naar niet nog nu of om onder ons onze ook
  op over te tot u uw veel voor waar wanneer wat we wel wie wij wil worden zal ze zij zijn zo zou
  auf aus bei bis bist das dass dem des dich dir du ein eine einem einen einer er es euch euer habe
  haben ich ihr ihre im ist kann konnen mein meine mit nach nicht noch oder sein sich sie sind uber um und
  uns unser von vor was welche wenn wer wie wir wird zu zum zur
  au aux avec ce ces cette dans des du elle est et eux il je la le les leur lui ma mais mes moi mon ne nos
  notre nous ou par pas pour qu que qui sa se ses sont sur ta te tes toi ton tu un une vos votre vous
  al como cual cuando del el ella ellos en es esta este la las lo los mas mi mis muy para pero por
  puedo que se si sobre su sus tengo tiene un una uno unos yo`.split(/\s+/),
);
