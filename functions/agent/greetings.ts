/**
 * Greetings: a message that only greets ("Hello!", "good morning team", "Buenos días") is answered
 * with the welcome message by the scripted engine, and is no question the knowledge failed to answer.
 */
import { foldText } from "#functions/agent/retrieval";

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
