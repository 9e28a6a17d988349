/**
 * The ToolBox a turn hands its engine: configured look-up tools with collect-before-call enforced
 * here, whatever the engine asks. A call runs only when every variable was typed by the visitor
 * (`visitorTexts`); otherwise the model is told exactly what to ask for and nothing is sent.
 * Identical calls in one turn share one request, and a turn may make only a few look-ups, so a
 * looping model can neither hammer a shop nor try out e-mail addresses. Never throws.
 */
import type { ToolBox, ToolOutcome } from "#functions/agent/engine";
import type { HttpGet } from "#functions/tools/http-get";
import type { ConfiguredTool } from "#functions/tools/registry";
import { type LookupResult, toToolOutcome } from "#functions/tools/result";
import { toToolSpec } from "#functions/tools/tool-spec";
import { checkCollected } from "#functions/tools/variables";

export const MAX_LOOKUPS_PER_TURN = 3;

export interface LookupObservation {
  toolId: string;
  kind: LookupResult["kind"];
  durationMs: number;
}

export interface LookupToolBoxOptions {
  tools: readonly ConfiguredTool[];
  /** The visitor's own messages of this conversation, including the current one. */
  visitorTexts: readonly string[];
  /** Decrypted credentials of a tool (parsed JSON). */
  loadSecrets(tool: ConfiguredTool): Promise<unknown>;
  http: HttpGet;
  deadline: number;
  now?: () => number;
  /** Metrics hook; receives no values, credentials or record data. */
  observe?(observation: LookupObservation): void;
}

export function createLookupToolBox(options: LookupToolBoxOptions): ToolBox {
  const now = options.now ?? Date.now;
  const byName = new Map(options.tools.map((tool) => [tool.name, tool]));
  const calls = new Map<string, Promise<LookupResult>>();

  async function run(tool: ConfiguredTool, values: Record<string, string>, signal: AbortSignal) {
    const started = now();
    let result: LookupResult;
    try {
      const secrets = await options.loadSecrets(tool);
      result = await tool.lookup({
        secrets,
        variables: values,
        signal,
        deadline: options.deadline,
        http: options.http,
      });
    } catch {
      result = { kind: "unavailable", reason: "misconfigured" };
    }
    options.observe?.({ toolId: tool.id, kind: result.kind, durationMs: now() - started });
    return result;
  }

  return {
    specs: options.tools.map(toToolSpec),
    async call(name: string, input: unknown, signal: AbortSignal): Promise<ToolOutcome> {
      const tool = byName.get(name);
      if (!tool) return { status: "error", content: { error: `Unknown tool ${name}` } };
      const check = checkCollected(tool.variables, input, options.visitorTexts);
      if (!check.ready)
        return toToolOutcome({ kind: "needs_input", missing: check.missing, invalid: check.invalid });
      const key = JSON.stringify([name, tool.variables.map((v) => check.values[v.name])]);
      let pending = calls.get(key);
      if (!pending) {
        if (calls.size >= MAX_LOOKUPS_PER_TURN)
          return toToolOutcome({ kind: "unavailable", reason: "call_limit" });
        pending = run(tool, check.values, signal);
        calls.set(key, pending);
      }
      return toToolOutcome(await pending);
    },
  };
}
