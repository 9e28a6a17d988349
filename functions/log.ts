/**
 * Structured JSON logs, one line per event, each carrying the request id of the request being
 * served (taken from an AsyncLocalStorage scope the handler opens), so any line can be joined with
 * the `X-Request-Id` a client reports. Never log keys, message texts or credentials: log ids,
 * counts, durations and error codes.
 */
import { AsyncLocalStorage } from "node:async_hooks";

type Level = "debug" | "info" | "warn" | "error";
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

interface Scope {
  requestId: string;
  fields: Record<string, unknown>;
}

const scope = new AsyncLocalStorage<Scope>();

/** Runs `fn` with every log line inside it tagged with `requestId`. */
export function withRequestScope<T>(requestId: string, fn: () => T): T {
  return scope.run({ requestId, fields: {} }, fn);
}

/** Adds fields (e.g. organizationId) to the remaining log lines of the current request. */
export function annotateRequest(fields: Record<string, unknown>): void {
  const current = scope.getStore();
  if (current) Object.assign(current.fields, fields);
}

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}

/** Where lines go; the test harness swaps it to capture logs (e.g. to prove secrets never appear). */
export type LogSink = (line: string) => void;
let sink: LogSink = (line) => process.stdout.write(`${line}\n`);
export function setLogSink(next: LogSink): LogSink {
  const previous = sink;
  sink = next;
  return previous;
}

/** Writes one line as it is (no level, no fields): the metrics module's Embedded Metric Format documents. */
export function writeLine(line: string): void {
  sink(line);
}

function threshold(): number {
  const configured = (process.env.LOG_LEVEL ?? "info").toLowerCase() as Level;
  return order[configured] ?? order.info;
}

function write(level: Level, message: string, fields: Record<string, unknown> = {}): void {
  if (order[level] < threshold()) return;
  const current = scope.getStore();
  sink(
    JSON.stringify({
      level,
      time: new Date().toISOString(),
      requestId: current?.requestId,
      message,
      ...current?.fields,
      ...fields,
    }),
  );
}

/** Error details for logs: name, message and stack, plus an AWS error's name and status. */
export function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    const metadata = (error as { $metadata?: { httpStatusCode?: number } }).$metadata;
    return {
      errorName: error.name,
      errorMessage: error.message,
      ...(metadata?.httpStatusCode ? { errorStatus: metadata.httpStatusCode } : {}),
      stack: error.stack,
    };
  }
  return { errorMessage: String(error) };
}

export const log = {
  debug: (message: string, fields?: Record<string, unknown>) => write("debug", message, fields),
  info: (message: string, fields?: Record<string, unknown>) => write("info", message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => write("warn", message, fields),
  error: (message: string, fields?: Record<string, unknown>) => write("error", message, fields),
};
