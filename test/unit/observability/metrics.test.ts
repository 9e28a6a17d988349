/**
 * The metrics module's Embedded Metric Format lines, read back as CloudWatch reads them: every
 * directive's dimensions are root members with string values, every metric a root member with a
 * number, the timestamp in milliseconds; and the closed list is what docs/operations.md lists.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { setLogSink, withRequestScope } from "#functions/log";
import { emfDocument } from "#functions/observability/emf";
import {
  metricCatalog,
  recordAuthorizerFailure,
  recordIngestionJob,
  recordLookups,
  recordRateLimited,
  recordTimerCheck,
  recordTurn,
  recordWebhookDelivery,
} from "#functions/observability/metrics";

interface Directive {
  Namespace: string;
  Dimensions: string[][];
  Metrics: { Name: string; Unit: string }[];
}
type Document = Record<string, unknown> & { _aws: { Timestamp: number; CloudWatchMetrics: Directive[] } };

let lines: string[];
let restore: (line: string) => void;

beforeEach(() => {
  lines = [];
  restore = setLogSink((line) => lines.push(line));
  vi.stubEnv("STAGE", "prod");
});
afterEach(() => {
  setLogSink(restore);
  vi.unstubAllEnvs();
});

/** Each line parsed, checked against the EMF specification's rules. */
function documents(): Document[] {
  return lines.map((line) => {
    const document = JSON.parse(line) as Document;
    expect(Number.isInteger(document._aws.Timestamp)).toBe(true);
    expect(Math.abs(document._aws.Timestamp - Date.now())).toBeLessThan(60_000);
    for (const directive of document._aws.CloudWatchMetrics) {
      for (const set of directive.Dimensions) {
        for (const dimension of set) expect(typeof document[dimension]).toBe("string");
      }
      for (const metric of directive.Metrics) {
        expect(typeof document[metric.Name]).toBe("number");
        expect(metricCatalog[metric.Name as keyof typeof metricCatalog]?.unit).toBe(metric.Unit);
      }
    }
    return document;
  });
}

/** What each directive publishes: metric name → the dimension sets it is published with. */
function published(document: Document): Record<string, string[][]> {
  return Object.fromEntries(
    document._aws.CloudWatchMetrics.flatMap((directive) =>
      directive.Metrics.map((metric) => [metric.Name, directive.Dimensions] as const),
    ),
  );
}

describe("a turn's metrics", () => {
  it("a fallback: the turn by engine and outcome, the fallback by reason, each also as the stage's total", () => {
    withRequestScope("req-1", () =>
      recordTurn({ engine: "bedrock", outcome: "fallback", fallbackReason: "model_throttled" }),
    );
    const [document, ...others] = documents();
    expect(others).toEqual([]);
    expect(document).toMatchObject({
      Stage: "prod",
      Engine: "bedrock",
      Outcome: "fallback",
      Reason: "model_throttled",
      Turns: 1,
      Fallbacks: 1,
      requestId: "req-1",
    });
    expect(document?._aws.CloudWatchMetrics.every((directive) => directive.Namespace === "ChatbotApi")).toBe(
      true,
    );
    expect(published(document as Document)).toEqual({
      Turns: [["Stage"], ["Stage", "Engine", "Outcome"]],
      Fallbacks: [["Stage"], ["Stage", "Reason"]],
    });
  });

  it("an answer: model latency and tokens by engine, no fallback", () => {
    recordTurn({
      engine: "openai",
      outcome: "answered",
      modelLatencyMs: 812,
      inputTokens: 950,
      outputTokens: 120,
    });
    const [document] = documents();
    expect(document).toMatchObject({
      Turns: 1,
      ModelLatency: 812,
      ModelInputTokens: 950,
      ModelOutputTokens: 120,
      Outcome: "answered",
    });
    expect(document).not.toHaveProperty("Fallbacks");
    expect(document).not.toHaveProperty("Reason");
    expect(published(document as Document)).toEqual({
      Turns: [["Stage"], ["Stage", "Engine", "Outcome"]],
      ModelLatency: [["Stage"], ["Stage", "Engine"]],
      ModelInputTokens: [["Stage"], ["Stage", "Engine"]],
      ModelOutputTokens: [["Stage"], ["Stage", "Engine"]],
    });
  });

  it("look-ups: one document per outcome, counting them", () => {
    recordLookups(["found", "timeout", "found"]);
    const counted = documents().map((document) => [document.Outcome, document.Lookups]);
    expect(counted).toEqual([
      ["found", 2],
      ["timeout", 1],
    ]);
  });
});

