/**
 * The one HTTP client for requests to addresses the service does not control: image URLs, look-up
 * tools, webhook deliveries, model servers (OpenAI-compatible). Every connection it opens goes through the outbound-address guard
 * (net/outbound-address.ts) at connect time, on the address actually connected to.
 *
 * It never follows redirects: a 3xx comes back to the caller with its `location`, and a caller that
 * follows one (images) sends a new request, which the guard checks like the first. Bodies are read
 * only on request, decompressed, and capped while streaming. Time limits come from the caller's
 * signal. Usage, e.g. a webhook delivery:
 *
 *   const send = createOutboundClient();
 *   const response = await send({ url, method: "POST", headers, body, signal: AbortSignal.timeout(15_000) });
 *   const answer = await response.readPrefix(1024);
 *
 * Refusals reject with `BlockedAddressError`; an oversized body with `ResponseTooLargeError`.
 */
import type { IncomingMessage } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import {
  type AllowedEndpoint,
  type ConnectGuardOptions,
  createGuardedAgent,
  type ResolveHost,
} from "#functions/net/outbound-address";

export interface OutboundClientOptions {
  /** Local runtime and tests only: loopback endpoints that may be reached (see ConnectGuardOptions). */
  allowPrivate?: readonly AllowedEndpoint[];
  /** Resolves host names (tests; default: the system resolver). */
  resolve?: ResolveHost;
  /** Local runtime and tests only: a PEM CA that replaces the default roots, for a self-signed fake. */
  trustedCa?: string;
  /**
   * Reuse connections (per host and port) between requests: for a client kept for the life of the
   * Lambda instance that calls the same few hosts often (look-ups). Each connection is still checked
   * by the guard when it opens. A bodiless request that fails because a reused connection was
   * already closed by the server is sent once more, on a new connection.
   */
  keepAlive?: boolean;
}

export interface OutboundRequest {
  /** http: or https:, without credentials. */
  url: URL;
  method?: "GET" | "POST";
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array;
  /** Ends the request and any body being read (a timeout, the turn's deadline). */
  signal: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Headers;
  /** The whole body, decompressed; rejects with ResponseTooLargeError past `maxBytes`. */
  read(maxBytes: number): Promise<Uint8Array>;
  /** At most the first `maxBytes` of the body, decompressed; the rest is dropped. */
  readPrefix(maxBytes: number): Promise<Uint8Array>;
  /**
   * The body, decompressed, piece by piece as it arrives (a stream of events); fails with
   * ResponseTooLargeError past `maxBytes`. Stopping the iteration drops the rest.
   */
  stream(maxBytes: number): AsyncIterable<Uint8Array>;
  /** Drops the body unread. */
  discard(): void;
}

export type OutboundSend = (request: OutboundRequest) => Promise<OutboundResponse>;

export class ResponseTooLargeError extends Error {
  override readonly name = "ResponseTooLargeError";
}

export function createOutboundClient(options: OutboundClientOptions = {}): OutboundSend {
  const guard: ConnectGuardOptions = {
    ...(options.allowPrivate ? { allowPrivate: options.allowPrivate } : {}),
    ...(options.resolve ? { resolve: options.resolve } : {}),
  };
  const pooling = { keepAlive: options.keepAlive === true };
  const agents = {
    "http:": createGuardedAgent("http:", guard, {}, pooling),
    "https:": createGuardedAgent(
      "https:",
      guard,
      options.trustedCa ? { ca: options.trustedCa } : {},
      pooling,
    ),
  };

  const sendOnce = (outbound: OutboundRequest, body: Buffer | undefined): Promise<OutboundResponse> => {
    const { url } = outbound;
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise<OutboundResponse>((resolve, reject) => {
      const req = send(
        {
          protocol: url.protocol,
          hostname: url.hostname.replace(/^\[|\]$/g, ""),
          port: url.port || (url.protocol === "https:" ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          method: outbound.method ?? "GET",
          headers: {
            "accept-encoding": "gzip, deflate, br",
            ...outbound.headers,
            ...(body ? { "content-length": String(body.byteLength) } : {}),
          },
          agent: url.protocol === "https:" ? agents["https:"] : agents["http:"],
          signal: outbound.signal,
        },
        (response) => resolve(wrap(response)),
      );
      req.on("error", (error: NodeJS.ErrnoException) => {
        reject(Object.assign(error, { reusedConnection: req.reusedSocket }));
      });
      req.end(body);
    });
  };

  return (outbound) => {
    const { url } = outbound;
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      return Promise.reject(new TypeError("outbound requests need an http(s) URL"));
    }
    if (url.username !== "" || url.password !== "") {
      return Promise.reject(new TypeError("outbound requests never carry credentials in the URL"));
    }
    const body = outbound.body === undefined ? undefined : Buffer.from(outbound.body);
    return sendOnce(outbound, body).catch((error: unknown) => {
      // A pooled connection the server closed while idle: nothing was processed, so a request
      // without a body is sent again, on a new (guarded) connection. Only once, and never a POST.
      if (body === undefined && isStaleConnection(error) && !outbound.signal.aborted) {
        return sendOnce(outbound, body);
      }
      throw error;
    });
  };
}

