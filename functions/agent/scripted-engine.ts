/**
 * The deterministic engine: used locally and whenever a chatbot has no model configured.
 * Its main course: a greeting (or an empty message) gets the welcome message; otherwise an optional
 * hook may answer (the seam where order look-ups will plug in by slot filling); otherwise the
 * knowledge entries answer by retrieval; otherwise the fallback reply. Same turn, same reply.
 */
import type { ChatEngine, EngineReply, EngineTurn } from "#functions/agent/engine";
import { ReplyText } from "#functions/agent/reply-text";
import { buildKnowledgeIndex, findAnswer, foldText, type KnowledgeEntry } from "#functions/agent/retrieval";

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
  knowledge: readonly KnowledgeEntry[];
  hook?: ScriptedHook;
}

export function createScriptedEngine(options: ScriptedEngineOptions): ChatEngine {
  // Built once per engine: the chatbot's knowledge does not change within its lifetime.
  const index = buildKnowledgeIndex(options.knowledge);
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
    return single(findAnswer(index, text)?.text || options.fallbackReply);
  }
}

function single(text: string): EngineReply {
  return { messages: [text], toolCalls: 0 };
}

/** Greeting words and phrases (folded), in English, Dutch, German, French and Spanish. */
const greetingPhrases = [
  "hi",
  "hello",
  "hey",
  "heya",
  "hiya",
  "howdy",
  "yo",
  "greetings",
  "good morning",
  "good afternoon",
  "good evening",
  "good day",
  "morning",
  "evening",
  "how are you",
  "how are you doing",
  "whats up",
  "hallo",
  "hoi",
  "hai",
  "dag",
  "goedendag",
  "goedemorgen",
  "goedemiddag",
  "goedenavond",
  "goede morgen",
  "hoe gaat het",
  "moin",
  "servus",
  "guten morgen",
  "guten tag",
  "guten abend",
  "gruss gott",
  "gruss dich",
  "wie gehts",
  "wie geht es",
  "bonjour",
  "bonsoir",
  "salut",
  "coucou",
  "ca va",
  "hola",
  "buenas",
  "buenos dias",
  "buenas tardes",
  "buenas noches",
  "que tal",
].map((phrase) => phrase.split(" "));

/** Words that may stand next to a greeting without making it a question. */
const greetingFillers = new Set(
  "there all everyone everybody team folks guys friends again you bot allemaal iedereen zusammen alle a tous tout le monde todos and".split(
    " ",
  ),
);

/**
 * True when the message is only a greeting ("Hello!", "good morning team", "Buenos días") or has
 * no letters or digits at all; "Hi, where is my order?" is a question, not a greeting.
 */
export function isGreeting(text: string): boolean {
  const words = foldText(text)
    .replace(/['’]/g, "")
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  if (words.length === 0) return true;
  let greeted = false;
  let position = 0;
  while (position < words.length) {
    const length = longestGreetingAt(words, position);
    if (length > 0) {
      greeted = true;
      position += length;
    } else if (greetingFillers.has(words[position] ?? "")) {
      position += 1;
    } else {
      return false;
    }
  }
  return greeted;
}

function longestGreetingAt(words: readonly string[], position: number): number {
  let longest = 0;
  for (const phrase of greetingPhrases) {
    if (phrase.length > longest && phrase.every((word, offset) => words[position + offset] === word)) {
      longest = phrase.length;
    }
  }
  return longest;
}
