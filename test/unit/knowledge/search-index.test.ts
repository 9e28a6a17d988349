import { describe, expect, it } from "vitest";
import {
  buildSearchIndex,
  CANDIDATES,
  type IndexedPassage,
  quantize,
  RRF_K,
  searchPassages,
} from "#functions/knowledge/search-index";
import { conceptBars, conceptEmbeddings, shopPassages } from "#test/fakes/knowledge-fixture";

const bars = conceptBars;
const unit = (values: number[]) => {
  const norm = Math.sqrt(values.reduce((sum, value) => sum + value * value, 0));
  return values.map((value) => value / norm);
};

function passage(id: string, text: string, title = id): IndexedPassage {
  return { passageId: id, sourceId: `source-${id}`, sourceTitle: title, titlePath: [], text };
}

describe("hybrid search", () => {
  it("finds a passage by its words alone (no vectors)", () => {
    const index = buildSearchIndex(shopPassages);
    const [best] = searchPassages(index, "how much does shipping cost", undefined, { limit: 5, bars });
    expect(best?.passage.passageId).toBe("kb-shipping-cost");
    expect(best?.confident).toBe(true);
    expect(best?.semantic).toBeUndefined();
  });

  it("fuses the rankings: first in both scores 1, and a passage only one ranking finds still comes", () => {
    const passages = [passage("a", "apples and pears"), passage("b", "bananas"), passage("c", "cherries")];
    // Vectors that put "b" first and "a" second for the query vector below.
    const index = buildSearchIndex(passages, {
      model: "m",
      dimensions: 3,
      vectors: [unit([0.6, 0.8, 0]), unit([1, 0, 0]), unit([0, 0, 1])],
    });
    const ranked = searchPassages(
      index,
      "apples",
      { model: "m", vector: [1, 0, 0] },
      { limit: 5, bars: { confident: 0.95, relevant: 0.5 } },
    );
    expect(ranked.map((entry) => entry.passage.passageId)).toEqual(["a", "b"]);
    // a: lexical rank 1 + semantic rank 2; b: semantic rank 1 only.
    const best = 2 / (RRF_K + 1);
    expect(ranked[0]?.score).toBeCloseTo((1 / (RRF_K + 1) + 1 / (RRF_K + 2)) / best, 6);
    expect(ranked[1]?.score).toBeCloseTo(1 / (RRF_K + 1) / best, 6);
    expect(ranked[1]?.confident).toBe(true); // cosine 1 ≥ 0.95
    // c matched neither well enough: left out.
  });

  it("ignores a question embedded by another model than the passages'", () => {
    const index = buildSearchIndex(shopPassages, conceptEmbeddings(shopPassages));
    const ranked = searchPassages(
      index,
      "opening hours",
      { model: "another-model", vector: new Array(256).fill(0.1) },
      { limit: 5, bars },
    );
    expect(ranked.every((entry) => entry.semantic === undefined)).toBe(true);
    expect(ranked[0]?.passage.passageId).toBe("kb-hours");
  });

  it("answers nothing relevant with an empty list", () => {
    const index = buildSearchIndex(shopPassages, conceptEmbeddings(shopPassages));
    expect(searchPassages(index, "", undefined, { limit: 5, bars })).toEqual([]);
    expect(searchPassages(buildSearchIndex([]), "opening hours", undefined, { limit: 5, bars })).toEqual([]);
  });

  it("is deterministic, ties going to the passage that comes first", () => {
    const twins = [passage("x", "gift cards for sale"), passage("y", "gift cards for sale")];
    const ranked = searchPassages(buildSearchIndex(twins), "gift cards", undefined, { limit: 5, bars });
    expect(ranked.map((entry) => entry.passage.passageId)).toEqual(["x", "y"]);
  });

  it("keeps at most `limit` passages, and the semantic ranking at most CANDIDATES", () => {
    const many = Array.from({ length: 60 }, (_, i) => passage(`p${i}`, `parcel number ${i} shipping`));
    const vectors = many.map((_, i) => unit([1, i / 100, 0]));
    const index = buildSearchIndex(many, { model: "m", dimensions: 3, vectors });
    const ranked = searchPassages(
      index,
      "parcel shipping",
      { model: "m", vector: [1, 0, 0] },
      {
        limit: 100,
        bars: { confident: 0.99, relevant: 0.9 },
      },
    );
    expect(ranked.length).toBeLessThanOrEqual(2 * CANDIDATES);
    expect(searchPassages(index, "parcel shipping", undefined, { limit: 3, bars })).toHaveLength(3);
  });
});

describe("int8 quantization", () => {
  it("keeps cosine similarity within 1 % of the float vectors", () => {
    const random = (seed: number) => () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648 - 0.5;
    };
    const next = random(7);
    const vectors = Array.from({ length: 50 }, () => unit(Array.from({ length: 256 }, next)));
    const query = unit(Array.from({ length: 256 }, next));
    const quantized = quantize("m", 256, vectors);
    vectors.forEach((vector, row) => {
      const exact = vector.reduce((sum, value, i) => sum + value * (query[i] as number), 0);
      let dot = 0;
      for (let i = 0; i < 256; i++) dot += (quantized.values[row * 256 + i] as number) * (query[i] as number);
      expect(Math.abs(dot * (quantized.scales[row] as number) - exact)).toBeLessThan(0.01);
    });
  });
});
