/**
 * The service's application metrics: one closed list (`metricCatalog`), written as CloudWatch
 * Embedded Metric Format lines (./emf.ts) through the log's sink, one document per event, so a
 * metric costs no call and no wait, and nothing is lost when a function ends or streams. The
 * catalog is what the stack's alarms and dashboard read (lib/monitoring-stack.ts) and what
 * docs/operations.md lists (a unit test keeps the two equal).
 *
 * Every metric is in the namespace `ChatbotApi`, with the dimension `Stage`, and is published both
 * broken down by its own dimensions and as the stage's total (dimension set `[Stage]`), which is
 * what alarms read. Dimension values come from closed lists only, so the number of metrics (and
 * their cost) stays bounded. No metric carries an organization, chatbot, key or text.
 */
import { currentRequestId, writeLine } from "#functions/log";
import { emfDocument, type MetricDirective, type Unit } from "./emf.ts";

export const metricsNamespace = "ChatbotApi";

/** What a turn ended as. */
export type TurnOutcome =
  /** The engine replied. */
  | "answered"
  /** The turn handed the conversation to a person. */
  | "handoff"
  /** The scripted engine found no answer and gave the chatbot's fallback text (nothing failed). */
  | "unanswered"
  /** The engine or a look-up failed: the chatbot's fallback reply (reason in Fallbacks). */
  | "fallback";

/** Why a turn answered with the fallback reply. */
export type FallbackReason =
  | "model_throttled"
  | "model_denied"
  | "model_timed_out"
  | "model_failed"
  | "tool_failed";

export type Engine = "scripted" | "bedrock" | "openai";
export type LookupOutcome =
  | "found"
  | "not_found"
  | "auth_failed"
  | "rate_limited"
  | "timeout"
  | "unavailable";
/** `widget`: the widget's session route (its bucket per client address); visitors' own refusals are `public`. */
export type RateLimitedApi = "public" | "manage" | "widget";
export type AuthorizerFailure = "unavailable" | "error";
export type WebhookDeliveryOutcome = "delivered" | "retry_scheduled" | "failed" | "dropped";
/** What one scheduled inactivity check did (for the timer functions). */
export type TimerOutcome =
  /** The conversation was idle for its timeout: closed. */
  | "closed"
  /** It had activity since the check was made: nothing to do. */
  | "superseded"
  /** Not due yet: scheduled again for later. */
  | "rescheduled"
  /** It could not be done now (the table unavailable): retried by its queue or schedule. */
  | "failed";
/** What one ingestion job of a knowledge source did (for the knowledge pipeline's workers). */
export type IngestionOutcome = "ready" | "failed" | "skipped";
export type IngestionSourceType = "file" | "url" | "text" | "qa";

interface MetricDefinition {
  unit: Unit;
  /** Its own dimensions besides Stage (published with them and as the stage's total). */
  dimensions: readonly string[];
}

/** The closed list: every metric the service writes (docs/operations.md says what each counts and who writes it). */
export const metricCatalog = {
  Turns: {
    unit: "Count",
    dimensions: ["Engine", "Outcome"],
  },
  Fallbacks: {
    unit: "Count",
    dimensions: ["Reason"],
  },
  ModelLatency: {
    unit: "Milliseconds",
    dimensions: ["Engine"],
  },
  ModelInputTokens: {
    unit: "Count",
    dimensions: ["Engine"],
  },
  ModelOutputTokens: {
    unit: "Count",
    dimensions: ["Engine"],
  },
  Lookups: {
    unit: "Count",
    dimensions: ["Outcome"],
  },
  RateLimited: {
    unit: "Count",
    dimensions: ["Api"],
  },
  AuthorizerFailures: {
    unit: "Count",
    dimensions: ["Api", "Verdict"],
  },
  WebhookDeliveries: {
    unit: "Count",
    dimensions: ["Outcome"],
  },
  TimerChecks: {
    unit: "Count",
    dimensions: ["Outcome"],
  },
  IngestionJobs: {
    unit: "Count",
    dimensions: ["SourceType", "Outcome"],
  },
  IngestedChunks: {
    unit: "Count",
    dimensions: ["SourceType"],
  },
  IngestionDuration: {
    unit: "Milliseconds",
    dimensions: ["SourceType"],
  },
} as const satisfies Record<string, MetricDefinition>;

