/**
 * How a visitor's turn asks for a person (open → handoff), when the chatbot allows it:
 *   - the scripted engine: the visitor's message contains one of the chatbot's handoff phrases
 *     (case and surrounding spaces ignored);
 *   - the model engines: a `request_human` tool offered beside the look-up tools; the model calls it
 *     when the visitor asks for a person or the model cannot help. The call itself changes nothing:
 *     the turn then answers with the chatbot's configured handoff message and changes the status.
 */
import type { ToolBox, ToolSpec } from "#functions/agent/engine";
import type { HandoffSettings } from "#functions/store/items";

export const REQUEST_HUMAN_TOOL = "request_human";

/** Defaults of a chatbot's handoff settings (README "Chatbot settings"). */
export const handoffDefaults: HandoffSettings = {
  allowed: false,
  message: "I'm handing you over to a person on our team. They will answer here shortly.",
  phrases: ["talk to a human", "speak to a person", "human agent", "real person"],
};

export const requestHumanSpec: ToolSpec = {
  name: REQUEST_HUMAN_TOOL,
  description:
    "Hand the conversation to a person of the organization. Call it when the visitor asks to talk to a human, or when you cannot help and a person should take over. After it, the chatbot stops answering.",
  inputSchema: {
    type: "object",
    properties: {
      reason: { type: "string", description: "Why a person should take over, in a few words." },
      because: {
        type: "string",
        enum: ["visitor_asked", "cannot_answer"],
        description:
          "visitor_asked: the visitor asked for a person; cannot_answer: you cannot answer the visitor's question.",
      },
    },
    required: [],
    additionalProperties: false,
  },
};

const normalise = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim();

/** Whether the visitor's text contains one of the phrases. */
export function asksForPerson(text: string, phrases: readonly string[]): boolean {
  const said = normalise(text);
  return phrases.some((phrase) => {
    const wanted = normalise(phrase);
    return wanted.length > 0 && said.includes(wanted);
  });
}

/** Why the model asked for a person, as it said (`because`); undefined when it did not say. */
export type HandoffRequestKind = "visitor_asked" | "cannot_answer";

/**
 * The tool box with `request_human` added; `requested()` tells whether the model called it, and
 * `requestedBecause()` why, when it said.
 */
export function withRequestHuman<T extends ToolBox>(
  tools: T,
): T & { requested(): boolean; requestedBecause(): HandoffRequestKind | undefined } {
  let requested = false;
  let because: HandoffRequestKind | undefined;
  return Object.assign(Object.create(tools) as T, {
    specs: [...tools.specs, requestHumanSpec],
    call: async (name: string, input: unknown, signal: AbortSignal) => {
      if (name !== REQUEST_HUMAN_TOOL) return tools.call(name, input, signal);
      requested = true;
      const said = (input as { because?: unknown } | null)?.because;
      if (said === "visitor_asked" || said === "cannot_answer") because ??= said;
      return {
        status: "success" as const,
        content: {
          handed_off: true,
          note: "A person will take over; keep your answer to one short sentence.",
        },
      };
    },
    requested: () => requested,
    requestedBecause: () => because,
  });
}
