/**
 * Grounded answers for the model engines: the instruction that tells the model to answer from the
 * business's passages (and to say so when they do not hold the answer), the passages as the model
 * reads them, and the token budget that instructions, passages and history share.
 *
 * The chatbot's instructions and the grounding rule come first and change only when the chatbot
 * does: that is the stable prefix a Bedrock cache point marks (agent/bedrock-engine.ts). The
 * passages, which change with every question, come after it.
 */
import type { HistoryMessage } from "#functions/agent/engine";
import type { RankedPassage } from "#functions/knowledge/search-index";

/** What a reply cites: the source a passage came from. */
export interface SourceRef {
  sourceId: string;
  title: string;
  url?: string;
}

/** What a model engine is given of the chatbot's knowledge for one turn. */
export interface Grounding {
  /** Best first; empty when nothing relevant was found (the model must then say it does not know). */
  passages: readonly GroundingPassage[];
}

export interface GroundingPassage {
  sourceId: string;
  sourceTitle: string;
  titlePath: readonly string[];
  text: string;
  url?: string;
}

export const GROUNDING_RULE = [
  "Answer from the passages of the business's own content given below.",
  "If they do not hold the answer, say plainly that you do not know rather than guessing, and offer what you can instead (for example, to put the visitor in touch with a person).",
  "Do not invent policies, prices or dates. Do not mention the passages or how you were given them.",
].join(" ");

/** The passages as the model reads them: numbered, each under its source and headings. */
export function passagesText(grounding: Grounding): string {
  if (grounding.passages.length === 0)
    return "Passages: none of the business's content matches this question.";
  const blocks = grounding.passages.map((passage, position) => {
    const heading = [
      passage.sourceTitle,
      ...passage.titlePath.filter((title) => title !== passage.sourceTitle),
    ]
      .filter(Boolean)
      .join(" › ");
    return `[${position + 1}] ${heading}${passage.url ? ` (${passage.url})` : ""}\n${passage.text.trim()}`;
  });
  return `Passages:\n\n${blocks.join("\n\n")}`;
}

/** The stable part of the system prompt: the chatbot's instructions, then the grounding rule. */
export function groundedInstructions(instructions: string): string {
  return instructions.trim() ? `${instructions.trim()}\n\n${GROUNDING_RULE}` : GROUNDING_RULE;
}

export function groundingFrom(passages: readonly RankedPassage[]): Grounding {
  return {
    passages: passages.map(({ passage }) => ({
      sourceId: passage.sourceId,
      sourceTitle: passage.sourceTitle,
      titlePath: passage.titlePath,
      text: passage.text,
      ...(passage.url ? { url: passage.url } : {}),
    })),
  };
}

/** The sources of the passages, each once, in the passages' order. */
export function sourcesOf(
  passages: readonly { sourceId: string; sourceTitle: string; url?: string }[],
): SourceRef[] {
  const seen = new Set<string>();
  const sources: SourceRef[] = [];
  for (const passage of passages) {
    if (seen.has(passage.sourceId)) continue;
    seen.add(passage.sourceId);
    sources.push({
      sourceId: passage.sourceId,
      title: passage.sourceTitle,
      ...(passage.url ? { url: passage.url } : {}),
    });
  }
  return sources;
}

/**
 * Input tokens a turn may send, besides the reply's own `maxOutputTokens`: well inside every
 * supported model's context window (the smallest, 32k), so a long conversation or a long passage
 * never makes the request fail.
 */
export const INPUT_TOKEN_BUDGET = 12_000;

/** Tokens of a text, estimated: about four characters a token in English (no tokenizer per model). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Fits instructions, passages and history into the budget: the instructions and the new message
 * always go; then the passages, best first, as long as they fit (at most half the budget); then the
 * history, newest first. What does not fit is left out, oldest history first.
 */
export function fitToBudget<P extends { text: string; titlePath: readonly string[] }>(input: {
  instructions: string;
  message: string;
  passages: readonly P[];
  history: readonly HistoryMessage[];
  budget?: number;
}): { passages: P[]; history: HistoryMessage[] } {
  const budget = input.budget ?? INPUT_TOKEN_BUDGET;
  let left =
    budget -
    estimateTokens(input.instructions) -
    estimateTokens(GROUNDING_RULE) -
    estimateTokens(input.message);
  const passages: P[] = [];
  let passageBudget = Math.min(left, budget / 2);
  for (const passage of input.passages) {
    const cost = estimateTokens(passage.text) + estimateTokens(passage.titlePath.join(" ")) + 8;
    if (cost > passageBudget) break;
    passages.push(passage);
    passageBudget -= cost;
    left -= cost;
  }
  const history: HistoryMessage[] = [];
  for (let position = input.history.length - 1; position >= 0; position--) {
    const message = input.history[position] as HistoryMessage;
    const cost = estimateTokens(message.text) + 4;
    if (cost > left) break;
    history.unshift(message);
    left -= cost;
  }
  return { passages, history };
}