describe("the other metrics", () => {
  it("rate limits, authorizer failures, webhook deliveries, timer checks and ingestion jobs", () => {
    recordRateLimited("public");
    recordAuthorizerFailure("manage", "unavailable");
    recordWebhookDelivery("retry_scheduled");
    recordTimerCheck("closed");
    recordIngestionJob({ sourceType: "file", outcome: "ready", chunks: 42, durationMs: 3100 });
    const written = documents();
    expect(written.map((document) => published(document))).toEqual([
      { RateLimited: [["Stage"], ["Stage", "Api"]] },
      { AuthorizerFailures: [["Stage"], ["Stage", "Api", "Verdict"]] },
      { WebhookDeliveries: [["Stage"], ["Stage", "Outcome"]] },
      { TimerChecks: [["Stage"], ["Stage", "Outcome"]] },
      { IngestionJobs: [["Stage"], ["Stage", "SourceType", "Outcome"]] },
      {
        IngestedChunks: [["Stage"], ["Stage", "SourceType"]],
        IngestionDuration: [["Stage"], ["Stage", "SourceType"]],
      },
    ]);
    expect(written[1]).toMatchObject({ Api: "manage", Verdict: "unavailable", AuthorizerFailures: 1 });
    expect(written[5]).toMatchObject({ IngestedChunks: 42, IngestionDuration: 3100, SourceType: "file" });
  });

  it("uses the stage the stack sets, and `local` without one", () => {
    vi.stubEnv("STAGE", "");
    recordRateLimited("manage");
    expect(documents()[0]?.Stage).toBe("local");
  });
});

describe("the EMF writer", () => {
  const directive = {
    namespace: "N",
    dimensionSets: [["D"]],
    metrics: [{ name: "M", unit: "Count" as const }],
  };

  it("leaves out a metric whose value is not finite, and writes nothing without one", () => {
    expect(emfDocument({ directives: [directive], dimensions: { D: "d" }, values: { M: Number.NaN } })).toBe(
      undefined,
    );
    const line = emfDocument({
      directives: [{ ...directive, metrics: [...directive.metrics, { name: "L", unit: "Milliseconds" }] }],
      dimensions: { D: "d" },
      values: { M: 1, L: Number.POSITIVE_INFINITY },
      timestamp: 1_700_000_000_000,
    });
    expect(JSON.parse(line ?? "{}")).toEqual({
      D: "d",
      M: 1,
      _aws: {
        Timestamp: 1_700_000_000_000,
        CloudWatchMetrics: [{ Namespace: "N", Dimensions: [["D"]], Metrics: [{ Name: "M", Unit: "Count" }] }],
      },
    });
  });

  it("refuses what CloudWatch would reject: a missing dimension value, over 100 metrics, 30 dimensions or 100 values", () => {
    expect(() => emfDocument({ directives: [directive], dimensions: {}, values: { M: 1 } })).toThrow(
      /no value for dimension D/,
    );
    const many = Array.from({ length: 101 }, (_, index) => ({ name: `M${index}`, unit: "Count" as const }));
    expect(() =>
      emfDocument({
        directives: [{ ...directive, metrics: many }],
        dimensions: { D: "d" },
        values: Object.fromEntries(many.map((metric) => [metric.name, 1])),
      }),
    ).toThrow(/more than 100 metrics/);
    const dimensions = Array.from({ length: 31 }, (_, index) => `D${index}`);
    expect(() =>
      emfDocument({
        directives: [{ ...directive, dimensionSets: [dimensions] }],
        dimensions: Object.fromEntries(dimensions.map((name) => [name, "x"])),
        values: { M: 1 },
      }),
    ).toThrow(/more than 30 dimensions/);
    expect(() =>
      emfDocument({ directives: [directive], dimensions: { D: "d" }, values: { M: Array(101).fill(1) } }),
    ).toThrow(/more than 100 values/);
  });
});

describe("the documented list", () => {
  it("docs/operations.md lists exactly the catalog's metrics, each with its unit and dimensions", () => {
    const doc = readFileSync(resolve(import.meta.dirname, "../../../docs/operations.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Metrics"), doc.indexOf("\n## ", doc.indexOf("## Metrics") + 3));
    const rows = [...section.matchAll(/^\| `(\w+)` +\| (\w+) +\| ([^|]*)\|/gm)].map((match) => [
      match[1],
      match[2],
      (match[3] ?? "").trim(),
    ]);
    expect(rows).toEqual(
      Object.entries(metricCatalog).map(([name, definition]) => [
        name,
        definition.unit,
        definition.dimensions.join(", "),
      ]),
    );
  });
});
