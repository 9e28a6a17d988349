/**
 * The ToolBox a turn hands its engine: configured look-up tools with collect-before-call enforced
 * here, whatever the engine asks. A call runs only when every variable was typed by the visitor
 * (`visitorTexts`, or kept from an earlier turn in `collected`); otherwise the model is told exactly
 * what to ask for and nothing is sent. Identical calls in one turn share one request, and a turn may
 * make only a few look-ups, so a looping model can neither hammer a shop nor try out e-mail
 * addresses. Never throws.
 *
 * Beyond one turn (all optional, so the box also works on its own):
 * - `collected`: values the visitor gave in earlier turns (kept with the conversation). They count
 *   as given and fill in what a call leaves out; `collected()` returns them plus this turn's.
 * - `cache`: a short per-conversation cache, so asking again makes no second request.
 * - `limiter`: every request to a platform first takes a token from the tool's bucket; a platform's
 *   "slow down" (429 + Retry-After, an exhausted rate window) pauses that bucket for everyone.
 */
import type { ToolBox, ToolOutcome } from "#functions/agent/engine";
import type { HttpGet, HttpGetResult } from "#functions/tools/http-get";
import { secondsUntilAvailable } from "#functions/tools/rate-limit";
import type { ConfiguredTool } from "#functions/tools/registry";
import { type LookupResult, toToolOutcome, type UnavailableReason } from "#functions/tools/result";
import { toToolSpec } from "#functions/tools/tool-spec";
import { checkCollected } from "#functions/tools/variables";

export const MAX_LOOKUPS_PER_TURN = 3;
/** Pause after a platform said "slow down" without saying for how long. */
export const DEFAULT_PAUSE_SECONDS = 2;

export interface LookupObservation {
  toolId: string;
  kind: LookupResult["kind"];
  durationMs: number;
  /** Present when the result came from the conversation's cache. */
  cached?: true;
  /** Why, for `unavailable` (a closed enum: never a message). */
  reason?: UnavailableReason;
  /** The name (never the message) of an error that made the look-up impossible. */
  errorName?: string;
}

const nameOf = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

/** Results of earlier identical look-ups in this conversation. */
export interface LookupCache {
  read(tool: ConfiguredTool, values: Readonly<Record<string, string>>): Promise<LookupResult | undefined>;
  /** Called only with results that may be reused: found, and not found. */
  write(tool: ConfiguredTool, values: Readonly<Record<string, string>>, result: LookupResult): Promise<void>;
}

export type RequestAdmission = { admitted: true } | { admitted: false; retryAfterSeconds: number };

/** The per-tool request cap. */
export interface RequestLimiter {
  /** Takes one request token from the tool's bucket. */
  take(tool: ConfiguredTool): Promise<RequestAdmission>;
  /** The platform asked to slow down: no requests for this tool during `seconds`. */
  pause(tool: ConfiguredTool, seconds: number): Promise<void>;
}

export interface LookupToolBoxOptions {
  tools: readonly ConfiguredTool[];
  /** The visitor's own messages of this conversation, including the current one. */
  visitorTexts: readonly string[];
  /** Values the visitor gave in earlier turns, by variable name (already checked then). */
  collected?: Readonly<Record<string, string>>;
  /** Decrypted credentials of a tool (parsed JSON). */
  loadSecrets(tool: ConfiguredTool): Promise<unknown>;
  http: HttpGet;
  deadline: number;
  cache?: LookupCache;
  limiter?: RequestLimiter;
  now?: () => number;
  /** Metrics hook; receives no values, credentials or record data. */
  observe?(observation: LookupObservation): void;
}

/** The ToolBox plus what the scripted engine and the turn need from it. */
export interface LookupToolBox extends ToolBox {
  readonly tools: readonly ConfiguredTool[];
  readonly visitorTexts: readonly string[];
  /** What `call` does, with the typed result (undefined: no such tool). */
  lookup(name: string, input: unknown, signal: AbortSignal): Promise<LookupResult | undefined>;
  /** Values the visitor gave, earlier turns' and this turn's, by variable name: kept with the conversation. */
  collected(): Record<string, string>;
}

const lookupBoxes = new WeakSet<ToolBox>();

/** The look-up side of a ToolBox made here; undefined for any other ToolBox. */
export function asLookupToolBox(box: ToolBox): LookupToolBox | undefined {
  return lookupBoxes.has(box) ? (box as LookupToolBox) : undefined;
}

/** How long a platform asked us to wait, from its answer (429, or a rate window at zero). */
export function pauseAfter(result: HttpGetResult): number | undefined {
  if (result.kind === "rate_limited") return result.retryAfterSeconds ?? DEFAULT_PAUSE_SECONDS;
  if (result.kind !== "ok" || !result.rate) return undefined;
  if (!result.rate.windows.some((window) => window.remaining === 0)) return undefined;
  return secondsUntilAvailable(result.rate) ?? DEFAULT_PAUSE_SECONDS;
}

