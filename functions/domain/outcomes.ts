/**
 * A conversation's outcome: what became of it, decided by fixed rules from facts the conversation
 * item keeps (each written by the write that makes it: the turn, a status change, feedback, a
 * rating), so every reader decides alike: the answers, the analytics counters (from the table's
 * stream: the outcome of the item before and after a change) and a business replaying its webhooks
 * (docs/api.md "Outcomes" states the same rules in terms of events).
 *
 * The rules, first that applies:
 *   handed_off  the conversation was handed to a person (with a `handoff_reason`);
 *   abandoned   the visitor sent no message;
 *   unresolved  the visitor rated it 1–2; or (no rating, or 3) thumbed the chatbot's last answer
 *               down; or (no thumb on it) that answer was the fallback reply, or there was none;
 *   resolved    otherwise: rated 4–5, a thumb up on the last answer, or the last answer was a real
 *               one and the visitor asked nothing more.
 * An outcome is provisional until it is final, and then it never changes: final at the handoff, at
 * the close, or once OUTCOME_WINDOW_MS (24 h) passed after the conversation's last message
 * without another (the visitor left without asking for more help). A write that finds the window
 * passed (a late message, feedback or rating) first freezes the outcome as it was (`dueFreeze`);
 * a conversation nobody writes to again needs no freeze: which outcome the rules give never depends
 * on the time, only whether it is final does.
 */
import { isoTime } from "#functions/domain/context";
import type { ConversationRecord } from "#functions/store/items";

export const outcomes = ["resolved", "handed_off", "unresolved", "abandoned"] as const;
export type Outcome = (typeof outcomes)[number];

/**
 * Why a conversation was handed to a person, a closed list:
 *   visitor_asked     the visitor asked for a person (a handoff phrase, the model judged they asked,
 *                     or the website widget's "talk to a person")
 *   could_not_answer  the model handed over because it could not answer
 *   tool_failed       the model handed over in a turn whose look-up failed (the platform refused,
 *                     timed out or was unavailable)
 *   client            a client of the API called …/handoff
 *   agent             a person of the organization took the conversation over (or replied while open)
 */
export const handoffReasons = [
  "visitor_asked",
  "could_not_answer",
  "tool_failed",
  "client",
  "agent",
] as const;
export type HandoffReason = (typeof handoffReasons)[number];

/** How long after the last message an outcome stays provisional. */
export const OUTCOME_WINDOW_MS = 24 * 3_600_000;

/** The facts an outcome is decided by (a conversation item's). */
export type OutcomeFacts = Pick<
  ConversationRecord,
  | "createdAt"
  | "status"
  | "statusChangedAt"
  | "lastMessageAt"
  | "visitorMessageCount"
  | "lastAnswerTurn"
  | "lastAnswerFallback"
  | "lastAnswerFeedback"
  | "rating"
  | "handoffAt"
  | "handoffReason"
  | "finalOutcome"
  | "outcomeFinalAt"
>;

/** The outcome as the facts stand: frozen if final, else by the rules (time plays no part in which). */
export function outcomeValue(facts: OutcomeFacts): Outcome {
  if (facts.finalOutcome && isOutcome(facts.finalOutcome)) return facts.finalOutcome;
  if (facts.handoffReason !== undefined) return "handed_off";
  if ((facts.visitorMessageCount ?? 0) === 0) return "abandoned";
  const score = facts.rating?.score;
  if (score !== undefined && score >= 4) return "resolved";
  if (score !== undefined && score <= 2) return "unresolved";
  if (facts.lastAnswerTurn === undefined) return "unresolved";
  if (facts.lastAnswerFeedback === "up") return "resolved";
  if (facts.lastAnswerFeedback === "down") return "unresolved";
  return facts.lastAnswerFallback ? "unresolved" : "resolved";
}

const isOutcome = (value: string): value is Outcome => (outcomes as readonly string[]).includes(value);

/** When the window of a conversation that nothing else made final ends (epoch ms). */
export const windowEndOf = (facts: OutcomeFacts): number =>
  Date.parse(facts.lastMessageAt ?? facts.createdAt) + OUTCOME_WINDOW_MS;

export interface OutcomeView {
  outcome: Outcome;
  final: boolean;
  /** When it became final; while provisional, when it will be unless something happens first. */
  finalAt: string;
  handoffReason: HandoffReason | null;
}

/** The outcome at `now` (epoch ms), final or not. */
export function outcomeAt(facts: OutcomeFacts, now: number): OutcomeView {
  const outcome = outcomeValue(facts);
  const handoffReason =
    outcome === "handed_off" && facts.handoffReason ? (facts.handoffReason as HandoffReason) : null;
  const decided =
    facts.outcomeFinalAt ??
    (facts.handoffReason !== undefined ? facts.handoffAt : undefined) ??
    (facts.status === "closed" ? (facts.statusChangedAt ?? facts.lastMessageAt) : undefined);
  if (decided) return { outcome, final: true, finalAt: decided, handoffReason };
  const windowEnd = windowEndOf(facts);
  return { outcome, final: windowEnd <= now, finalAt: isoTime(windowEnd), handoffReason };
}

/** What a write freezes: the outcome and when it became final. */
export interface OutcomeFreeze {
  finalOutcome: Outcome;
  outcomeFinalAt: string;
}

/**
 * The freeze a write at `now` owes a conversation it read: the outcome as read, when its window has
 * passed and it is not frozen yet (so the write's own change cannot alter a final outcome).
 */
export function dueFreeze(facts: OutcomeFacts, now: number): OutcomeFreeze | undefined {
  if (facts.finalOutcome) return undefined;
  const view = outcomeAt(facts, now);
  return view.final ? { finalOutcome: view.outcome, outcomeFinalAt: view.finalAt } : undefined;
}

/** The parts of an UpdateExpression that write a freeze (`SET` clauses and their values). */
export function freezeClauses(freeze: OutcomeFreeze | undefined): {
  set: string[];
  values: Record<string, string>;
} {
  if (!freeze) return { set: [], values: {} };
  return {
    set: ["finalOutcome = :finalOutcome", "outcomeFinalAt = :outcomeFinalAt"],
    values: { ":finalOutcome": freeze.finalOutcome, ":outcomeFinalAt": freeze.outcomeFinalAt },
  };
}

/** The handoff reason of a status change's cause (the engine's own is decided by the turn). */
export function handoffReasonOf(cause: string): HandoffReason {
  switch (cause) {
    case "client":
      return "client";
    case "agent":
      return "agent";
    case "engine":
      return "could_not_answer";
    default:
      return "visitor_asked";
  }
}
