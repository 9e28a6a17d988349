import type { TurnKnowledge } from "#functions/agent/engine";
import type { KnowledgeEntry } from "#functions/agent/retrieval";
import { entryPassage } from "#functions/knowledge/entry-passages";
import { groundingFrom } from "#functions/knowledge/grounding";
import {
  buildSearchIndex,
  type IndexedPassage,
  passageSearchText,
  searchPassages,
} from "#functions/knowledge/search-index";
import { conceptEmbedding } from "#test/fakes/concept-embedding";

/** A small shop's knowledge base: ten entries of both kinds, in the wording an operator would write. */
export const shopKnowledge: readonly KnowledgeEntry[] = [
  {
    id: "kb-hours",
    kind: "qa",
    question: "What are your opening hours?",
    answer: "We are open Monday to Saturday from 9:00 to 18:00. On Sundays the shop is closed.",
  },
  {
    id: "kb-shipping-cost",
    kind: "qa",
    question: "How much does shipping cost?",
    answer: "Shipping costs 4.95 within the Netherlands. Orders above 50 euros ship for free.",
  },
  {
    id: "kb-shipping-time",
    kind: "qa",
    question: "How long does delivery take?",
    answer: "Orders placed before 17:00 are delivered the next working day.",
  },
  {
    id: "kb-returns",
    kind: "qa",
    question: "Can I return a product?",
    answer: "You can return unused products within 30 days for a full refund.",
  },
  {
    id: "kb-payment",
    kind: "qa",
    question: "Which payment methods do you accept?",
    answer: "We accept iDEAL, credit cards, PayPal and Klarna.",
  },
  {
    id: "kb-gift-cards",
    kind: "qa",
    question: "Do you sell gift cards?",
    answer: "Yes, gift cards are available in the shop and online from 10 to 150 euros.",
  },
  {
    id: "kb-cafe",
    kind: "qa",
    question: "Is there a café in the store?",
    answer: "Our café on the first floor serves coffee, tea and fresh pastries.",
  },
  {
    id: "kb-warranty",
    kind: "snippet",
    title: "Warranty",
    text:
      "All electronics come with a two-year warranty. The warranty covers manufacturing defects. " +
      "Damage caused by accidents or water is not covered. To claim warranty, bring the receipt to the service desk.",
  },
  {
    id: "kb-parking",
    kind: "snippet",
    title: "Parking and public transport",
    text:
      "Customers park for free in the garage under the building. The tram stop Centraal is a five minute walk. " +
      "Bicycles can be left in the guarded bicycle shed next to the entrance.",
  },
  {
    id: "kb-account",
    kind: "qa",
    question: "How do I change the email address of my account?",
    answer: "Sign in, open Account settings and choose Change email address.",
  },
];

/** The shop's entries as the index holds them (knowledge/entry-passages.ts). */
export const shopPassages: readonly IndexedPassage[] = shopKnowledge.map((entry) =>
  entryPassage(
    entry.kind === "qa"
      ? {
          entryId: entry.id,
          kind: "qa",
          question: entry.question,
          answer: entry.answer,
          createdAt: "2026-11-21T00:00:00.000Z",
        }
      : {
          entryId: entry.id,
          kind: "snippet",
          text: entry.text,
          ...(entry.title ? { title: entry.title } : {}),
          createdAt: "2026-11-21T00:00:00.000Z",
        },
  ),
);

/** Embeddings of the local concept model (the stand-ins' model), at Titan's 256 dimensions. */
export const conceptEmbeddings = (passages: readonly IndexedPassage[]) => ({
  model: "local-concepts",
  dimensions: 256,
  vectors: passages.map((passage) => Float32Array.from(conceptEmbedding(passageSearchText(passage), 256))),
});

/** The local concept model's bars: calibrated on the retrieval set (test/retrieval/), as the stand-ins use them. */
export const conceptBars = { confident: 0.45, relevant: 0.25 };

/**
 * What a turn's retrieval hands the engine for `question` over `passages` (lexical, and semantic
 * with the local concept model unless `lexicalOnly`): the same code the turn runs.
 */
export function turnKnowledgeFor(
  question: string,
  passages: readonly IndexedPassage[] = shopPassages,
  options: { lexicalOnly?: boolean } = {},
): TurnKnowledge {
  const index = buildSearchIndex(passages, options.lexicalOnly ? undefined : conceptEmbeddings(passages));
  const query = options.lexicalOnly
    ? undefined
    : { model: "local-concepts", vector: conceptEmbedding(question, 256) };
  const ranked = searchPassages(index, question, query, { limit: 5, bars: conceptBars });
  const grounded = groundingFrom(ranked).passages;
  const cited = grounded.filter((_, position) => ranked[position]?.confident);
  const answer = cited[0];
  return { passages: grounded, cited, ...(answer ? { answer } : {}) };
}
