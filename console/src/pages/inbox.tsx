/**
 * The Inbox: where people answer. Conversations waiting for a person come first, then open ones
 * with recent activity; the chosen one's transcript follows new messages as they arrive (polling
 * while the page is in view), and admins take it over, reply, hand it back or close it. Here a
 * person also chooses how to be told that a visitor started waiting (lib/attention.ts).
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, must, type paths } from "../api/client.ts";
import {
  alertPreferences,
  notificationPermission,
  notificationsSupported,
  setNotify,
  setSound,
} from "../lib/attention.ts";
import { usePolling } from "../lib/polling.ts";
import { navigate, queryParam } from "../lib/router.ts";
import { loadWaiting } from "../lib/waiting.ts";
import { canWrite, organizationId } from "../lib/workspace.ts";
import {
  Badge,
  ConfirmButton,
  Empty,
  ErrorNotice,
  formatTime,
  type Load,
  Loaded,
  messageOf,
  PageHeader,
  useAction,
} from "../ui/kit.tsx";
import { Link } from "../ui/nav.tsx";
import { contactLabel, statusOf, type TranscriptMessage } from "./conversation-vocabulary.ts";
import { TranscriptEntries } from "./transcript.tsx";

type Conversation =
  paths["/manage/conversations"]["get"]["responses"][200]["content"]["application/json"]["conversations"][number];
type Chatbot =
  paths["/manage/chatbots"]["get"]["responses"][200]["content"]["application/json"]["chatbots"][number];
type Transcript =
  paths["/manage/conversations/{conversation_id}"]["get"]["responses"][200]["content"]["application/json"];
type ConversationView = Omit<Transcript, "messages" | "has_more" | "next_cursor">;

/** How often the list and the open transcript look for news while the page is in view. */
const LIST_POLL_MS = 5_000;
const TRANSCRIPT_POLL_MS = 2_500;
/** Open conversations shown below the waiting ones: the most recently active. */
const RECENT_OPEN = 25;

export function InboxPage() {
  const selected = queryParam("conversation");
  // Bumped after a change made here, so the list shows it at once rather than at its next poll.
  const [changes, setChanges] = useState(0);
  const [bots, setBots] = useState<Chatbot[]>([]);
  useEffect(() => {
    must(api.GET("/manage/chatbots")).then(
      ({ chatbots }) => setBots(chatbots),
      // Without names the inbox still works: conversations then say "Chatbot".
      () => undefined,
    );
  }, [organizationId.value]);
  return (
    <>
      <PageHeader
        title="Inbox"
        intro="Conversations waiting for a person first, then open ones with recent activity. New messages appear as they arrive."
      >
        <AlertChoices />
      </PageHeader>
      <div class="inbox">
        <InboxList bots={bots} selected={selected} changes={changes} />
        {selected ? (
          <InboxConversation
            key={selected}
            conversationId={selected}
            bots={bots}
            onChanged={() => setChanges((value) => value + 1)}
          />
        ) : (
          <section class="inbox-pane" aria-label="Conversation">
            <Empty>Choose a conversation to read it{canWrite.value ? " and answer" : ""}.</Empty>
          </section>
        )}
      </div>
    </>
  );
}

interface Lists {
  waiting: Conversation[];
  /** More conversations are waiting than the list shows. */
  moreWaiting: boolean;
  open: Conversation[];
}

async function loadLists(organization: string): Promise<Lists> {
  const [waiting, open] = await Promise.all([
    loadWaiting(organization),
    must(api.GET("/manage/conversations", { params: { query: { status: "open", limit: RECENT_OPEN } } })),
  ]);
  return { waiting: waiting.conversations, moreWaiting: waiting.more, open: open.conversations };
}

/** "3", or "100+" when more wait than the list shows. */
const waitingCountOf = ({ waiting, moreWaiting }: Lists) => `${waiting.length}${moreWaiting ? "+" : ""}`;

