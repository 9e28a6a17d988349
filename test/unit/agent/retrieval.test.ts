import { describe, expect, it } from "vitest";
import {
  bestSentences,
  buildKnowledgeIndex,
  findAnswer,
  foldText,
  type KnowledgeEntry,
  rankEntries,
  stem,
  tokenize,
} from "#functions/agent/retrieval";
import { shopKnowledge } from "#test/fakes/knowledge-fixture";

const index = buildKnowledgeIndex(shopKnowledge);

describe("text normalisation", () => {
  it("folds case and accents", () => {
    expect(foldText("Café CRÈME, Straße, Señor")).toBe("cafe creme, strasse, senor");
  });

  it("meets inflected forms at one stem", () => {
    expect(["shipping", "shipped", "ships", "shipment", "ship"].map(stem)).toEqual(Array(5).fill("ship"));
    expect(["deliveries", "delivered", "delivery", "deliver"].map(stem)).toEqual(Array(4).fill("deliver"));
    expect(["boxes", "box"].map(stem)).toEqual(["box", "box"]);
    expect(["addresses", "address"].map(stem)).toEqual(["address", "address"]);
    expect(stem("status")).toBe("status");
  });

  it("drops stop words in several languages and keeps content words", () => {
    expect(tokenize("What are your opening hours?")).toEqual(["open", "hour"]);
    expect(tokenize("Wat zijn de openingstijden van de winkel?")).toEqual([
      "openingstijden",
      "van",
      "winkel",
    ]);
    expect(tokenize("Change my e-mail")).toEqual(["chang", "email"]);
  });
});

describe("ranking", () => {
  it("weights a Q/A question above its answer", () => {
    // Prepare: the same word once in a question, once in an answer of equal length
    const entries: KnowledgeEntry[] = [
      { id: "a", kind: "qa", question: "Parking for visitors", answer: "Ask at the desk" },
      { id: "b", kind: "qa", question: "Ask at the desk", answer: "Parking for visitors" },
    ];
    // Act
    const ranked = rankEntries(buildKnowledgeIndex(entries), "parking");
    // Assess
    expect(ranked.map((match) => match.entry.id)).toEqual(["a", "b"]);
    expect(ranked[0]?.score).toBeGreaterThan(ranked[1]?.score ?? 0);
  });

  it("breaks ties by entry id, whatever the entry order", () => {
    const twin = (id: string): KnowledgeEntry => ({
      id,
      kind: "qa",
      question: "Gift wrapping?",
      answer: "Yes, free.",
    });
    const forward = findAnswer(
      buildKnowledgeIndex([...shopKnowledge, twin("m"), twin("c")]),
      "gift wrapping",
    );
    const backward = findAnswer(
      buildKnowledgeIndex([twin("c"), twin("m"), ...shopKnowledge].reverse()),
      "gift wrapping",
    );
    expect(forward?.entryId).toBe("c");
    expect(backward?.entryId).toBe("c");
  });

  it("gives no answer below the thresholds", () => {
    // One known word out of two equally rare ones is not more than half the question.
    expect(findAnswer(index, "Do you sell bicycles?")).toBeUndefined();
    expect(findAnswer(index, "What is the price of a unicorn?")).toBeUndefined();
    expect(findAnswer(index, "")).toBeUndefined();
    expect(findAnswer(buildKnowledgeIndex([]), "opening hours")).toBeUndefined();
  });
});

describe("snippet answers", () => {
  it("answers with the best matching sentences of a long snippet, in text order", () => {
    const answer = findAnswer(index, "Does the warranty cover water damage?");
    expect(answer?.entryId).toBe("kb-warranty");
    expect(answer?.text).toBe(
      "The warranty covers manufacturing defects. Damage caused by accidents or water is not covered.",
    );
  });

  it("answers with the whole text of a short snippet", () => {
    const short = buildKnowledgeIndex([
      { id: "s", kind: "snippet", text: "We ship to Belgium. Rates vary." },
    ]);
    expect(bestSentences(short, "We ship to Belgium. Rates vary.", "ship to belgium")).toBe(
      "We ship to Belgium. Rates vary.",
    );
  });
});

describe("findAnswer in a small knowledge base", () => {
  it("answers a paraphrase even with one or two entries, where idf is small", () => {
    const one = buildKnowledgeIndex([
      { id: "1", kind: "qa", question: "Do you ship to Norway?", answer: "Yes, in five days." },
    ]);
    const two = buildKnowledgeIndex([
      { id: "1", kind: "qa", question: "Do you ship to Norway?", answer: "Yes, in five days." },
      { id: "2", kind: "qa", question: "Can I pay by card?", answer: "Visa and Mastercard." },
    ]);

    expect(findAnswer(one, "shipping to norway?")?.text).toBe("Yes, in five days.");
    expect(findAnswer(two, "paying with a card")?.text).toBe("Visa and Mastercard.");
    expect(findAnswer(two, "do you sell bicycles?")).toBeUndefined();
  });
});
