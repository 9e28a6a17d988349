/**
 * Analytics: whether the chatbots help (GET /manage/analytics), for a date range and one chatbot or
 * all: conversations and their outcomes, handoffs and why, fallbacks, thumbs, ratings, the median
 * time to first reply and look-ups; each chart also as a table, the days as a CSV file. The
 * definitions are docs/api.md's ("Outcomes", "Analytics").
 */
import { api, must, type paths } from "../api/client.ts";
import { downloadCsv, toCsv } from "../lib/csv.ts";
import { navigate, queryParam, route } from "../lib/router.ts";
import { organizationId } from "../lib/workspace.ts";
import { StackedBars, TotalsBars } from "../ui/charts.tsx";
import { Empty, Loaded, PageHeader, useLoad } from "../ui/kit.tsx";
import { Link } from "../ui/nav.tsx";

type Analytics = paths["/manage/analytics"]["get"]["responses"][200]["content"]["application/json"];
type Figures = Analytics["totals"];

const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 30;
const isDay = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value);
const today = () => new Date().toISOString().slice(0, 10);

const outcomeSeries = [
  { key: "resolved", name: "Resolved", color: "#15803d" },
  { key: "handed_off", name: "Handed off", color: "#1d4ed8" },
  { key: "unresolved", name: "Unresolved", color: "#b91c1c" },
  { key: "abandoned", name: "Abandoned", color: "#64748b" },
] as const;

const reasonNames: Record<string, string> = {
  visitor_asked: "visitor asked",
  could_not_answer: "could not answer",
  tool_failed: "tool failed",
  client: "API client",
  agent: "a person",
};

const lookupColors: Record<string, string> = {
  found: "#15803d",
  not_found: "#64748b",
  auth_failed: "#b91c1c",
  rate_limited: "#ca8a04",
  timeout: "#ea580c",
  unavailable: "#7c3aed",
};

const percent = (part: number, whole: number) => (whole > 0 ? `${Math.round((part / whole) * 100)} %` : "–");
const seconds = (ms: number | null) =>
  ms === null ? "–" : ms < 1_000 ? `${ms} ms` : `${(ms / 1_000).toFixed(1)} s`;