const present = (value: unknown): boolean =>
  (typeof value === "string" && value.trim() !== "") || typeof value === "number";

export function createLookupToolBox(options: LookupToolBoxOptions): LookupToolBox {
  const now = options.now ?? Date.now;
  const byName = new Map(options.tools.map((tool) => [tool.name, tool]));
  const calls = new Map<string, Promise<LookupResult>>();
  const earlier = options.collected ?? {};
  const gathered: Record<string, string> = {};
  // Values kept from earlier turns were typed by the visitor then, so they count as typed now.
  const givenTexts = [...options.visitorTexts, ...Object.values(earlier)];

  /** The tool's requests, each admitted by its bucket first; a "slow down" pauses the bucket. */
  function limitedHttp(tool: ConfiguredTool): HttpGet {
    const { limiter } = options;
    if (!limiter) return options.http;
    return async (request) => {
      const admission = await limiter.take(tool);
      if (!admission.admitted)
        return { kind: "rate_limited", retryAfterSeconds: admission.retryAfterSeconds };
      const result = await options.http(request);
      const pause = pauseAfter(result);
      if (pause !== undefined && pause > 0) await limiter.pause(tool, pause);
      return result;
    };
  }

  async function run(tool: ConfiguredTool, values: Record<string, string>, signal: AbortSignal) {
    const started = now();
    const cached = await options.cache?.read(tool, values).catch(() => undefined);
    if (cached) {
      options.observe?.({ toolId: tool.id, kind: cached.kind, durationMs: now() - started, cached: true });
      return cached;
    }
    let result: LookupResult;
    let errorName: string | undefined;
    let secrets: unknown;
    try {
      secrets = await options.loadSecrets(tool);
    } catch (error) {
      errorName = nameOf(error);
    }
    if (errorName !== undefined) {
      result = { kind: "unavailable", reason: "misconfigured" };
    } else {
      try {
        result = await tool.lookup({
          secrets,
          variables: values,
          signal,
          deadline: options.deadline,
          http: limitedHttp(tool),
        });
      } catch (error) {
        // E.g. the table refused the bucket's write: the look-up could not be made.
        errorName = nameOf(error);
        result = { kind: "unavailable", reason: "network" };
      }
    }
    options.observe?.({
      toolId: tool.id,
      kind: result.kind,
      durationMs: now() - started,
      ...(result.kind === "unavailable" ? { reason: result.reason } : {}),
      ...(errorName === undefined ? {} : { errorName }),
    });
    // Failures are not kept: the next turn tries the platform again.
    if (result.kind === "found" || result.kind === "not_found")
      await options.cache?.write(tool, values, result).catch(() => undefined);
    return result;
  }

  async function lookup(
    name: string,
    input: unknown,
    signal: AbortSignal,
  ): Promise<LookupResult | undefined> {
    const tool = byName.get(name);
    if (!tool) return undefined;
    const proposed: Record<string, unknown> =
      typeof input === "object" && input !== null ? { ...(input as Record<string, unknown>) } : {};
    for (const variable of tool.variables) {
      const kept = earlier[variable.name];
      if (!present(proposed[variable.name]) && kept !== undefined) proposed[variable.name] = kept;
      // Each value the visitor gave is kept, even while others are still missing.
      const one = checkCollected([variable], proposed, givenTexts);
      const value = one.ready ? one.values[variable.name] : undefined;
      if (value !== undefined) gathered[variable.name] = value;
    }
    const check = checkCollected(tool.variables, proposed, givenTexts);
    if (!check.ready) return { kind: "needs_input", missing: check.missing, invalid: check.invalid };
    const key = JSON.stringify([name, tool.variables.map((v) => check.values[v.name])]);
    let pending = calls.get(key);
    if (!pending) {
      if (calls.size >= MAX_LOOKUPS_PER_TURN) return { kind: "unavailable", reason: "call_limit" };
      pending = run(tool, check.values, signal);
      calls.set(key, pending);
    }
    return pending;
  }

  const box: LookupToolBox = {
    specs: options.tools.map(toToolSpec),
    tools: options.tools,
    visitorTexts: options.visitorTexts,
    lookup,
    async call(name: string, input: unknown, signal: AbortSignal): Promise<ToolOutcome> {
      const result = await lookup(name, input, signal);
      if (!result) return { status: "error", content: { error: `Unknown tool ${name}` } };
      return toToolOutcome(result);
    },
    collected: () => ({ ...earlier, ...gathered }),
  };
  lookupBoxes.add(box);
  return box;
}
