import type { KnowledgeEntry } from "#functions/agent/retrieval";

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
