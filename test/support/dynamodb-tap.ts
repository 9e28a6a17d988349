/**
 * A tap on the wire between the functions and DynamoDB Local, for fault tests: it forwards every
 * call unchanged and lets a test stall the table (SIGSTOP on the DynamoDB Local process) at the
 * moment a chosen call arrives, before that call reaches the table. Like the network in front of a
 * real table, it never cancels a call it has forwarded: when the caller gives up, the call still
 * lands when the table resumes. It only observes and times the stall; every answer, and every
 * stall, is DynamoDB Local's own.
 */
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface TableCall {
  /** e.g. `PutItem`, `TransactWriteItems` */
  operation: string;
  /** The request's JSON, as sent. */
  body: string;
}

export interface DynamoDbTap {
  /** Where the functions send their calls (AWS_ENDPOINT_URL_DYNAMODB). */
  url: string;
  /** DynamoDB Local's endpoint; calls wait until it is set. */
  setUpstream(endpoint: string): void;
  /**
   * Runs `stall` when the first call matching `match` arrives, then forwards that call (into the
   * stalled table). Resolves with the call once it happened.
   */
  stallWhen(match: (call: TableCall) => boolean, stall: () => void): Promise<TableCall>;
  /**
   * Records every call from now on with when it arrived and when its answer went back, holding each
   * answer `holdMs` (so calls sent together overlap by far more than any scheduling jitter) until
   * the recording is stopped.
   */
  record(holdMs: number): CallRecording;
  close(): Promise<void>;
}

export interface RecordedCall extends TableCall {
  /** performance.now() when the whole request had arrived. */
  startedAt: number;
  /** performance.now() when the answer had been written back; NaN while unanswered. */
  endedAt: number;
}

export interface CallRecording {
  calls: RecordedCall[];
  stop(): void;
}

export async function startDynamoDbTap(): Promise<DynamoDbTap> {
  let upstream: URL | undefined;
  let waiting: (() => void)[] = [];
  const rules: { match: (call: TableCall) => boolean; fire: (call: TableCall) => void }[] = [];
  let recording: { calls: RecordedCall[]; holdMs: number } | undefined;
  const agent = new Agent({ keepAlive: true });

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      if (!upstream) await new Promise<void>((resolve) => waiting.push(resolve));
      const body = Buffer.concat(chunks);
      const call: TableCall = {
        operation: String(req.headers["x-amz-target"] ?? "").replace(/^DynamoDB_\d+\./, ""),
        body: body.toString("utf8"),
      };
      const recorded = recording && { ...call, startedAt: performance.now(), endedAt: Number.NaN };
      const holdMs = recording?.holdMs ?? 0;
      if (recorded) recording?.calls.push(recorded);
      const rule = rules.findIndex((candidate) => candidate.match(call));
      if (rule >= 0) rules.splice(rule, 1)[0]?.fire(call);
      const target = upstream as URL;
      const forward = request(
        {
          host: target.hostname,
          port: target.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
          agent,
        },
        (response) => {
          const answer = () => {
            if (res.destroyed) {
              // The caller gave up; the table did the work all the same.
              response.resume();
              return;
            }
            res.writeHead(response.statusCode ?? 500, response.headers);
            response.pipe(res);
            if (recorded) res.once("finish", () => (recorded.endedAt = performance.now()));
          };
          if (holdMs > 0) setTimeout(answer, holdMs);
          else answer();
        },
      );
      forward.on("error", () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setUpstream: (endpoint) => {
      upstream = new URL(endpoint);
      for (const resume of waiting) resume();
      waiting = [];
    },
    stallWhen: (match, stall) =>
      new Promise<TableCall>((resolve) => {
        rules.push({
          match,
          fire: (call) => {
            stall();
            resolve(call);
          },
        });
      }),
    record: (holdMs) => {
      const calls: RecordedCall[] = [];
      recording = { calls, holdMs };
      return {
        calls,
        stop: () => {
          recording = undefined;
        },
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Calls the tests stall at, named by what they do (wire JSON of the DynamoDB API). */
export const calls = {
  /** The authorizer's read or token-bucket write on an API key. */
  authenticates: (call: TableCall) => call.body.includes('"S":"APIKEY#'),
  /** The write that claims an Idempotency-Key. */
  claimsIdempotencyKey: (call: TableCall) => call.operation === "PutItem" && call.body.includes('"S":"IDEM#'),
  /** A message turn's first read: its conversation (beside its latest messages). */
  readsTurnStart: (call: TableCall) =>
    call.operation === "GetItem" &&
    call.body.includes('"SK":{"S":"CONV"}') &&
    call.body.includes("ConsistentRead"),
  /** A message turn's claim of its turn number on the conversation (the visitor's message with it). */
  claimsTurn: (call: TableCall) =>
    call.operation === "TransactWriteItems" && call.body.includes("turns = :seen"),
  /** The write that stores a turn's visitor message (the turn's claim). */
  storesVisitorMessage: (call: TableCall) => /"S":"MSG#\d{10}#00"/.test(call.body),
  /** The write that stores a turn's (first) reply. */
  storesReply: (call: TableCall) => /"S":"MSG#\d{10}#01"/.test(call.body),
  /** The write that creates a conversation. */
  createsConversation: (call: TableCall) =>
    call.operation === "TransactWriteItems" && /"SK":\{"S":"CONV"\}/.test(call.body),
} as const;