export type MetricName = keyof typeof metricCatalog;

function stage(): string {
  return process.env.STAGE || "local";
}

/**
 * Writes one document: the named metrics, each published with its own dimensions and as the total,
 * all with Stage. Metrics that share their dimensions share a directive.
 */
function emit(values: Partial<Record<MetricName, number>>, dimensions: Record<string, string>): void {
  const names = (Object.keys(values) as MetricName[]).filter((name) => values[name] !== undefined);
  const byDimensions = new Map<string, MetricName[]>();
  for (const name of names) {
    const key = metricCatalog[name].dimensions.join(",");
    byDimensions.set(key, [...(byDimensions.get(key) ?? []), name]);
  }
  const directives: MetricDirective[] = [...byDimensions.values()].map((group) => {
    const own = metricCatalog[group[0] as MetricName].dimensions;
    return {
      namespace: metricsNamespace,
      dimensionSets: [["Stage"], ["Stage", ...own]],
      metrics: group.map((name) => ({ name, unit: metricCatalog[name].unit })),
    };
  });
  const line = emfDocument({
    directives,
    dimensions: { Stage: stage(), ...dimensions },
    values,
    properties: { requestId: currentRequestId() },
  });
  if (line) writeLine(line);
}

/** One finished turn: its outcome, why it fell back, and what the model took. */
export function recordTurn(turn: {
  engine: Engine;
  outcome: TurnOutcome;
  fallbackReason?: FallbackReason;
  modelLatencyMs?: number;
  inputTokens?: number;
  outputTokens?: number;
}): void {
  emit(
    {
      Turns: 1,
      ...(turn.outcome === "fallback" && turn.fallbackReason ? { Fallbacks: 1 } : {}),
      ...(turn.modelLatencyMs === undefined ? {} : { ModelLatency: turn.modelLatencyMs }),
      ...(turn.inputTokens === undefined ? {} : { ModelInputTokens: turn.inputTokens }),
      ...(turn.outputTokens === undefined ? {} : { ModelOutputTokens: turn.outputTokens }),
    },
    {
      Engine: turn.engine,
      Outcome: turn.outcome,
      ...(turn.outcome === "fallback" && turn.fallbackReason ? { Reason: turn.fallbackReason } : {}),
    },
  );
}

/** A turn's look-ups: one document per outcome, with how many had it. */
export function recordLookups(outcomes: readonly LookupOutcome[]): void {
  const counts = new Map<LookupOutcome, number>();
  for (const outcome of outcomes) counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  for (const [outcome, count] of counts) emit({ Lookups: count }, { Outcome: outcome });
}

/** A request refused by a token bucket (429). */
export function recordRateLimited(api: RateLimitedApi): void {
  emit({ RateLimited: 1 }, { Api: api });
}

/** A request whose authorizer could not decide (503 unavailable, 500 error). */
export function recordAuthorizerFailure(api: RateLimitedApi, verdict: AuthorizerFailure): void {
  emit({ AuthorizerFailures: 1 }, { Api: api, Verdict: verdict });
}

/** One webhook delivery attempt's outcome. */
export function recordWebhookDelivery(outcome: WebhookDeliveryOutcome): void {
  emit({ WebhookDeliveries: 1 }, { Outcome: outcome });
}

/** One scheduled inactivity check (the timer functions call it once per check). */
export function recordTimerCheck(outcome: TimerOutcome): void {
  emit({ TimerChecks: 1 }, { Outcome: outcome });
}

/** One finished ingestion job of a knowledge source (the ingestion workers call it once per job). */
export function recordIngestionJob(job: {
  sourceType: IngestionSourceType;
  outcome: IngestionOutcome;
  chunks?: number;
  durationMs?: number;
}): void {
  emit({ IngestionJobs: 1 }, { SourceType: job.sourceType, Outcome: job.outcome });
  emit(
    {
      ...(job.chunks === undefined ? {} : { IngestedChunks: job.chunks }),
      ...(job.durationMs === undefined ? {} : { IngestionDuration: job.durationMs }),
    },
    { SourceType: job.sourceType },
  );
}
