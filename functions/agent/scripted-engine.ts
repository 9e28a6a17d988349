/**
 * The deterministic engine: used locally and whenever a chatbot has no model configured.
 * Its main course: a greeting (or an empty message) gets the welcome message; otherwise an optional
 * hook may answer (the seam where order look-ups will plug in by slot filling); otherwise the best
 * passage the turn's retrieval found answers, when it clears the confidence bar (the same hybrid
 * retrieval the model engines get their passages from, knowledge/retriever.ts); otherwise the
 * fallback reply. Same turn, same reply.
 */
import type { ChatEngine, EngineReply, EngineTurn } from "#functions/agent/engine";
import { isGreeting } from "#functions/agent/greetings";
import { ReplyText } from "#functions/agent/reply-text";
import { bestSentences, buildKnowledgeIndex } from "#functions/agent/retrieval";
import type { GroundingPassage } from "#functions/knowledge/grounding";
import { sourcesOf } from "#functions/knowledge/grounding";

/** What the hook may answer instead of retrieval: reply messages and the tool calls it made. */
export type ScriptedHookReply = Pick<EngineReply, "messages" | "toolCalls">;

/**
 * Consulted for every message that is not a greeting, before retrieval. The only place the scripted
 * engine may use `turn.tools`. Returns undefined to let retrieval answer.
 */
export type ScriptedHook = (turn: EngineTurn) => Promise<ScriptedHookReply | undefined>;

export interface ScriptedEngineOptions {
  welcomeMessage: string;
  fallbackReply: string;
  hook?: ScriptedHook;
}

export { isGreeting };

export function createScriptedEngine(options: ScriptedEngineOptions): ChatEngine {
  return {
    kind: "scripted",
    async reply(turn) {
      const answer = await answerTo(turn);
      // A streamed turn gets the first message in one piece, as the stored reply will read.
      const [first = "", ...rest] = answer.messages;
      const text = new ReplyText(turn.onText);
      text.append(first);
      return { ...answer, messages: [text.value, ...rest] };
    },
  };

  async function answerTo(turn: EngineTurn): Promise<EngineReply> {
    const text = turn.message.text;
    if (isGreeting(text)) return single(options.welcomeMessage);
    const hooked = options.hook ? await options.hook(turn) : undefined;
    const hookedMessages = hooked?.messages.filter((message) => message.trim()) ?? [];
    if (hooked && hookedMessages.length > 0) return { messages: hookedMessages, toolCalls: hooked.toolCalls };
    const answer = turn.knowledge?.answer;
    if (answer) {
      const reply = answerText(answer, text);
      if (reply) return { messages: [reply], toolCalls: 0, sources: sourcesOf([answer]) };
    }
    return single(options.fallbackReply);
  }
}

/**
 * A passage as the answer: a short one whole (a Q/A's answer, a paragraph of two sentences), a
 * longer one by the sentences that match the question best.
 */
export function answerText(passage: GroundingPassage, question: string): string {
  const index = buildKnowledgeIndex([{ id: "passage", kind: "snippet", text: passage.text }]);
  return bestSentences(index, passage.text, question).trim();
}

function single(text: string): EngineReply {
  return { messages: [text], toolCalls: 0 };
}
