/**
 * A streamed turn as Server-Sent Events (text/event-stream), the events of POST /api/message/stream:
 *
 *   event: message.start   data: {"conversation_id","message_id","status"}   (in handoff: message_id
 *                          null, and nothing follows: a person answers, the chatbot is silent)
 *   event: message.delta   data: {"text"}                  the reply's text as the model produces it
 *   event: message.end     data: {"message_id","role","content","created_at","sources"}   the stored message
 *   event: error           data: {"detail"}                the reply failed after the start
 *
 * One start … end per reply message. After an `error` the text received since the start is void:
 * the deltas that follow are the chatbot's fallback reply from its beginning, and `message.end`
 * always holds the message as stored. `message.end` is sent once the turn is stored, so a client that
 * saw it can rely on the history. An `error` with no end after it means the turn could not be
 * completed (its store failed): retry with the same Idempotency-Key.
 */

import type { TurnFailure, TurnResult } from "#functions/domain/messages";
import { toFormatB } from "#functions/errors";
import { type ReplyView, toReplyView } from "#functions/http/message-view";
import type { ConversationStatus } from "#functions/store/items";

/** Headers of a stream: no proxy may buffer or transform it. */
export const eventStreamHeaders: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-store, no-transform",
  "x-accel-buffering": "no",
};

/** What the `error` event says for each way a reply can fail after the start. */
export const failureDetails: Readonly<Record<TurnFailure, string>> = {
  stalled: "The model stopped sending its reply",
  timeout: "The reply took too long",
  failed: "The model could not reply",
};

export function sseEvent(name: string, data: unknown): string {
  // JSON escapes line breaks, so the data is one line.
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The body a completed streamed turn stores with its Idempotency-Key, and replays as events. */
export interface StreamedTurnBody {
  conversation_id: string;
  status: ConversationStatus;
  messages: ReplyView[];
}

/** A stored body as read back: one stored before replies carried sources has none. */
export type StoredTurnBody = Omit<StreamedTurnBody, "messages"> & {
  messages: (Omit<ReplyView, "sources"> & { sources?: ReplyView["sources"] })[];
};

export function streamedTurnBody(result: TurnResult, status: ConversationStatus): StreamedTurnBody {
  return {
    conversation_id: result.conversationId,
    status,
    messages: result.messages.map(toReplyView),
  };
}

/** Writes a turn's events as it goes. */
export class TurnEvents {
  /** Text of the current message sent since its start (or since an error). */
  private sent = "";

  constructor(private readonly write: (chunk: string) => void) {}

  /** In handoff there is no reply: the start names none (`message_id` null) and nothing follows. */
  started(start: { conversationId: string; messageId: string | null; status: ConversationStatus }): void {
    this.write(
      sseEvent("message.start", {
        conversation_id: start.conversationId,
        message_id: start.messageId,
        status: start.status,
      }),
    );
  }

  text(delta: string): void {
    if (delta === "") return;
    this.sent += delta;
    this.write(sseEvent("message.delta", { text: delta }));
  }

  failed(failure: TurnFailure): void {
    this.sent = "";
    this.write(sseEvent("error", { detail: failureDetails[failure] }));
  }

  /** The turn is stored: what is left of the first message, its end, then the others whole. */
  finished(result: TurnResult): void {
    const [first, ...others] = result.messages;
    if (!first) return;
    // The deltas add up to the stored text (agent/reply-text.ts), so only an unstreamed rest is left.
    const rest = first.content.startsWith(this.sent) ? first.content.slice(this.sent.length) : "";
    this.text(rest);
    this.write(sseEvent("message.end", storedMessage(first)));
    for (const message of others) {
      // The turn is decided by now: a later message starts with the status it left (a handoff
      // message after the model's own line says `handoff`, as a replay of the turn does).
      this.write(
        sseEvent("message.start", {
          conversation_id: result.conversationId,
          message_id: message.messageId,
          status: result.status,
        }),
      );
      this.sent = "";
      this.text(message.content);
      this.write(sseEvent("message.end", storedMessage(message)));
    }
  }

  /** The turn could not be completed after the start (its store failed): say so; nothing more follows. */
  broken(error: unknown): void {
    this.write(sseEvent("error", toFormatB(error).body));
  }
}

const storedMessage = (message: TurnResult["messages"][number]): ReplyView => toReplyView(message);

/** The events of a completed turn, replayed from what its Idempotency-Key stored. */
export function replayedEvents(body: StoredTurnBody): string {
  if (body.messages.length === 0)
    return sseEvent("message.start", {
      conversation_id: body.conversation_id,
      message_id: null,
      status: body.status,
    });
  return body.messages
    .map(
      (message, position) =>
        sseEvent("message.start", {
          conversation_id: body.conversation_id,
          message_id: message.message_id,
          // As it went live: a turn with replies began `open` (in handoff there are none), and
          // the messages after the first start with the status the turn left.
          status: position === 0 ? "open" : body.status,
        }) +
        sseEvent("message.delta", { text: message.content }) +
        // Replies stored before replies carried sources have none.
        sseEvent("message.end", { ...message, sources: message.sources ?? [] }),
    )
    .join("");
}
