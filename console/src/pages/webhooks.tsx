/**
 * Webhooks: the organization's endpoints (the events each receives, enabled or not, how its
 * deliveries fare), a new endpoint's signing secret shown once, and one endpoint's page: change it,
 * switch it off and on, rotate its secret (the previous one keeps signing for an overlap, shown),
 * and its delivery log, each attempt's status and latency, with redelivery.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { api, must, type paths } from "../api/client.ts";
import { usePolling } from "../lib/polling.ts";
import { navigate } from "../lib/router.ts";
import { canWrite, organizationId } from "../lib/workspace.ts";
import {
  Badge,
  ConfirmButton,
  CopyButton,
  Empty,
  ErrorNotice,
  formatTime,
  formValues,
  Loaded,
  PageHeader,
  SubmitButton,
  SuccessNotice,
  useAction,
  useLoad,
} from "../ui/kit.tsx";
import { Link } from "../ui/nav.tsx";

type Endpoint =
  paths["/manage/webhook-endpoints/{endpoint_id}"]["get"]["responses"][200]["content"]["application/json"];
type NewEndpoint = paths["/manage/webhook-endpoints"]["post"]["requestBody"]["content"]["application/json"];
type EndpointChanges = NonNullable<
  paths["/manage/webhook-endpoints/{endpoint_id}"]["patch"]["requestBody"]
>["content"]["application/json"];
type EventType = NewEndpoint["events"][number];
type DeliveryPage =
  paths["/manage/webhook-endpoints/{endpoint_id}/deliveries"]["get"]["responses"][200]["content"]["application/json"];
type Delivery = DeliveryPage["deliveries"][number];

/** Every event type, as people read it (a new type the API adds fails the type check here). */
const eventTypes: Record<EventType, string> = {
  "conversation.created": "A conversation starts",
  "message.created": "A message is added (visitor, chatbot, person, status change)",
  "conversation.handoff": "A conversation is handed to a person",
  "conversation.resumed": "A conversation goes back to the chatbot",
  "conversation.closed": "A conversation is closed",
  "lookup.completed": "The chatbot looked something up",
  "message.feedback": "A visitor gives a reply a thumb up or down",
  "conversation.rated": "A visitor rates a conversation",
};
const allEventTypes = Object.keys(eventTypes) as EventType[];

/** How often the delivery log looks for new attempts while the page is in view. */
const LOG_POLL_MS = 4_000;

/** What state an endpoint is in, worst first. */
function standing(endpoint: Endpoint): { label: string; tone: "good" | "bad" | "warn" | "muted" } {
  if (!endpoint.enabled)
    return endpoint.disabled_reason
      ? { label: "Disabled by failures", tone: "bad" }
      : { label: "Off", tone: "muted" };
  if (endpoint.failing_since) return { label: "Failing", tone: "bad" };
  if (endpoint.slow_until && Date.parse(endpoint.slow_until) > Date.now())
    return { label: "Slow", tone: "warn" };
  return { label: "On", tone: "good" };
}

const deliveryTone = (state: Delivery["state"]) =>
  state === "delivered" ? "good" : state === "failed" ? "bad" : "info";

function eventChoices(selected: string[], legend: string) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {allEventTypes.map((type) => (
        <label key={type}>
          <input type="checkbox" name="events" value={type} defaultChecked={selected.includes(type)} />
          <code>{type}</code> <span class="stat-label">{eventTypes[type]}</span>
        </label>
      ))}
    </fieldset>
  );
}

/** The event types ticked in a form. */
function eventsOf(form: HTMLFormElement): EventType[] {
  return new FormData(form)
    .getAll("events")
    .filter((value): value is EventType => typeof value === "string" && value in eventTypes);
}

/** A signing secret, shown once: copy it now. */
function SecretOnce({ secret, children }: { secret: string; children: ComponentChildren }) {
  return (
    <div class="notice success" role="status">
      <p>{children}</p>
      <div class="secret">
        <input readOnly value={secret} aria-label="Signing secret" />
        <CopyButton text={secret} label="Copy secret" />
      </div>
    </div>
  );
}

