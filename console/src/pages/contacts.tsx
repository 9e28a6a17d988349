/** Contacts: the people behind conversations, searchable and exportable, and one contact's page. */
import { useState } from "preact/hooks";
import { api, must, type paths } from "../api/client.ts";
import { downloadCsv, toCsv } from "../lib/csv.ts";
import { navigate, queryParam, route } from "../lib/router.ts";
import { organizationId } from "../lib/workspace.ts";
import { Badge, Empty, ErrorNotice, formatTime, Loaded, PageHeader, useAction, useLoad } from "../ui/kit.tsx";
import { Link } from "../ui/nav.tsx";
import { statusOf } from "./conversation-vocabulary.ts";

type ContactPage = paths["/manage/contacts"]["get"]["responses"][200]["content"]["application/json"];
type Contact = ContactPage["contacts"][number];

const PAGE_SIZE = 25;
/** An export stops here: a file this long is already more than a spreadsheet wants. */
const EXPORT_LIMIT = 10_000;

const nameOf = (contact: Contact) =>
  contact.user_name ??
  contact.user_email ??
  contact.user_phone ??
  `Contact ${contact.contact_id.slice(0, 8)}`;

const listPage = (query: string, cursor?: string, limit = PAGE_SIZE) =>
  must(
    api.GET("/manage/contacts", {
      params: { query: { limit, ...(query ? { query } : {}), ...(cursor ? { cursor } : {}) } },
    }),
  );

export function ContactsPage() {
  const query = queryParam("query") ?? "";
  const key = route.value.search;
  return (
    <>
      <PageHeader
        title="Contacts"
        intro="The people your chatbots talk with: what they told you, and their conversations."
      />
      <form
        key={key}
        class="filters"
        // A filter of the list, like the Conversations page's.
        aria-label="Filters"
        onSubmit={(event) => {
          event.preventDefault();
          const value = String(new FormData(event.currentTarget).get("query") ?? "").trim();
          navigate(`/contacts${value ? `?query=${encodeURIComponent(value)}` : ""}`);
        }}
      >
        <label>
          Name, e-mail, phone or external id
          <input name="query" type="search" maxLength={200} defaultValue={query} />
        </label>
        <div class="actions">
          <button type="submit" class="small">
            Search
          </button>
          {query && (
            <Link href="/contacts" class="small">
              Show all
            </Link>
          )}
        </div>
      </form>
      <ContactList key={`${organizationId.value}${key}`} query={query} />
    </>
  );
}

