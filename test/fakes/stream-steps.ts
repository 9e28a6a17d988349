/**
 * Streamed answers for the protocol fakes: a model that produces its reply piece by piece, at a
 * pace, and can stall, fail or wait mid-stream. A script is plain JSON (the keyed fakes receive it
 * over their control API), and `playStream` turns it into bytes on the wire:
 *   - `chunk`: raw text as is (Server-Sent Events lines of an OpenAI-compatible server), or
 *     `base64`: raw bytes (a write that ends inside a multi-byte character);
 *   - `event` / `exception`: one AWS event-stream message (application/vnd.amazon.eventstream:
 *     prelude with total and header lengths, prelude CRC32, headers, JSON payload, message CRC32),
 *     encoded by the SDK's own codec, as Bedrock's ConverseStream sends them;
 *   - `pause`: wait that many milliseconds (tokens at a realistic pace);
 *   - `hold`: wait until the test releases the stream (proves the client saw what came before
 *     while the model was still "writing", without timing anything);
 *   - `stall`: send nothing more and keep the connection open;
 *   - `reset`: drop the connection mid-stream.
 */
import { EventStreamCodec } from "@smithy/core/event-streams";
import { fromUtf8, toUtf8 } from "@smithy/core/serde";

export type StreamStep =
  | { chunk: string }
  | { base64: string }
  | { event: string; payload: unknown }
  | { exception: string; payload: unknown }
  | { pause: number }
  | { hold: true }
  | { stall: true }
  | { reset: true };

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One AWS event-stream message, as Bedrock frames each ConverseStream event. */
export function eventStreamFrame(
  messageType: "event" | "exception",
  type: string,
  payload: unknown,
): Uint8Array {
  return codec.encode({
    headers: {
      ":message-type": { type: "string", value: messageType },
      [messageType === "event" ? ":event-type" : ":exception-type"]: { type: "string", value: type },
      ":content-type": { type: "string", value: "application/json" },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/** Where a stream is written: both HTTP/1.1 and HTTP/2 responses fit. */
export interface StreamTarget {
  write(chunk: Uint8Array | string): unknown;
  end(): unknown;
  destroy(): unknown;
}

/**
 * Plays `steps` into `target`. Resolves when the stream ended (or stalled, or was reset);
 * `closed()` says the client went away, which stops the play (no timer is left behind).
 */
export async function playStream(
  steps: readonly StreamStep[],
  target: StreamTarget,
  options: { closed: () => boolean; released: () => Promise<void>; onClose: (listener: () => void) => void },
): Promise<void> {
  for (const step of steps) {
    if (options.closed()) return;
    if ("pause" in step) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, step.pause);
        options.onClose(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    } else if ("hold" in step) {
      await Promise.race([options.released(), new Promise<void>((resolve) => options.onClose(resolve))]);
    } else if ("stall" in step) {
      return;
    } else if ("reset" in step) {
      target.destroy();
      return;
    } else if ("chunk" in step) {
      target.write(step.chunk);
    } else if ("base64" in step) {
      target.write(Buffer.from(step.base64, "base64"));
    } else if ("event" in step) {
      target.write(eventStreamFrame("event", step.event, step.payload));
    } else {
      target.write(eventStreamFrame("exception", step.exception, step.payload));
    }
  }
  if (!options.closed()) target.end();
}

/** A release gate: `hold` steps wait for `release()`; a release that comes first is kept. */
export function releaseGate(): { released: () => Promise<void>; release: () => void } {
  let pending = 0;
  const waiting: (() => void)[] = [];
  return {
    released: () =>
      new Promise<void>((resolve) => {
        if (pending > 0) {
          pending--;
          resolve();
        } else {
          waiting.push(resolve);
        }
      }),
    release: () => {
      const next = waiting.shift();
      if (next) next();
      else pending++;
    },
  };
}

/** Splits a reply into token-like pieces (words with their leading space), as models stream them. */
export function tokens(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}
