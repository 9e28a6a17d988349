/**
 * A client of the streaming endpoint, written from the Server-Sent Events format itself (not from
 * the service's code): it reads events one at a time as they arrive, so a test can act between
 * two of them (release a held model, disconnect), and it can also read a JSON error answer.
 */
import { environment } from "#test/support/harness";

export interface StreamEvent {
  event: string;
  data: unknown;
}

export interface OpenStream {
  status: number;
  headers: Headers;
  /** The next event, or undefined once the stream ended. */
  next(): Promise<StreamEvent | undefined>;
  /** Reads events until one named `name` (returned) or the end (undefined). */
  until(name: string): Promise<StreamEvent | undefined>;
  /** Every event still to come. */
  rest(): Promise<StreamEvent[]>;
  /** All events read so far. */
  readonly seen: StreamEvent[];
  /** The body as JSON (an answer that is not a stream). */
  json<T = unknown>(): Promise<T>;
  /** Hangs up, as a client that went away. */
  disconnect(): void;
}

export interface StreamRequest {
  key?: string;
  authorization?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  method?: string;
  path?: string;
}

export async function openStream(request: StreamRequest): Promise<OpenStream> {
  const abort = new AbortController();
  const headers: Record<string, string> = { ...request.headers };
  const authorization =
    request.authorization === undefined
      ? request.key
        ? `Bearer ${request.key}`
        : undefined
      : request.authorization;
  if (authorization) headers.authorization = authorization;
  let body: string | undefined;
  if (request.body !== undefined) {
    body = typeof request.body === "string" ? request.body : JSON.stringify(request.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(`${environment.streamUrl}${request.path ?? "/api/message/stream"}`, {
    method: request.method ?? "POST",
    headers,
    ...(body === undefined ? {} : { body }),
    signal: abort.signal,
  });
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let ended = false;
  const seen: StreamEvent[] = [];

  const parse = (block: string): StreamEvent | undefined => {
    let event = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length === 0) return undefined;
    return { event, data: JSON.parse(data.join("\n")) };
  };
  const next = async (): Promise<StreamEvent | undefined> => {
    while (true) {
      const boundary = buffer.indexOf("\n\n");
      if (boundary !== -1) {
        const block = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        const event = parse(block);
        if (event) {
          seen.push(event);
          return event;
        }
        continue;
      }
      if (ended || !reader) return undefined;
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        buffer += decoder.decode();
      } else {
        buffer += decoder.decode(value, { stream: true });
      }
    }
  };
  return {
    status: response.status,
    headers: response.headers,
    next,
    async until(name) {
      for (let event = await next(); event; event = await next()) if (event.event === name) return event;
      return undefined;
    },
    async rest() {
      const events: StreamEvent[] = [];
      for (let event = await next(); event; event = await next()) events.push(event);
      return events;
    },
    seen,
    async json<T>() {
      const chunks: Uint8Array[] = [];
      while (reader) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
      return JSON.parse(Buffer.concat(chunks).toString("utf8")) as T;
    },
    disconnect: () => abort.abort(),
  };
}