function InboxList({
  bots,
  selected,
  changes,
}: {
  bots: Chatbot[];
  selected: string | null;
  changes: number;
}) {
  const organization = organizationId.value ?? "";
  const [state, setState] = useState<Load<Lists>>({ status: "loading" });
  const [staleError, setStaleError] = useState<unknown>(null);
  const [round, setRound] = useState(0);
  const refresh = async () => {
    try {
      setState({ status: "ready", data: await loadLists(organization) });
      setStaleError(null);
    } catch (error) {
      // Keep showing what was loaded; say that it may be out of date.
      setStaleError(error);
    }
  };
  useEffect(() => {
    let live = true;
    loadLists(organization).then(
      (data) => live && setState({ status: "ready", data }),
      (error: unknown) => live && setState({ status: "error", error }),
    );
    return () => {
      live = false;
    };
  }, [organizationId.value, round]);
  useEffect(() => {
    if (changes > 0) void refresh();
  }, [changes]);
  usePolling(refresh, LIST_POLL_MS, [organizationId.value]);
  const waitingCount = state.status === "ready" ? waitingCountOf(state.data) : "";
  const names = new Map(bots.map((bot) => [bot.chatbot_id, bot.name]));
  return (
    <section class="inbox-list" aria-label="Conversations to answer">
      <Loaded state={state} retry={() => setRound((value) => value + 1)}>
        {({ waiting, moreWaiting, open }) => (
          <>
            {staleError !== null && (
              <p class="notice error" role="status">
                Could not refresh the list: {messageOf(staleError)}
              </p>
            )}
            <h2 id="inbox-waiting">Waiting for a person ({waitingCount})</h2>
            {waiting.length === 0 ? (
              <p class="intro">No conversation is waiting for a person.</p>
            ) : (
              <InboxItems labelledBy="inbox-waiting" items={waiting} names={names} selected={selected} />
            )}
            {moreWaiting && (
              <p class="intro">
                More are waiting than these {waiting.length}, the most recently active.{" "}
                <Link href="/conversations?status=handoff">All waiting conversations</Link>
              </p>
            )}
            <h2 id="inbox-open">Open, recent activity</h2>
            {open.length === 0 ? (
              <p class="intro">No open conversations.</p>
            ) : (
              <InboxItems labelledBy="inbox-open" items={open} names={names} selected={selected} />
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}

function InboxItems({
  labelledBy,
  items,
  names,
  selected,
}: {
  labelledBy: string;
  items: Conversation[];
  names: Map<string, string>;
  selected: string | null;
}) {
  return (
    <ul class="inbox-items" aria-labelledby={labelledBy}>
      {items.map((conversation) => {
        const href = `/inbox?conversation=${conversation.conversation_id}`;
        const status = statusOf(conversation.status);
        const who = contactLabel(conversation);
        return (
          <li key={conversation.conversation_id}>
            <a
              href={href}
              aria-current={conversation.conversation_id === selected ? "true" : undefined}
              onClick={(event) => {
                if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
                event.preventDefault();
                navigate(href);
              }}
            >
              <strong>{who}</strong> <Badge tone={status.tone}>{status.label}</Badge>
              {conversation.test && <Badge tone="info">Test</Badge>}
              {conversation.channel === "widget" && <Badge tone="info">Website</Badge>}
              <small>
                {names.get(conversation.chatbot_id) ?? "Chatbot"} ·{" "}
                {formatTime(conversation.last_activity_at)}
              </small>
            </a>
          </li>
        );
      })}
    </ul>
  );
}

interface Thread {
  conversation: ConversationView;
  messages: TranscriptMessage[];
  /** Messages before the last page: they never change, so a refresh reads only from there. */
  settled: number;
  /** The cursor that reads the last page (none: the first). */
  lastPage: string | undefined;
}

/** The transcript from `from` on (every page), after the `kept` messages before it. */
async function readThread(conversationId: string, kept: TranscriptMessage[], from?: string): Promise<Thread> {
  let messages = kept;
  let cursor = from;
  for (;;) {
    const page = await must(
      api.GET("/manage/conversations/{conversation_id}", {
        params: {
          path: { conversation_id: conversationId },
          query: { limit: 100, ...(cursor ? { cursor } : {}) },
        },
      }),
    );
    const { messages: found, has_more: _more, next_cursor: next, ...conversation } = page;
    const settled = messages.length;
    messages = [...messages, ...found];
    if (!next) return { conversation, messages, settled, lastPage: cursor };
    cursor = next;
  }
}

function InboxConversation({
  conversationId,
  bots,
  onChanged,
}: {
  conversationId: string;
  bots: Chatbot[];
  onChanged: () => void;
}) {
  const [state, setState] = useState<Load<Thread>>({ status: "loading" });
  const [staleError, setStaleError] = useState<unknown>(null);
  const [round, setRound] = useState(0);
  const thread = state.status === "ready" ? state.data : null;
  useEffect(() => {
    let live = true;
    readThread(conversationId, []).then(
      (data) => live && setState({ status: "ready", data }),
      (error: unknown) => live && setState({ status: "error", error }),
    );
    return () => {
      live = false;
    };
  }, [conversationId, organizationId.value, round]);
  const refresh = async () => {
    if (!thread) return;
    try {
      const next = await readThread(
        conversationId,
        thread.messages.slice(0, thread.settled),
        thread.lastPage,
      );
      setState({ status: "ready", data: next });
      setStaleError(null);
    } catch (error) {
      setStaleError(error);
    }
  };
  usePolling(refresh, TRANSCRIPT_POLL_MS, [conversationId, organizationId.value]);
  const bot = thread
    ? bots.find((candidate) => candidate.chatbot_id === thread.conversation.chatbot_id)
    : undefined;
  return (
    <section class="inbox-pane" aria-labelledby="inbox-conversation-title">
      <Loaded state={state} retry={() => setRound((value) => value + 1)}>
        {({ conversation, messages }) => {
          const status = statusOf(conversation.status);
          return (
            <>
              <header class="inbox-header">
                <div>
                  <h2 id="inbox-conversation-title">{contactLabel(conversation)}</h2>
                  <p class="intro">
                    <Badge tone={status.tone}>{status.label}</Badge>{" "}
                    {conversation.channel === "widget" && <Badge tone="info">Website widget</Badge>} With{" "}
                    {bot?.name ?? "a chatbot"}, started {formatTime(conversation.created_at)} ·{" "}
                    <Link href={`/conversations/${conversation.conversation_id}`}>Details</Link>
                  </p>
                  {(conversation.contact.user_email || conversation.contact.user_phone) && (
                    <p class="intro">
                      {[conversation.contact.user_email, conversation.contact.user_phone]
                        .filter(Boolean)
                        .join(" · ")}{" "}
                      · <Link href={`/contacts/${conversation.contact_id}`}>Contact</Link>
                    </p>
                  )}
                </div>
                {canWrite.value && (
                  <StatusControls
                    conversation={conversation}
                    onDone={async () => {
                      await refresh();
                      onChanged();
                    }}
                  />
                )}
              </header>
              {staleError !== null && (
                <p class="notice error" role="status">
                  Could not look for new messages: {messageOf(staleError)}
                </p>
              )}
              {messages.length === 0 && !conversation.status_changed_at ? (
                <Empty>No messages yet.</Empty>
              ) : (
                <FollowingTranscript count={messages.length}>
                  <TranscriptEntries
                    messages={messages}
                    status={conversation.status}
                    statusChangedAt={conversation.status_changed_at}
                    complete
                    chatbot={bot?.name ?? "Chatbot"}
                    visitor={contactLabel(conversation)}
                    fallbackReply={bot?.fallback_reply ?? null}
                    live
                  />
                </FollowingTranscript>
              )}
              {canWrite.value ? (
                <ReplyForm
                  conversation={conversation}
                  onSent={async () => {
                    await refresh();
                    onChanged();
                  }}
                />
              ) : (
                <p class="intro">
                  Only administrators answer visitors; you can follow the conversation here.
                </p>
              )}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}

/** Keeps the newest message in view as messages arrive (the transcript scrolls on its own). */
function FollowingTranscript({ count, children }: { count: number; children: ComponentChildren }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const chat = box.current?.querySelector(".chat");
    if (chat) chat.scrollTop = chat.scrollHeight;
  }, [count]);
  return <div ref={box}>{children}</div>;
}

function StatusControls({
  conversation,
  onDone,
}: {
  conversation: ConversationView;
  onDone: () => Promise<void>;
}) {
  const action = useAction();
  const id = conversation.conversation_id;
  const path = { params: { path: { conversation_id: id } } };
  const change = (work: () => Promise<unknown>) =>
    action.run(async () => {
      await work();
      await onDone();
    });
  const closed = conversation.status === "closed";
  return (
    <div class="actions">
      <div class="inbox-controls">
        <button
          type="button"
          class="small"
          disabled={action.busy || conversation.status !== "open"}
          onClick={() =>
            change(() => must(api.POST("/manage/conversations/{conversation_id}/take-over", path)))
          }
        >
          Take over
        </button>
        <button
          type="button"
          class="secondary small"
          disabled={action.busy || conversation.status !== "handoff"}
          onClick={() =>
            change(() => must(api.POST("/manage/conversations/{conversation_id}/hand-back", path)))
          }
        >
          Hand back
        </button>
        <ConfirmButton
          label="Close"
          question="Close this conversation?"
          detail="Further visitor messages are refused (409 Conversation is closed). A closed conversation stays closed."
          confirmLabel="Close conversation"
          disabled={action.busy || closed}
          onConfirm={async () => {
            await must(api.POST("/manage/conversations/{conversation_id}/close", path));
            await onDone();
          }}
        />
      </div>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </div>
  );
}

function ReplyForm({
  conversation,
  onSent,
}: {
  conversation: ConversationView;
  onSent: () => Promise<void>;
}) {
  const action = useAction();
  const [text, setText] = useState("");
  const closed = conversation.status === "closed";
  const send = () =>
    action.run(async () => {
      const message = text.trim();
      if (!message) return;
      await must(
        api.POST("/manage/conversations/{conversation_id}/reply", {
          params: { path: { conversation_id: conversation.conversation_id } },
          body: { message },
        }),
      );
      setText("");
      await onSent();
    });
  return (
    <form
      class="inbox-reply"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <label for="inbox-reply-text">Reply to the visitor</label>
      <textarea
        id="inbox-reply-text"
        name="message"
        rows={3}
        maxLength={8000}
        required
        disabled={closed}
        value={text}
        onInput={(event) => setText((event.target as HTMLTextAreaElement).value)}
        onKeyDown={(event) => {
          // Ctrl+Enter (⌘+Enter) sends; Enter alone starts a new line.
          if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
            event.preventDefault();
            void send();
          }
        }}
        aria-describedby="inbox-reply-hint"
      />
      <small id="inbox-reply-hint">
        {closed
          ? "This conversation is closed: it takes no more messages."
          : conversation.status === "open"
            ? "Sent under your name. Replying takes the conversation over: the chatbot stops answering until you hand it back. Ctrl+Enter sends."
            : "Sent under your name. Ctrl+Enter sends."}
      </small>
      {action.error !== null && <ErrorNotice error={action.error} />}
      <button type="submit" disabled={closed || action.busy || !text.trim()} aria-busy={action.busy}>
        Send reply
      </button>
    </form>
  );
}

/**
 * How this person wants to hear of a visitor who starts waiting, while the console is open in
 * some tab: a browser notification (the browser asks them first) and a chime.
 */
function AlertChoices() {
  const { notify, sound } = alertPreferences.value;
  const permission = notificationPermission.value;
  const cannotNotify = permission === "denied" || permission === "unsupported";
  return (
    <fieldset class="alert-choices" data-personal>
      <legend>When a visitor starts waiting</legend>
      <label>
        <input
          type="checkbox"
          checked={notify}
          disabled={!notificationsSupported || permission === "denied"}
          aria-describedby={cannotNotify ? "alert-notify-hint" : undefined}
          onChange={(event) => void setNotify((event.target as HTMLInputElement).checked)}
        />
        Browser notification
      </label>
      <label>
        <input
          type="checkbox"
          checked={sound}
          onChange={(event) => setSound((event.target as HTMLInputElement).checked)}
        />
        Sound
      </label>
      {cannotNotify && (
        <small id="alert-notify-hint">
          {permission === "denied"
            ? "This browser blocks the console's notifications: allow them in its site settings."
            : "This browser cannot show notifications."}
        </small>
      )}
    </fieldset>
  );
}
