/**
 * A tiny scriptable HTTP server shared by the protocol fakes: each test queues the responses it
 * wants, in order, and reads back what the real client sent. A delayed response is cancelled when
 * the client hangs up, so a test of a deadline never leaves a timer behind. It speaks HTTP/1.1, or
 * cleartext HTTP/2 for clients that only speak that (the Bedrock Runtime SDK's default handler).
 */
import {
  createServer as createHttp1Server,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import {
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { playStream, releaseGate, type StreamStep } from "#test/fakes/stream-steps";

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON unless it is a string (sent as is, for malformed bodies). */
  body?: unknown;
  delayMs?: number;
  /** A streamed answer instead of `body` (test/fakes/stream-steps.ts). */
  stream?: StreamStep[];
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when not JSON). */
  body: unknown;
  /** Path parameters the fake's router extracted (e.g. the model id). */
  params: Record<string, string>;
}

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: RecordedRequest[];
  enqueue(...responses: ScriptedResponse[]): void;
  /** Lets a streamed answer waiting at a `hold` step go on (or the next one that gets there). */
  release(): void;
  close(): Promise<void>;
}

/** Route matcher: path parameters when the request is one the fake serves, else undefined. */
export type Router = (method: string, path: string) => Record<string, string> | undefined;

type AnyRequest = IncomingMessage | Http2ServerRequest;
type AnyResponse = ServerResponse | Http2ServerResponse;
/** What send() needs, which both response classes offer (their overloads differ too much for a union call). */
interface Reply {
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: Uint8Array | string): unknown;
  end(body: string): unknown;
  end(): unknown;
  destroy(): unknown;
  on(event: "close", listener: () => void): unknown;
}

/** Answers some requests by itself (a model stand-in's embeddings), before the scripted queue. */
export type AutoAnswer = (method: string, path: string, body: unknown) => ScriptedResponse | undefined;

export async function startScriptedServer(
  router: Router,
  notFound: ScriptedResponse,
  protocol: "http1" | "h2c" = "http1",
  autoAnswer?: AutoAnswer,
): Promise<ScriptedServer> {
  const queue: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  const gate = releaseGate();
  const handle = (req: AnyRequest, res: AnyResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const method = req.method ?? "GET";
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      const params = router(method, path);
      if (!params) return send(res, notFound);
      const text = Buffer.concat(chunks).toString("utf8");
      const body = parseJson(text);
      requests.push({ method, path, headers: req.headers, body, params });
      const automatic = autoAnswer?.(method, path, body);
      if (automatic) return send(res, automatic);
      send(
        res,
        queue.shift() ?? { status: 599, body: { message: "fake server: no scripted response left" } },
        gate.released,
      );
    });
  };
  // Open connections are tracked so close() never waits on a client's keep-alive.
  const connections = new Set<Socket | Http2Session>();
  const track = (connection: Socket | Http2Session) => {
    connections.add(connection);
    connection.on("close", () => connections.delete(connection));
  };
  const server =
    protocol === "h2c"
      ? createHttp2Server(handle).on("session", track)
      : createHttp1Server(handle).on("connection", track);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...responses) => queue.push(...responses),
    release: gate.release,
    close: () =>
      new Promise<void>((resolve) => {
        for (const connection of connections) connection.destroy();
        server.close(() => resolve());
      }),
  };
}

export function send(
  res: Reply,
  response: ScriptedResponse,
  released: () => Promise<void> = async () => undefined,
): void {
  let closed = false;
  const closeListeners: (() => void)[] = [];
  res.on("close", () => {
    closed = true;
    for (const listener of closeListeners.splice(0)) listener();
  });
  const write = () => {
    if (closed) return;
    if (response.stream) {
      res.writeHead(response.status ?? 200, { "content-type": "application/json", ...response.headers });
      void playStream(response.stream, res, {
        closed: () => closed,
        released,
        onClose: (listener) => closeListeners.push(listener),
      });
      return;
    }
    const body = typeof response.body === "string" ? response.body : JSON.stringify(response.body ?? {});
    res.writeHead(response.status ?? 200, { "content-type": "application/json", ...response.headers });
    res.end(body);
  };
  if (!response.delayMs) {
    write();
    return;
  }
  const timer = setTimeout(write, response.delayMs);
  closeListeners.push(() => clearTimeout(timer));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
