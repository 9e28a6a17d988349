/**
 * The shared skeleton of the platform fakes: a node:http server on 127.0.0.1 that logs every
 * request (so tests can assert that none was made), adds the platform's rate headers, and replays
 * scripted faults (429 with Retry-After, 5xx, slow answers) one per request, in order.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface LoggedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}

export interface FakeReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Fault =
  | { kind: "rate_limited"; retryAfter?: string }
  | { kind: "server_error"; status?: 500 | 502 | 503 }
  | { kind: "slow"; delayMs: number };

export interface PlatformBehaviour {
  handle(request: LoggedRequest): FakeReply;
  /** Headers on every answer; `served` counts requests so far, this one included. */
  rateHeaders?(served: number): Record<string, string>;
  tooManyRequests(retryAfter: string | undefined): FakeReply;
  serverError(status: number): FakeReply;
}

export interface PlatformFake {
  readonly baseUrl: string;
  /** Every request received, oldest first. */
  readonly requests: LoggedRequest[];
  /** Faults for the next requests, one each. */
  script(...faults: Fault[]): void;
  /** Clears the log and pending faults. */
  reset(): void;
  stop(): Promise<void>;
}

/** `Authorization: Basic …` → user and password, or undefined. */
export function basicCredentials(
  headers: IncomingHttpHeaders,
): { user: string; password: string } | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(headers.authorization ?? "");
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export async function startFakeServer(behaviour: PlatformBehaviour, port = 0): Promise<PlatformFake> {
  const requests: LoggedRequest[] = [];
  const faults: Fault[] = [];
  let served = 0;

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://fake");
    const logged: LoggedRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
    };
    requests.push(logged);
    served += 1;
    const rate = behaviour.rateHeaders?.(served) ?? {};
    const send = (reply: FakeReply) => {
      if (res.destroyed) return;
      const body = reply.body === undefined ? "" : JSON.stringify(reply.body);
      res.writeHead(reply.status, {
        "content-type": "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(body),
        ...rate,
        ...reply.headers,
      });
      res.end(body);
    };
    const fault = faults.shift();
    if (fault?.kind === "rate_limited") return send(behaviour.tooManyRequests(fault.retryAfter));
    if (fault?.kind === "server_error") return send(behaviour.serverError(fault.status ?? 500));
    if (fault?.kind === "slow") {
      const timer = setTimeout(() => send(behaviour.handle(logged)), fault.delayMs);
      res.on("close", () => clearTimeout(timer));
      return;
    }
    send(behaviour.handle(logged));
  });

  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const { port: bound } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${bound}`,
    requests,
    script: (...next) => {
      faults.push(...next);
    },
    reset: () => {
      requests.length = 0;
      faults.length = 0;
      served = 0;
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
