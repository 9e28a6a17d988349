/** Conversations: the list with its filters, and one conversation's transcript. */
import { useState } from "preact/hooks";
import { api, must, type paths } from "../api/client.ts";
import { navigate, queryParam, route } from "../lib/router.ts";
import { canWrite, organizationId } from "../lib/workspace.ts";
import {
  Badge,
  ConfirmButton,
  Empty,
  ErrorNotice,
  formatTime,
  Loaded,
  Loading,
  PageHeader,
  useAction,
  useLoad,
} from "../ui/kit.tsx";
import { Link } from "../ui/nav.tsx";
import {
  type ConversationStatus,
  contactLabel,
  handoffReasonLabels,
  outcomeLabels,
  statuses,
  statusOf,
} from "./conversation-vocabulary.ts";
import { TranscriptEntries } from "./transcript.tsx";

type Page = paths["/manage/conversations"]["get"]["responses"][200]["content"]["application/json"];
type Conversation = Page["conversations"][number];
type Transcript =
  paths["/manage/conversations/{conversation_id}"]["get"]["responses"][200]["content"]["application/json"];
type Filters = NonNullable<paths["/manage/conversations"]["get"]["parameters"]["query"]>;

const filterNames = ["chatbot_id", "status", "contact_id", "external_id", "from", "to"] as const;

function filtersFromLocation(): Filters {
  const filters: Filters = {};
  for (const name of filterNames) {
    const value = queryParam(name);
    if (!value) continue;
    if (name === "status") {
      if (value in statuses) filters.status = value as ConversationStatus;
    } else filters[name] = value;
  }
  return filters;
}

