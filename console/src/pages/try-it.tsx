/**
 * Try it: chat with a chatbot as a visitor would, through the public API with a short-lived test
 * key (`POST /manage/api-keys` with `test`), so the turn is exactly what a visitor's app gets, and
 * the conversation is marked as a test in the lists. Replies are streamed
 * (`POST {streamUrl}api/message/stream`) and appear as they are written; a stage without a stream
 * URL gets the whole reply from `POST /api/message`.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, must, type paths, publicApi } from "../api/client.ts";
import { streamBaseUrl } from "../config.ts";
import { serverSentEvents } from "../lib/event-stream.ts";
import { organizationId } from "../lib/workspace.ts";
import { ErrorNotice, useAction } from "../ui/kit.tsx";
import { Link } from "../ui/nav.tsx";
import { type ReplySource, Sources } from "../ui/sources.tsx";
import type { Chatbot } from "./chatbots.tsx";

interface Line {
  id: string;
  role: "user" | "assistant";
  content: string;
  /** The knowledge sources a stored reply drew on. */
  sources?: ReplySource[];
  /** Still being written (the stream's message has started, not ended). */
  writing?: boolean;
}

type StoredReply =
  paths["/api/message"]["post"]["responses"][200]["content"]["application/json"]["messages"][number];

/** Streams one turn: `onLine` gets each reply message as it grows, and once more as stored. */
async function streamTurn(
  key: string,
  base: string,
  body: { conversation_id: string; message: string },
  onLine: (line: Line) => void,
): Promise<void> {
  const stream = await must(publicApi(key, base).POST("/api/message/stream", { body, parseAs: "stream" }));
  if (!stream) throw new ApiError("The reply stream was empty.", 200, undefined, []);
  let current = null as Line | null;
  let failure = null as string | null;
  for await (const { event, data } of serverSentEvents(stream)) {
    const payload = JSON.parse(data) as Record<string, unknown>;
    if (event === "message.start") {
      current = { id: String(payload.message_id), role: "assistant", content: "", writing: true };
      failure = null;
    } else if (event === "message.delta" && current) {
      current = { ...current, content: current.content + String(payload.text ?? "") };
    } else if (event === "error") {
      // What was written since the start is void: the fallback reply follows from its beginning.
      failure = String(payload.detail ?? "The reply failed");
      if (current) current = { ...current, content: "" };
    } else if (event === "message.end") {
      const stored = payload as unknown as StoredReply;
      current = {
        id: stored.message_id,
        role: "assistant",
        content: stored.content,
        sources: stored.sources,
      };
      onLine(current);
      current = null;
      continue;
    }
    if (current) onLine(current);
  }
  if (current) onLine({ ...current, writing: false });
  if (failure) throw new ApiError(failure, 503, undefined, []);
}

/** Test keys by organization, reused while they have more than five minutes left. */
const testKeys = new Map<string, { key: string; expiresAt: number }>();

async function testKey(): Promise<string> {
  const organization = organizationId.value ?? "";
  const held = testKeys.get(organization);
  if (held && held.expiresAt - Date.now() > 5 * 60_000) return held.key;
  const created = await must(api.POST("/manage/api-keys", { body: { name: "Try it", test: true } }));
  const expiresAt = created.expires_at ? Date.parse(created.expires_at) : Date.now() + 30 * 60_000;
  testKeys.set(organization, { key: created.key, expiresAt });
  return created.key;
}

export function TryIt({ bot }: { bot: Chatbot }) {
  const [conversationId, setConversationId] = useState<string | null>(null);
  const [lines, setLines] = useState<Line[]>([]);
  const action = useAction();
  const log = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [lines]);

  const send = async (text: string) => {
    const key = await testKey();
    const client = publicApi(key);
    let id = conversationId;
    if (!id) {
      const started = await must(
        client.POST("/api/conversation", { body: { chatbot_id: bot.chatbot_id, user_name: "Console test" } }),
      );
      id = started.conversation_id;
      setConversationId(id);
    }
    setLines((current) => [...current, { id: `local-${current.length}`, role: "user", content: text }]);
    const body = { conversation_id: id, message: text };
    const streamBase = streamBaseUrl();
    if (streamBase) {
      await streamTurn(key, streamBase, body, (line) =>
        setLines((current) => {
          const at = current.findIndex((candidate) => candidate.id === line.id);
          return at === -1
            ? [...current, line]
            : current.map((candidate, index) => (index === at ? line : candidate));
        }),
      );
      return;
    }
    const turn = await must(client.POST("/api/message", { body }));
    setLines((current) => [
      ...current,
      ...turn.messages.map((message) => ({
        id: message.message_id,
        role: "assistant" as const,
        content: message.content,
        sources: message.sources,
      })),
    ]);
  };

  return (
    <article aria-labelledby="try-title">
      <header class="page-header">
        <div>
          <h2 id="try-title">Try it</h2>
          <p class="intro">
            Chat with {bot.name} as a visitor would. These conversations are marked as tests.
          </p>
        </div>
        <div class="actions">
          {conversationId && <Link href={`/conversations/${conversationId}`}>Open the transcript</Link>}
          <button
            type="button"
            class="secondary outline small"
            onClick={() => {
              setConversationId(null);
              setLines([]);
              action.clear();
              input.current?.focus();
            }}
          >
            New conversation
          </button>
        </div>
      </header>
      <div class="chat" ref={log} role="log" aria-live="polite" aria-label={`Conversation with ${bot.name}`}>
        {lines.length === 0 && <p class="event">Say hello, or ask something from the chatbot's knowledge.</p>}
        {lines.map((line) => (
          <div key={line.id} class={`bubble ${line.role}`} aria-busy={line.writing ? "true" : undefined}>
            <span class="who">{line.role === "user" ? "You" : bot.name}</span>
            {line.content}
            <Sources sources={line.sources} />
          </div>
        ))}
        {action.busy && !lines.some((line) => line.writing) && (
          <p class="event" aria-busy="true">
            {bot.name} is answering…
          </p>
        )}
      </div>
      {action.error !== null && <ErrorNotice error={action.error} />}
      <form
        class="composer"
        onSubmit={async (event) => {
          event.preventDefault();
          const field = input.current;
          const text = field?.value.trim() ?? "";
          if (!text || !field) return;
          field.value = "";
          await action.run(() => send(text));
          field.focus();
        }}
      >
        <label class="visually-hidden" for="try-message">
          Message
        </label>
        <input
          id="try-message"
          ref={input}
          name="message"
          autocomplete="off"
          maxLength={8000}
          placeholder="Type a message…"
          required
        />
        <button type="submit" disabled={action.busy}>
          Send
        </button>
      </form>
    </article>
  );
}
