/**
 * Runs one tool call for a model engine. The ToolBox promises never to throw and to honour the
 * signal; this guards both promises anyway, because a broken tool must cost the visitor one
 * tool error the model can explain, not the whole turn or its deadline.
 */

import { raceAbort } from "#functions/agent/deadline";
import type { ToolBox, ToolOutcome } from "#functions/agent/engine";

export async function runToolCall(
  tools: ToolBox,
  name: string,
  input: unknown,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  try {
    return await raceAbort(tools.call(name, input, signal), signal);
  } catch (error) {
    if (signal.aborted) throw error;
    return { status: "error", content: { error: "The tool failed unexpectedly." } };
  }
}