export function ConversationsPage() {
  const filters = filtersFromLocation();
  const key = route.value.search;
  const [bots] = useLoad(() => must(api.GET("/manage/chatbots")), [organizationId.value]);
  const names =
    bots.status === "ready"
      ? new Map(bots.data.chatbots.map((bot) => [bot.chatbot_id, bot.name]))
      : new Map<string, string>();
  return (
    <>
      <PageHeader
        title="Conversations"
        intro="Every conversation with your chatbots, the most recent activity first."
      />
      <form
        // Mounted afresh when the location changes: its fields start from the URL. Not when the
        // chatbots arrive (what the person has typed stays); their options select themselves.
        key={key}
        class="filters"
        aria-label="Filters"
        onSubmit={(event) => {
          event.preventDefault();
          const data = new FormData(event.currentTarget);
          const query = new URLSearchParams();
          for (const name of filterNames) {
            const value = String(data.get(name) ?? "").trim();
            if (value) query.set(name, value);
          }
          navigate(`/conversations${query.size ? `?${query}` : ""}`);
        }}
      >
        <label>
          Chatbot
          <select name="chatbot_id">
            <option value="">All chatbots</option>
            {[...names].map(([id, name]) => (
              <option key={id} value={id} selected={filters.chatbot_id === id}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select name="status">
            <option value="">Any status</option>
            {Object.entries(statuses).map(([value, status]) => (
              <option key={value} value={value} selected={filters.status === value}>
                {status.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Contact id
          <input name="contact_id" defaultValue={filters.contact_id ?? ""} />
        </label>
        <label>
          External id
          <input name="external_id" defaultValue={filters.external_id ?? ""} />
        </label>
        <label>
          Active from
          <input name="from" type="date" defaultValue={filters.from ?? ""} />
        </label>
        <label>
          Active until
          <input name="to" type="date" defaultValue={filters.to ?? ""} />
        </label>
        <div class="actions">
          <button type="submit">Filter</button>
          {key && (
            <Link href="/conversations" class="small">
              Clear filters
            </Link>
          )}
        </div>
      </form>
      <ConversationList key={`${organizationId.value}${key}`} filters={filters} names={names} />
    </>
  );
}

function ConversationList({ filters, names }: { filters: Filters; names: Map<string, string> }) {
  const [more, setMore] = useState<Conversation[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const loadMore = useAction();
  const [state, reload] = useLoad(async () => {
    const page = await must(
      api.GET("/manage/conversations", { params: { query: { ...filters, limit: 25 } } }),
    );
    setCursor(page.next_cursor);
    return page;
  }, []);
  return (
    <Loaded state={state} retry={reload}>
      {(page) => {
        const rows = [...page.conversations, ...more];
        if (rows.length === 0) {
          return (
            <Empty>No conversations{Object.keys(filters).length ? " match these filters" : " yet"}.</Empty>
          );
        }
        return (
          <>
            <div class="overflow-auto">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Last activity</th>
                    <th scope="col">Contact</th>
                    <th scope="col">Chatbot</th>
                    <th scope="col">Status</th>
                    <th scope="col">Visitor messages</th>
                    <th scope="col">External id</th>
                    <th scope="col">
                      <span class="visually-hidden">Open</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((conversation) => {
                    const status = statusOf(conversation.status);
                    return (
                      <tr key={conversation.conversation_id}>
                        <td>{formatTime(conversation.last_activity_at)}</td>
                        <td>{contactLabel(conversation)}</td>
                        <td>{names.get(conversation.chatbot_id) ?? "Deleted chatbot"}</td>
                        <td>
                          <Badge tone={status.tone}>{status.label}</Badge>{" "}
                          {conversation.test && <Badge tone="info">Test</Badge>}
                          {conversation.channel === "widget" && <Badge tone="info">Website</Badge>}
                        </td>
                        <td>{conversation.visitor_message_count}</td>
                        <td>{conversation.external_id ?? "—"}</td>
                        <td>
                          <Link href={`/conversations/${conversation.conversation_id}`}>
                            Open
                            <span class="visually-hidden">
                              {" "}
                              conversation from {formatTime(conversation.created_at)}
                            </span>
                          </Link>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
            {loadMore.error !== null && <ErrorNotice error={loadMore.error} />}
            {cursor && (
              <button
                type="button"
                class="secondary"
                aria-busy={loadMore.busy}
                onClick={() =>
                  loadMore.run(async () => {
                    const next = await must(
                      api.GET("/manage/conversations", {
                        params: { query: { ...filters, limit: 25, cursor } },
                      }),
                    );
                    setMore((current) => [...current, ...next.conversations]);
                    setCursor(next.next_cursor);
                  })
                }
              >
                Load more
              </button>
            )}
          </>
        );
      }}
    </Loaded>
  );
}

export function ConversationPage({ conversationId }: { conversationId: string }) {
  const [state, reload] = useLoad(
    () =>
      Promise.all([
        must(
          api.GET("/manage/conversations/{conversation_id}", {
            params: { path: { conversation_id: conversationId }, query: { limit: 100 } },
          }),
        ),
        must(api.GET("/manage/chatbots")),
      ]),
    [conversationId, organizationId.value],
  );
  return (
    <Loaded state={state} retry={reload}>
      {([conversation, { chatbots }]) => {
        const bot = chatbots.find((candidate) => candidate.chatbot_id === conversation.chatbot_id);
        const chatbot = bot?.name ?? "Chatbot";
        const status = statusOf(conversation.status);
        return (
          <>
            <PageHeader
              title="Conversation"
              intro={
                <>
                  With {chatbot}, started {formatTime(conversation.created_at)}
                </>
              }
            >
              <Link href="/conversations">All conversations</Link>
              {conversation.status !== "closed" && (
                <Link href={`/inbox?conversation=${conversation.conversation_id}`}>
                  {canWrite.value ? "Answer in the Inbox" : "Follow in the Inbox"}
                </Link>
              )}
              {canWrite.value && conversation.status !== "closed" && (
                <ConfirmButton
                  label="Close conversation"
                  question="Close this conversation?"
                  detail="Further visitor messages are refused (409 Conversation is closed)."
                  confirmLabel="Close conversation"
                  onConfirm={async () => {
                    await must(
                      api.POST("/manage/conversations/{conversation_id}/close", {
                        params: { path: { conversation_id: conversationId } },
                      }),
                    );
                    reload();
                  }}
                />
              )}
            </PageHeader>
            <article>
              <dl class="facts">
                <dt>Status</dt>
                <dd>
                  <Badge tone={status.tone}>{status.label}</Badge>{" "}
                  {conversation.test && <Badge tone="info">Test (Try it)</Badge>}
                  {conversation.channel === "widget" && <Badge tone="info">Website widget</Badge>}
                </dd>
                <dt>Outcome</dt>
                <dd>
                  {outcomeLabels[conversation.outcome]}
                  {conversation.handoff_reason && ` (${handoffReasonLabels[conversation.handoff_reason]})`}{" "}
                  {!conversation.outcome_final && <Badge tone="muted">Provisional</Badge>}
                </dd>
                <dt>Visitor's rating</dt>
                <dd>
                  {conversation.rating
                    ? `${conversation.rating.score} / 5${conversation.rating.comment ? ` (“${conversation.rating.comment}”)` : ""}`
                    : "—"}
                </dd>
                <dt>Messages from the visitor</dt>
                <dd>{conversation.visitor_message_count}</dd>
                <dt>Messages in all</dt>
                <dd>{conversation.message_count}</dd>
                <dt>Contact</dt>
                <dd>
                  <Link href={`/contacts/${conversation.contact_id}`}>{contactLabel(conversation)}</Link>
                  {conversation.contact.user_email && <div>{conversation.contact.user_email}</div>}
                  {conversation.contact.user_phone && <div>{conversation.contact.user_phone}</div>}
                </dd>
                <dt>External id</dt>
                <dd>{conversation.external_id ?? "—"}</dd>
                <dt>Conversation id</dt>
                <dd>
                  <code>{conversation.conversation_id}</code>
                </dd>
              </dl>
            </article>
            <TranscriptView
              // Drawn afresh when a change (closing it, say) added messages: it keeps its pages.
              key={conversation.last_activity_at}
              first={conversation}
              chatbot={chatbot}
              fallbackReply={bot?.fallback_reply ?? null}
            />
          </>
        );
      }}
    </Loaded>
  );
}

function TranscriptView({
  first,
  chatbot,
  fallbackReply,
}: {
  first: Transcript;
  chatbot: string;
  fallbackReply: string | null;
}) {
  const [messages, setMessages] = useState(first.messages);
  const [cursor, setCursor] = useState(first.next_cursor);
  const loadMore = useAction();
  return (
    <article aria-labelledby="transcript-title">
      <h2 id="transcript-title">Transcript</h2>
      {messages.length === 0 && !first.status_changed_at ? (
        <Empty>No messages yet.</Empty>
      ) : (
        <TranscriptEntries
          messages={messages}
          status={first.status}
          statusChangedAt={first.status_changed_at}
          complete={!cursor}
          chatbot={chatbot}
          visitor={contactLabel(first)}
          fallbackReply={fallbackReply}
        />
      )}
      {loadMore.busy && <Loading />}
      {loadMore.error !== null && <ErrorNotice error={loadMore.error} />}
      {cursor && (
        <button
          type="button"
          class="secondary"
          onClick={() =>
            loadMore.run(async () => {
              const next = await must(
                api.GET("/manage/conversations/{conversation_id}", {
                  params: { path: { conversation_id: first.conversation_id }, query: { limit: 100, cursor } },
                }),
              );
              setMessages((current) => [...current, ...next.messages]);
              setCursor(next.next_cursor);
            })
          }
        >
          Load later messages
        </button>
      )}
    </article>
  );
}