function isStaleConnection(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, reusedConnection } = error as NodeJS.ErrnoException & { reusedConnection?: boolean };
  return reusedConnection === true && (code === "ECONNRESET" || code === "EPIPE");
}

function wrap(response: IncomingMessage): OutboundResponse {
  const headers = new Headers();
  for (let index = 0; index + 1 < response.rawHeaders.length; index += 2) {
    headers.append(response.rawHeaders[index] ?? "", response.rawHeaders[index + 1] ?? "");
  }
  const encoding = (response.headers["content-encoding"] ?? "identity").trim().toLowerCase();
  return {
    status: response.statusCode ?? 0,
    headers,
    read: (maxBytes) => {
      const declared = Number(response.headers["content-length"]);
      if (encoding === "identity" && Number.isFinite(declared) && declared > maxBytes) {
        response.destroy();
        return Promise.reject(new ResponseTooLargeError(`larger than ${maxBytes} bytes`));
      }
      return collect(response, encoding, maxBytes, "fail");
    },
    readPrefix: (maxBytes) => collect(response, encoding, maxBytes, "truncate"),
    stream: (maxBytes) => pieces(response, encoding, maxBytes),
    discard: () => {
      response.destroy();
    },
  };
}

async function collect(
  response: IncomingMessage,
  encoding: string,
  maxBytes: number,
  overflow: "fail" | "truncate",
): Promise<Uint8Array> {
  const stream = decoded(response, encoding);
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of stream) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      if (received + buffer.length > maxBytes) {
        if (overflow === "fail") throw new ResponseTooLargeError(`larger than ${maxBytes} bytes`);
        chunks.push(buffer.subarray(0, maxBytes - received));
        received = maxBytes;
        break;
      }
      received += buffer.length;
      chunks.push(buffer);
    }
  } finally {
    // Whatever is left (a cap, an error, a truncation) is not read.
    if (!response.complete) response.destroy();
    if (stream !== response) stream.destroy();
  }
  const all = Buffer.concat(chunks);
  return new Uint8Array(all.buffer, all.byteOffset, all.byteLength);
}

async function* pieces(
  response: IncomingMessage,
  encoding: string,
  maxBytes: number,
): AsyncGenerator<Uint8Array> {
  const stream = decoded(response, encoding);
  let received = 0;
  try {
    for await (const chunk of stream) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      received += buffer.length;
      if (received > maxBytes) throw new ResponseTooLargeError(`larger than ${maxBytes} bytes`);
      yield new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    }
  } finally {
    if (!response.complete) response.destroy();
    if (stream !== response) stream.destroy();
  }
}

/** The body as sent, or decompressed (caps then count decompressed bytes: no bomb gets past them). */
function decoded(response: IncomingMessage, encoding: string): Readable {
  const decompress =
    encoding === "gzip" || encoding === "x-gzip"
      ? createGunzip()
      : encoding === "deflate"
        ? createInflate()
        : encoding === "br"
          ? createBrotliDecompress()
          : undefined;
  if (!decompress) return response;
  response.on("error", (error) => decompress.destroy(error));
  return response.pipe(decompress);
}
