/**
 * Typed factories for engine tests: a turn with sensible defaults, and a ToolBox that records the
 * calls it receives and answers from a script.
 */
import type { EngineTurn, ToolBox, ToolOutcome, ToolSpec } from "#functions/agent/engine";
import { emptyToolBox } from "#functions/agent/engine";

export function aTurn(overrides: Partial<EngineTurn> = {}): EngineTurn {
  return {
    instructions: "You are the shop's helpful assistant.",
    history: [],
    message: { text: "Hello there", images: [] },
    tools: emptyToolBox,
    settings: { temperature: 0.2, maxOutputTokens: 512 },
    signal: new AbortController().signal,
    deadline: Date.now() + 5_000,
    ...overrides,
  };
}

export const orderStatusTool: ToolSpec = {
  name: "lookup_order",
  description: "Looks up an order's status. Ask for the order number and the email address first.",
  inputSchema: {
    type: "object",
    properties: {
      order_number: { type: "string", description: "The order number" },
      email: { type: "string", description: "The email address used for the order", format: "email" },
    },
    required: ["order_number", "email"],
    additionalProperties: false,
  },
};

export interface RecordingToolBox extends ToolBox {
  calls: { name: string; input: unknown }[];
}

export function recordingToolBox(
  outcome: ToolOutcome,
  specs: readonly ToolSpec[] = [orderStatusTool],
): RecordingToolBox {
  const calls: { name: string; input: unknown }[] = [];
  return {
    specs,
    calls,
    call: async (name, input) => {
      calls.push({ name, input });
      return outcome;
    },
  };
}