export function AnalyticsPage() {
  const to = isDay(queryParam("to") ?? "") ? (queryParam("to") as string) : today();
  const from = isDay(queryParam("from") ?? "")
    ? (queryParam("from") as string)
    : new Date(Date.parse(`${to}T00:00:00Z`) - (DEFAULT_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
  const chatbotId = queryParam("chatbot_id") ?? "";
  const key = route.value.search;
  const [bots] = useLoad(() => must(api.GET("/manage/chatbots")), [organizationId.value]);
  const names =
    bots.status === "ready"
      ? new Map(bots.data.chatbots.map((bot) => [bot.chatbot_id, bot.name]))
      : new Map<string, string>();
  const [state, reload] = useLoad(
    () =>
      must(
        api.GET("/manage/analytics", {
          params: { query: { from, to, ...(chatbotId ? { chatbot_id: chatbotId } : {}) } },
        }),
      ),
    [organizationId.value, key],
  );
  return (
    <>
      <PageHeader
        title="Analytics"
        intro="Whether your chatbots help: each conversation counted on the day it started, by its outcome. Try it conversations are never counted."
      />
      <form
        key={key}
        class="filters"
        aria-label="Filters"
        onSubmit={(event) => {
          event.preventDefault();
          const data = new FormData(event.currentTarget);
          const query = new URLSearchParams();
          for (const name of ["from", "to", "chatbot_id"]) {
            const value = String(data.get(name) ?? "").trim();
            if (value) query.set(name, value);
          }
          navigate(`/analytics${query.size ? `?${query}` : ""}`);
        }}
      >
        <label>
          From
          <input name="from" type="date" defaultValue={from} />
        </label>
        <label>
          To
          <input name="to" type="date" defaultValue={to} />
        </label>
        <label>
          Chatbot
          <select name="chatbot_id">
            <option value="">All chatbots</option>
            {[...names].map(([id, name]) => (
              <option key={id} value={id} selected={chatbotId === id}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <div class="actions">
          <button type="submit">Show</button>
        </div>
      </form>
      <Loaded state={state} retry={reload}>
        {(analytics) => <AnalyticsView analytics={analytics} names={names} chatbotId={chatbotId} />}
      </Loaded>
    </>
  );
}

function AnalyticsView({
  analytics,
  names,
  chatbotId,
}: {
  analytics: Analytics;
  names: Map<string, string>;
  chatbotId: string;
}) {
  const { totals, series } = analytics;
  const days = series.map((day) => day.date);
  const scope = chatbotId ? (names.get(chatbotId) ?? "this chatbot") : "all chatbots";
  if (totals.conversations === 0) {
    return (
      <Empty>
        <p>
          No conversations from {analytics.from} to {analytics.to} ({scope}).
        </p>
        <p>
          Visitors' conversations appear here within seconds; talk to a chatbot through the API or your
          website.
        </p>
      </Empty>
    );
  }
  const gapsOf = chatbotId ? [chatbotId] : [...names.keys()];
  return (
    <>
      <section class="stats" aria-label="Totals">
        <Stat label="Conversations" value={String(totals.conversations)} />
        <Stat
          label="Resolution rate"
          value={percent(totals.resolved, totals.conversations)}
          note={`${totals.resolved} resolved`}
        />
        <Stat
          label="Handoff rate"
          value={percent(totals.handed_off, totals.conversations)}
          note={`${totals.handed_off} handed off`}
        />
        <Stat
          label="Fallback rate"
          value={percent(totals.fallback_replies, totals.visitor_messages)}
          note={`${totals.fallback_replies} of ${totals.visitor_messages} visitor messages`}
        />
        <Stat label="Thumbs" value={`${totals.feedback_up} up · ${totals.feedback_down} down`} />
        <Stat
          label="Average rating"
          value={totals.rating_average === null ? "–" : `${totals.rating_average} / 5`}
          note={`${totals.ratings} rated`}
        />
        <Stat label="Median first reply" value={seconds(totals.first_reply_ms_p50)} />
      </section>
      <p>
        <button
          type="button"
          class="secondary"
          onClick={() =>
            downloadCsv(`analytics-${analytics.from}-${analytics.to}.csv`, analyticsCsv(analytics, scope))
          }
        >
          Export CSV
        </button>
      </p>
      <article>
        <h2>Conversations per day, by outcome</h2>
        <StackedBars
          id="outcomes"
          title="Conversations per day by outcome"
          labels={days}
          series={outcomeSeries.map((outcome) => ({
            name: outcome.name,
            color: outcome.color,
            values: series.map((day) => day[outcome.key]),
          }))}
        />
      </article>
      <div class="grid">
        <article>
          <h2>Handoffs by reason</h2>
          <TotalsBars
            id="handoff-reasons"
            title="Handoffs by reason"
            items={Object.entries(totals.handoff_reasons).map(([reason, value]) => ({
              name: reasonNames[reason] ?? reason,
              value,
              color: "#1d4ed8",
            }))}
          />
        </article>
        <article>
          <h2>Fallback replies per day</h2>
          <StackedBars
            id="fallbacks"
            title="Fallback replies per day"
            labels={days}
            series={[
              { name: "Fallbacks", color: "#b91c1c", values: series.map((day) => day.fallback_replies) },
            ]}
          />
          {totals.fallback_replies > 0 && gapsOf.length > 0 && (
            <p class="small">
              What the chatbot could not answer:{" "}
              {gapsOf.map((id, index) => (
                <span key={id}>
                  {index > 0 && ", "}
                  <Link href={`/chatbots/${id}/knowledge`}>
                    {names.get(id) ?? "knowledge"} → knowledge gaps
                  </Link>
                </span>
              ))}
            </p>
          )}
        </article>
      </div>
      <div class="grid">
        <article>
          <h2>Thumbs per day</h2>
          <StackedBars
            id="thumbs"
            title="Thumbs per day"
            labels={days}
            series={[
              { name: "Up", color: "#15803d", values: series.map((day) => day.feedback_up) },
              { name: "Down", color: "#b91c1c", values: series.map((day) => day.feedback_down) },
            ]}
          />
        </article>
        <article>
          <h2>Look-ups by outcome</h2>
          <TotalsBars
            id="lookups"
            title="Look-ups by outcome"
            items={Object.entries(totals.lookups_by_outcome).map(([name, value]) => ({
              name: name.replace("_", " "),
              value,
              color: lookupColors[name] ?? "#475569",
            }))}
          />
        </article>
      </div>
    </>
  );
}

function Stat({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <article>
      <span class="stat-label">{label}</span>
      <span class="stat-value">{value}</span>
      {note && <small>{note}</small>}
    </article>
  );
}

const csvColumns: [string, (day: Figures) => string | number | null][] = [
  ["conversations", (day) => day.conversations],
  ["visitor_messages", (day) => day.visitor_messages],
  ["resolved", (day) => day.resolved],
  ["handed_off", (day) => day.handed_off],
  ["unresolved", (day) => day.unresolved],
  ["abandoned", (day) => day.abandoned],
  ...Object.keys(reasonNames).map((reason): [string, (day: Figures) => number] => [
    `handoff_${reason}`,
    (day) => (day.handoff_reasons as Record<string, number>)[reason] ?? 0,
  ]),
  ["fallback_replies", (day) => day.fallback_replies],
  ["feedback_up", (day) => day.feedback_up],
  ["feedback_down", (day) => day.feedback_down],
  ["ratings", (day) => day.ratings],
  ["rating_average", (day) => day.rating_average],
  ["first_reply_ms_p50", (day) => day.first_reply_ms_p50],
  ["lookups", (day) => day.lookups],
];

/** The series, one row per day, and a last row of totals. */
function analyticsCsv(analytics: Analytics, scope: string): string {
  return toCsv(
    ["date", "scope", ...csvColumns.map(([name]) => name)],
    [
      ...analytics.series.map((day) => [day.date, scope, ...csvColumns.map(([, pick]) => pick(day))]),
      [`${analytics.from}..${analytics.to}`, scope, ...csvColumns.map(([, pick]) => pick(analytics.totals))],
    ],
  );
}
