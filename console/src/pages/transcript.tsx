/**
 * A conversation's transcript as both the Conversation page and the Inbox draw it: the visitor's,
 * the chatbot's and people's messages, and each status change as a line of its own.
 */
import { Badge, formatTime } from "../ui/kit.tsx";
import { Sources } from "../ui/sources.tsx";
import { describeStatusChange, roleOf, statusOf, type TranscriptMessage } from "./conversation-vocabulary.ts";

type Entry =
  | { at: string; kind: "message"; message: TranscriptMessage }
  | { at: string; kind: "status"; key: string; text: string };

/**
 * The entries in time order. Status changes are `system` messages; a conversation whose change
 * left no such message (it predates them) still shows its current status at `statusChangedAt`.
 */
function entriesOf(
  messages: TranscriptMessage[],
  current: { status: string; statusChangedAt: string | null; complete: boolean },
): Entry[] {
  const entries: Entry[] = messages.map((message) =>
    message.role === "system"
      ? {
          at: message.created_at,
          kind: "status",
          key: message.message_id,
          text: message.status_change ? describeStatusChange(message.status_change) : message.content,
        }
      : { at: message.created_at, kind: "message", message },
  );
  const recorded = messages.some((message) => message.status_change?.to === current.status);
  if (current.statusChangedAt && current.complete && !recorded)
    entries.push({
      at: current.statusChangedAt,
      kind: "status",
      key: `status-${current.statusChangedAt}`,
      text: statusOf(current.status).becameLabel,
    });
  return entries.sort((a, b) => a.at.localeCompare(b.at));
}

export function TranscriptEntries({
  messages,
  status,
  statusChangedAt,
  complete,
  chatbot,
  visitor = "Visitor",
  fallbackReply,
  live = false,
}: {
  messages: TranscriptMessage[];
  status: string;
  statusChangedAt: string | null;
  /** Every message is loaded (no later page left). */
  complete: boolean;
  chatbot: string;
  /** What the visitor's messages are signed with (their contact's name, when known). */
  visitor?: string;
  fallbackReply: string | null;
  /** New entries are announced to screen readers as they arrive (the Inbox). */
  live?: boolean;
}) {
  const entries = entriesOf(messages, { status, statusChangedAt, complete });
  return (
    <div
      class="chat transcript"
      // The Inbox's transcript scrolls on its own: focusable, so the keyboard can scroll it too.
      {...(live ? { role: "log", "aria-label": "Messages", tabIndex: 0 } : {})}
    >
      {entries.map((entry) =>
        entry.kind === "status" ? (
          <p class="event" key={entry.key}>
            {entry.text} · {formatTime(entry.at)}
          </p>
        ) : (
          <Message
            key={entry.message.message_id}
            message={entry.message}
            chatbot={chatbot}
            visitor={visitor}
            // As usage counts them: the engine failed, or (scripted) had no answer.
            fallback={
              entry.message.fallback ||
              (entry.message.role === "assistant" && entry.message.content === fallbackReply)
            }
          />
        ),
      )}
    </div>
  );
}

const lookupTone = (outcome: string) =>
  outcome === "found" ? "good" : outcome === "not_found" ? "muted" : "bad";

function Message({
  message,
  chatbot,
  visitor,
  fallback,
}: {
  message: TranscriptMessage;
  chatbot: string;
  visitor: string;
  fallback: boolean;
}) {
  const role = roleOf(message.role);
  return (
    <div class={`bubble ${role.bubble}`}>
      <span class="who">
        {role.label(chatbot, message.agent_name, visitor)} · {formatTime(message.created_at)}
      </span>
      {message.content}
      {message.attachments.map((attachment, index) => {
        const url = typeof attachment.url === "string" ? attachment.url : null;
        return url ? (
          <img
            key={url}
            src={url}
            alt={`Attachment ${index + 1} the visitor sent`}
            loading="lazy"
            referrerPolicy="no-referrer"
          />
        ) : (
          <span key={String(attachment.sha256 ?? index)} class="badge muted">
            Uploaded image ({String(attachment.media_type ?? "image")}, not kept)
          </span>
        );
      })}
      <Sources sources={message.sources} />
      {(fallback || message.lookups.length > 0 || message.feedback) && (
        <span class="lookups">
          {fallback && <Badge tone="warn">Fallback reply</Badge>}
          {message.feedback && (
            <Badge tone={message.feedback.rating === "up" ? "good" : "bad"}>
              Visitor: thumbs {message.feedback.rating}
              {message.feedback.comment ? ` (“${message.feedback.comment}”)` : ""}
            </Badge>
          )}
          {message.lookups.map((lookup) => (
            <Badge key={lookup.tool_id + lookup.outcome} tone={lookupTone(lookup.outcome)}>
              Look-up {lookup.tool_name}: {lookup.outcome.replace("_", " ")}
              {lookup.cached ? " (cached)" : ""}
            </Badge>
          ))}
        </span>
      )}
    </div>
  );
}
