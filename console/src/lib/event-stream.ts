/**
 * Server-Sent Events read from a fetch body (the browser's EventSource cannot POST or send a
 * bearer key): UTF-8 decoded across reads, events split on blank lines, `event:` and `data:`
 * fields as the format defines them (several data lines joined by a line break, comments ignored).
 */
export interface ServerSentEvent {
  event: string;
  data: string;
}

export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "message";
  let data: string[] = [];
  const line = function* (text: string): Generator<ServerSentEvent> {
    if (text === "") {
      if (data.length > 0) yield { event, data: data.join("\n") };
      event = "message";
      data = [];
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.search(/\r\n|\r|\n/);
      // A "\r" last in what arrived may be the first half of "\r\n": wait for the next read.
      while (end !== -1 && !(end === buffer.length - 1 && buffer[end] === "\r")) {
        const text = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        yield* line(text);
        end = buffer.search(/\r\n|\r|\n/);
      }
    }
    buffer += decoder.decode();
    if (buffer !== "") yield* line(buffer);
    yield* line("");
  } finally {
    reader.releaseLock();
  }
}