export function WebhooksPage() {
  const [state, reload] = useLoad(() => must(api.GET("/manage/webhook-endpoints")), [organizationId.value]);
  const [created, setCreated] = useState<{ endpoint: Endpoint; secret: string } | null>(null);
  return (
    <>
      <PageHeader
        title="Webhooks"
        intro="Your systems hear of conversations, messages and look-ups as they happen: signed POSTs to your endpoints."
      />
      {created && (
        <SecretOnce secret={created.secret}>
          Endpoint added. Its signing secret is shown <strong>only now</strong>: give it to the receiver at{" "}
          <code>{created.endpoint.url}</code>, which checks every delivery's <code>webhook-signature</code>{" "}
          with it (any Standard Webhooks library does).
        </SecretOnce>
      )}
      <Loaded state={state} retry={reload}>
        {({ webhook_endpoints: endpoints }) => (
          <article aria-labelledby="endpoints-title">
            <h2 id="endpoints-title">Endpoints</h2>
            {endpoints.length === 0 ? (
              <Empty>No endpoints yet.{canWrite.value ? " Add one below." : ""}</Empty>
            ) : (
              <div class="overflow-auto">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">URL</th>
                      <th scope="col">Events</th>
                      <th scope="col">State</th>
                      <th scope="col">Added</th>
                    </tr>
                  </thead>
                  <tbody>
                    {endpoints.map((endpoint) => {
                      const now = standing(endpoint);
                      return (
                        <tr key={endpoint.endpoint_id}>
                          <td>
                            <Link href={`/webhooks/${endpoint.endpoint_id}`}>
                              <code>{endpoint.url}</code>
                            </Link>
                            {endpoint.description && <small class="block">{endpoint.description}</small>}
                          </td>
                          <td>
                            {endpoint.events.length === allEventTypes.length
                              ? "All"
                              : endpoint.events.join(", ")}
                          </td>
                          <td>
                            <Badge tone={now.tone}>{now.label}</Badge>
                          </td>
                          <td>{formatTime(endpoint.created_at)}</td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            )}
            {canWrite.value && endpoints.length < 20 && (
              <AddEndpoint
                onAdded={(endpoint, secret) => {
                  setCreated({ endpoint, secret });
                  reload();
                }}
              />
            )}
          </article>
        )}
      </Loaded>
    </>
  );
}

function AddEndpoint({ onAdded }: { onAdded: (endpoint: Endpoint, secret: string) => void }) {
  const action = useAction();
  return (
    <section aria-labelledby="add-endpoint-title">
      <h3 id="add-endpoint-title">Add an endpoint</h3>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const form = event.currentTarget;
          const values = formValues(form);
          const events = eventsOf(form);
          await action.run(async () => {
            if (events.length === 0) throw new Error("Choose at least one event.");
            const description = (values.description ?? "").trim();
            const created = await must(
              api.POST("/manage/webhook-endpoints", {
                body: {
                  url: (values.url ?? "").trim(),
                  events,
                  enabled: values.enabled === "on",
                  ...(description ? { description } : {}),
                },
              }),
            );
            form.reset();
            const { secret, ...endpoint } = created;
            onAdded(endpoint, secret);
          });
        }}
      >
        <label>
          URL
          <input
            name="url"
            type="url"
            required
            maxLength={2048}
            placeholder="https://hooks.example.com/chatbot"
            aria-describedby="endpoint-url-hint"
          />
          <small id="endpoint-url-hint">
            An https address on the public internet; each delivery is a POST there.
          </small>
        </label>
        <label>
          Description (optional)
          <input name="description" maxLength={200} placeholder="e.g. CRM sync" />
        </label>
        {eventChoices(["conversation.created", "conversation.handoff"], "Events to send")}
        <label>
          <input type="checkbox" name="enabled" defaultChecked />
          Send events now (an endpoint that is off receives nothing until switched on)
        </label>
        {action.error !== null && <ErrorNotice error={action.error} />}
        <SubmitButton action={action}>Add endpoint</SubmitButton>
      </form>
    </section>
  );
}

export function WebhookEndpointPage({ endpointId }: { endpointId: string }) {
  const [state, reload] = useLoad(
    () =>
      must(
        api.GET("/manage/webhook-endpoints/{endpoint_id}", { params: { path: { endpoint_id: endpointId } } }),
      ),
    [endpointId, organizationId.value],
  );
  const [rotated, setRotated] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  const toggle = useAction();
  const path = { params: { path: { endpoint_id: endpointId } } };
  return (
    <Loaded state={state} retry={reload}>
      {(endpoint) => {
        const now = standing(endpoint);
        return (
          <>
            <PageHeader title="Webhook endpoint" intro={<code class="mono">{endpoint.url}</code>}>
              <Link href="/webhooks">All endpoints</Link>
              {canWrite.value && (
                <ConfirmButton
                  label="Delete endpoint"
                  question="Delete this endpoint?"
                  detail="It receives nothing more; deliveries still being retried end as failed (endpoint_deleted)."
                  confirmLabel="Delete endpoint"
                  onConfirm={async () => {
                    await must(api.DELETE("/manage/webhook-endpoints/{endpoint_id}", path));
                    navigate("/webhooks");
                  }}
                />
              )}
            </PageHeader>
            {rotated && (
              <SecretOnce secret={rotated}>
                The new signing secret is shown <strong>only now</strong>. Until{" "}
                <strong>{formatTime(endpoint.previous_secret_expires_at)}</strong> every delivery carries two
                signatures, the new secret's and the previous one's, so the receiver keeps working while you
                give it the new secret; after that only the new one signs.
              </SecretOnce>
            )}
            {saved && <SuccessNotice>{saved}</SuccessNotice>}
            <article aria-labelledby="endpoint-facts-title">
              <h2 id="endpoint-facts-title">Endpoint</h2>
              <dl class="facts">
                <dt>State</dt>
                <dd>
                  <Badge tone={now.tone}>{now.label}</Badge>
                  {endpoint.disabled_reason && ` ${endpoint.disabled_reason}`}
                </dd>
                <dt>Events</dt>
                <dd>{endpoint.events.join(", ")}</dd>
                <dt>Description</dt>
                <dd>{endpoint.description ?? "—"}</dd>
                {endpoint.failing_since && (
                  <>
                    <dt>Failing since</dt>
                    <dd>
                      {formatTime(endpoint.failing_since)} (last failure{" "}
                      {formatTime(endpoint.last_failure_at)}; switched off after 5 days of failures)
                    </dd>
                  </>
                )}
                {endpoint.slow_until && Date.parse(endpoint.slow_until) > Date.now() && (
                  <>
                    <dt>Slow</dt>
                    <dd>Answered slowly: a few attempts at a time until {formatTime(endpoint.slow_until)}</dd>
                  </>
                )}
                <dt>Secret overlap</dt>
                <dd>
                  {endpoint.previous_secret_expires_at &&
                  Date.parse(endpoint.previous_secret_expires_at) > Date.now()
                    ? `The previous secret also signs until ${formatTime(endpoint.previous_secret_expires_at)}`
                    : "None: one secret signs"}
                </dd>
                <dt>Added</dt>
                <dd>{formatTime(endpoint.created_at)}</dd>
              </dl>
              {canWrite.value && (
                <div class="actions">
                  <button
                    type="button"
                    class="secondary small"
                    aria-busy={toggle.busy}
                    disabled={toggle.busy}
                    onClick={() =>
                      toggle.run(async () => {
                        await must(
                          api.PATCH("/manage/webhook-endpoints/{endpoint_id}", {
                            ...path,
                            body: { enabled: !endpoint.enabled },
                          }),
                        );
                        setSaved(
                          endpoint.enabled
                            ? "Switched off: no events are sent to it until it is switched on."
                            : "Switched on: events are sent to it again.",
                        );
                        reload();
                      })
                    }
                  >
                    {endpoint.enabled ? "Switch off" : "Switch on"}
                  </button>
                  <button
                    type="button"
                    class="secondary small"
                    aria-expanded={editing}
                    onClick={() => setEditing(!editing)}
                  >
                    {editing ? "Close editing" : "Edit"}
                  </button>
                  <ConfirmButton
                    label="Rotate secret"
                    question="Rotate the signing secret?"
                    detail="A new secret is made and shown once. The previous one keeps signing for 24 hours, so the receiver can switch without losing events."
                    confirmLabel="Rotate secret"
                    onConfirm={async () => {
                      const answer = await must(
                        api.POST("/manage/webhook-endpoints/{endpoint_id}/rotate-secret", path),
                      );
                      setRotated(answer.secret);
                      setSaved(null);
                      reload();
                    }}
                  />
                </div>
              )}
              {toggle.error !== null && <ErrorNotice error={toggle.error} />}
              {editing && (
                <EditEndpoint
                  endpoint={endpoint}
                  onSaved={() => {
                    setEditing(false);
                    setSaved("Saved.");
                    reload();
                  }}
                />
              )}
            </article>
            <DeliveryLog endpoint={endpoint} />
          </>
        );
      }}
    </Loaded>
  );
}

function EditEndpoint({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: () => void }) {
  const action = useAction();
  return (
    <form
      aria-label="Edit the endpoint"
      onSubmit={async (event) => {
        event.preventDefault();
        const form = event.currentTarget;
        const values = formValues(form);
        const events = eventsOf(form);
        await action.run(async () => {
          if (events.length === 0) throw new Error("Choose at least one event.");
          const changes: EndpointChanges = {};
          const url = (values.url ?? "").trim();
          if (url !== endpoint.url) changes.url = url;
          if (events.join() !== endpoint.events.join()) changes.events = events;
          const description = (values.description ?? "").trim();
          if (description !== (endpoint.description ?? "")) changes.description = description;
          await must(
            api.PATCH("/manage/webhook-endpoints/{endpoint_id}", {
              params: { path: { endpoint_id: endpoint.endpoint_id } },
              body: changes,
            }),
          );
          onSaved();
        });
      }}
    >
      <label>
        URL
        <input name="url" type="url" required maxLength={2048} defaultValue={endpoint.url} />
      </label>
      <label>
        Description
        <input name="description" maxLength={200} defaultValue={endpoint.description ?? ""} />
      </label>
      {eventChoices(endpoint.events, "Events to send")}
      {action.error !== null && <ErrorNotice error={action.error} />}
      <SubmitButton action={action}>Save endpoint</SubmitButton>
    </form>
  );
}

/** The newest deliveries, refreshed while the page is in view; older pages on request. */
function DeliveryLog({ endpoint }: { endpoint: Endpoint }) {
  const id = endpoint.endpoint_id;
  const load = (cursor?: string) =>
    must(
      api.GET("/manage/webhook-endpoints/{endpoint_id}/deliveries", {
        params: { path: { endpoint_id: id }, query: { limit: 20, ...(cursor ? { cursor } : {}) } },
      }),
    );
  const [state, reload] = useLoad(() => load(), [id]);
  const [older, setOlder] = useState<Delivery[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const more = useAction();
  usePolling(async () => reload(), LOG_POLL_MS, [id]);
  return (
    <article aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <p class="intro">
        The last 30 days, newest first: each event sent, its attempts' status and latency. Failed attempts are
        retried for more than 24 hours.
      </p>
      <Loaded state={state} retry={reload}>
        {(page) => {
          const shown = page.deliveries.map((delivery) => delivery.delivery_id);
          const rows = [
            ...page.deliveries,
            ...older.filter((delivery) => !shown.includes(delivery.delivery_id)),
          ];
          const next = cursor === undefined ? page.next_cursor : cursor;
          if (rows.length === 0) return <Empty>No deliveries yet: they appear as events happen.</Empty>;
          return (
            <>
              <div class="overflow-auto">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Event</th>
                      <th scope="col">When</th>
                      <th scope="col">State</th>
                      <th scope="col">Last attempt</th>
                      <th scope="col">Latency</th>
                      <th scope="col">Attempts</th>
                      {canWrite.value && (
                        <th scope="col">
                          <span class="visually-hidden">Redeliver</span>
                        </th>
                      )}
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((delivery) => (
                      <DeliveryRow
                        key={delivery.delivery_id}
                        endpoint={endpoint}
                        delivery={delivery}
                        onRedelivered={reload}
                      />
                    ))}
                  </tbody>
                </table>
              </div>
              {more.error !== null && <ErrorNotice error={more.error} />}
              {next && (
                <button
                  type="button"
                  class="secondary"
                  aria-busy={more.busy}
                  onClick={() =>
                    more.run(async () => {
                      const found = await load(next);
                      setOlder((current) => [...current, ...found.deliveries]);
                      setCursor(found.next_cursor);
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
    </article>
  );
}

function DeliveryRow({
  endpoint,
  delivery,
  onRedelivered,
}: {
  endpoint: Endpoint;
  delivery: Delivery;
  onRedelivered: () => void;
}) {
  const action = useAction();
  const [last] = delivery.attempts;
  const finished = delivery.state !== "pending";
  return (
    <tr>
      <td>
        <code>{delivery.event_type}</code>
        <small class="block mono">{delivery.event_id}</small>
      </td>
      <td>{formatTime(delivery.created_at)}</td>
      <td>
        <Badge tone={deliveryTone(delivery.state)}>{delivery.state}</Badge>
        {delivery.failed_reason && <small class="block">{delivery.failed_reason.replaceAll("_", " ")}</small>}
        {delivery.next_attempt_at && (
          <small class="block">next try {formatTime(delivery.next_attempt_at)}</small>
        )}
      </td>
      <td>{last ? (last.status !== null ? `HTTP ${last.status}` : (last.error ?? "—")) : "—"}</td>
      <td>{last ? `${last.latency_ms} ms` : "—"}</td>
      <td>
        {delivery.attempts.length === 0 ? (
          "0"
        ) : (
          <details>
            <summary>
              {delivery.attempt_count}
              <span class="visually-hidden"> attempts of {delivery.event_id}</span>
            </summary>
            <ol class="attempts">
              {delivery.attempts.map((attempt) => (
                <li key={attempt.attempt}>
                  #{attempt.attempt} {formatTime(attempt.at)} ({attempt.trigger}):{" "}
                  {attempt.status !== null ? `HTTP ${attempt.status}` : attempt.error} in {attempt.latency_ms}{" "}
                  ms
                  {attempt.response && <pre class="command">{attempt.response}</pre>}
                </li>
              ))}
            </ol>
          </details>
        )}
      </td>
      {canWrite.value && (
        <td>
          <button
            type="button"
            class="secondary outline small"
            disabled={!finished || !endpoint.enabled || action.busy}
            aria-busy={action.busy}
            title={
              !endpoint.enabled
                ? "Switch the endpoint on first"
                : !finished
                  ? "Still being retried"
                  : undefined
            }
            onClick={() =>
              action.run(async () => {
                await must(
                  api.POST("/manage/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/redeliver", {
                    params: {
                      path: { endpoint_id: endpoint.endpoint_id, delivery_id: delivery.delivery_id },
                    },
                  }),
                );
                onRedelivered();
              })
            }
          >
            Redeliver<span class="visually-hidden"> {delivery.event_id}</span>
          </button>
          {action.error !== null && <ErrorNotice error={action.error} />}
        </td>
      )}
    </tr>
  );
}
