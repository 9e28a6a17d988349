/**
 * The HTTP side of OpenAI-compatible Chat Completions: a JSON request and its JSON answer, or its
 * Server-Sent Events stream read event by event. No client library: the wire format is small, and a
 * stream must be read correctly where clients commonly slip (a UTF-8 character or a line split
 * across network reads, a stream cut off before its end).
 *
 * Requests go through the service's one outbound client (net/outbound-http.ts): the address guard
 * judges every connection at connect time, so a model server's URL, whoever set it, never reaches
 * loopback, private or metadata addresses, and redirects are not followed. Only what the caller
 * gives is sent: no key from the environment, no organization header. A provider without keys (a
 * local Ollama) gets no Authorization header at all.
 */
import type { OutboundSend } from "#functions/net/outbound-http";

/** The most a completion (or a whole streamed reply) may weigh: far above any reply of 8,192 tokens. */
const MAX_RESPONSE_BYTES = 4_000_000;

/** A non-2xx answer: its status and headers (lower-case names) decide whether a retry may help. */
export class ChatApiError extends Error {
  override readonly name = "ChatApiError";
  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string>>,
  ) {
    super(`HTTP ${status}`);
  }
}

export interface ChatApi {
  /** POST the request; its JSON answer (a SyntaxError if the body is not JSON). */
  complete(request: object, signal: AbortSignal): Promise<unknown>;
  /** POST the request with `stream: true`; the JSON `data` of each event, until `[DONE]` or the end of the body. */
  stream(request: object, signal: AbortSignal): Promise<AsyncIterable<unknown>>;
}

export interface ChatApiOptions {
  /** Up to and including the version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Empty: send no Authorization header. */
  apiKey: string;
  /** The guarded outbound client (net/outbound-http.ts). */
  send: OutboundSend;
}

export function createChatApi(options: ChatApiOptions): ChatApi {
  const url = new URL(`${options.baseUrl.replace(/\/+$/, "")}/chat/completions`);
  const post = async (request: object, signal: AbortSignal, accept: string) => {
    const response = await options.send({
      url,
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept,
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      },
      body: JSON.stringify(request),
      signal,
    });
    if (response.status < 200 || response.status > 299) {
      response.discard();
      throw new ChatApiError(response.status, Object.fromEntries(response.headers));
    }
    return response;
  };
  return {
    async complete(request, signal) {
      const response = await post(request, signal, "application/json");
      return JSON.parse(new TextDecoder().decode(await response.read(MAX_RESPONSE_BYTES)));
    },
    async stream(request, signal) {
      const response = await post({ ...request, stream: true }, signal, "text/event-stream");
      return eventData(response.stream(MAX_RESPONSE_BYTES));
    },
  };
}

/**
 * The `data` of each Server-Sent Event, parsed as JSON (a SyntaxError if it is not), until the
 * `[DONE]` sentinel. Lines may end in CRLF, LF or CR; `data:` lines of one event are joined by a
 * newline; comments and other fields are skipped. The body is decoded as one UTF-8 stream, so a
 * character split across reads comes out whole.
 */
export async function* eventData(body: AsyncIterable<Uint8Array>): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let ended = false;
  /** The events completed by the text read so far; `done` once `[DONE]` came. */
  function* events(): Generator<{ done: true } | { data: unknown }> {
    while (true) {
      const match = /\r\n|\r|\n/.exec(buffer);
      if (!match) return;
      // A CR at the very end may be the first half of a CRLF: wait for the next read.
      if (match[0] === "\r" && match.index === buffer.length - 1 && !ended) return;
      const line = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      if (line === "") {
        if (data.length === 0) continue;
        const text = data.join("\n");
        data = [];
        if (text === "[DONE]") return yield { done: true };
        yield { data: JSON.parse(text) };
      } else if (line.startsWith("data:")) {
        const value = line.slice(5);
        data.push(value.startsWith(" ") ? value.slice(1) : value);
      }
      // Comments (":…") and other fields (event, id, retry) carry nothing a completion needs.
    }
  }
  const drain = function* (): Generator<unknown, boolean> {
    for (const event of events()) {
      if ("done" in event) return true;
      yield event.data;
    }
    return false;
  };
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    if (yield* drain()) return;
  }
  // The body ended: a last event without its blank line still counts.
  ended = true;
  buffer += `${decoder.decode()}\n\n`;
  yield* drain();
}