function ContactList({ query }: { query: string }) {
  const [more, setMore] = useState<Contact[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const loadMore = useAction();
  const exporting = useAction();
  const [state, reload] = useLoad(async () => {
    const page = await listPage(query);
    setCursor(page.next_cursor);
    return page;
  }, []);
  return (
    <Loaded state={state} retry={reload}>
      {(page) => {
        const rows = [...page.contacts, ...more];
        if (rows.length === 0 && !cursor) {
          return <Empty>{query ? `No contact matches “${query}”.` : "No contacts yet."}</Empty>;
        }
        return (
          <>
            <div class="toolbar">
              <button
                type="button"
                class="secondary small"
                aria-busy={exporting.busy}
                disabled={exporting.busy}
                onClick={() => exporting.run(() => exportContacts(query))}
              >
                Export CSV
              </button>
            </div>
            {exporting.error !== null && <ErrorNotice error={exporting.error} />}
            <div class="overflow-auto">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">E-mail</th>
                    <th scope="col">Phone</th>
                    <th scope="col">Conversations</th>
                    <th scope="col">Last conversation</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((contact) => (
                    <tr key={contact.contact_id}>
                      <td>
                        <Link href={`/contacts/${contact.contact_id}`}>{nameOf(contact)}</Link>
                      </td>
                      <td>{contact.user_email ?? "—"}</td>
                      <td>{contact.user_phone ?? "—"}</td>
                      <td>{contact.conversation_count}</td>
                      <td>{formatTime(contact.last_conversation_at)}</td>
                    </tr>
                  ))}
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
                    // A search page may come back short while more follow: keep reading until some do.
                    let next: string | null = cursor;
                    const found: Contact[] = [];
                    while (next && found.length === 0) {
                      const following = await listPage(query, next);
                      found.push(...following.contacts);
                      next = following.next_cursor;
                    }
                    setMore((current) => [...current, ...found]);
                    setCursor(next);
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

/** Every contact of the search (or all of them), as a CSV download. */
async function exportContacts(query: string): Promise<void> {
  const contacts: Contact[] = [];
  let cursor: string | undefined;
  do {
    const page = await listPage(query, cursor, 100);
    contacts.push(...page.contacts);
    cursor = page.next_cursor ?? undefined;
  } while (cursor && contacts.length < EXPORT_LIMIT);
  const csv = toCsv(
    [
      "contact_id",
      "name",
      "email",
      "phone",
      "external_ids",
      "conversations",
      "last_conversation_at",
      "created_at",
    ],
    contacts.map((contact) => [
      contact.contact_id,
      contact.user_name,
      contact.user_email,
      contact.user_phone,
      contact.external_ids.join(" "),
      contact.conversation_count,
      contact.last_conversation_at,
      contact.created_at,
    ]),
  );
  downloadCsv(`contacts-${new Date().toISOString().slice(0, 10)}.csv`, csv);
}

export function ContactDetailPage({ contactId }: { contactId: string }) {
  const [state, reload] = useLoad(
    () =>
      Promise.all([
        must(api.GET("/manage/contacts/{contact_id}", { params: { path: { contact_id: contactId } } })),
        must(api.GET("/manage/chatbots")),
      ]),
    [contactId, organizationId.value],
  );
  return (
    <Loaded state={state} retry={reload}>
      {([contact, { chatbots }]) => {
        const names = new Map(chatbots.map((bot) => [bot.chatbot_id, bot.name]));
        return (
          <>
            <PageHeader title={nameOf(contact)} intro={`First seen ${formatTime(contact.created_at)}`}>
              <Link href="/contacts">All contacts</Link>
            </PageHeader>
            <article>
              <dl class="facts">
                <dt>Name</dt>
                <dd>{contact.user_name ?? "—"}</dd>
                <dt>E-mail</dt>
                <dd>
                  {contact.user_email ? (
                    <a href={`mailto:${contact.user_email}`}>{contact.user_email}</a>
                  ) : (
                    "—"
                  )}
                </dd>
                <dt>Phone</dt>
                <dd>
                  {contact.user_phone ? <a href={`tel:${contact.user_phone}`}>{contact.user_phone}</a> : "—"}
                </dd>
                <dt>External ids</dt>
                <dd>{contact.external_ids.length > 0 ? contact.external_ids.join(", ") : "—"}</dd>
                <dt>Conversations</dt>
                <dd>{contact.conversation_count}</dd>
                <dt>Contact id</dt>
                <dd>
                  <code>{contact.contact_id}</code>
                </dd>
              </dl>
            </article>
            <article aria-labelledby="contact-conversations">
              <h2 id="contact-conversations">Conversations</h2>
              {contact.conversations.length === 0 ? (
                <Empty>No conversations.</Empty>
              ) : (
                <div class="overflow-auto">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Last activity</th>
                        <th scope="col">Chatbot</th>
                        <th scope="col">Status</th>
                        <th scope="col">Visitor messages</th>
                        <th scope="col">
                          <span class="visually-hidden">Open</span>
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {contact.conversations.map((conversation) => {
                        const status = statusOf(conversation.status);
                        return (
                          <tr key={conversation.conversation_id}>
                            <td>{formatTime(conversation.last_activity_at)}</td>
                            <td>{names.get(conversation.chatbot_id) ?? "Deleted chatbot"}</td>
                            <td>
                              <Badge tone={status.tone}>{status.label}</Badge>{" "}
                              {conversation.test && <Badge tone="info">Test</Badge>}
                            </td>
                            <td>{conversation.visitor_message_count}</td>
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
              )}
              {contact.conversations_next_cursor && (
                <Link href={`/conversations?contact_id=${contact.contact_id}`}>All of its conversations</Link>
              )}
            </article>
          </>
        );
      }}
    </Loaded>
  );
}
