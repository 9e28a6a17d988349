/** Overview: the organization's standing and its last 30 days of use, from the usage API. */
import { api, must, type paths } from "../api/client.ts";
import { organizationId } from "../lib/workspace.ts";
import { palette, StackedBars, TotalsBars } from "../ui/charts.tsx";
import { Badge, Empty, Loaded, PageHeader, useLoad } from "../ui/kit.tsx";
import { Link } from "../ui/nav.tsx";

type Usage = paths["/manage/usage"]["get"]["responses"][200]["content"]["application/json"];

const DAYS = 30;

/** The last 30 UTC days, oldest first. */
function lastDays(): string[] {
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  return Array.from({ length: DAYS }, (_, index) =>
    new Date(today - (DAYS - 1 - index) * 86_400_000).toISOString().slice(0, 10),
  );
}

const lookupColors: Record<string, string> = {
  found: "#15803d",
  not_found: "#64748b",
  auth_failed: "#b91c1c",
  rate_limited: "#ca8a04",
  timeout: "#ea580c",
  unavailable: "#7c3aed",
};

export function OverviewPage() {
  const days = lastDays();
  const [state, reload] = useLoad(
    () =>
      Promise.all([
        must(api.GET("/manage/organization")),
        must(api.GET("/manage/chatbots")),
        must(api.GET("/manage/usage", { params: { query: { from: days[0] ?? "", to: days.at(-1) ?? "" } } })),
      ]),
    [organizationId.value],
  );
  return (
    <>
      <PageHeader title="Overview" intro="Your organization and its last 30 days." />
      <Loaded state={state} retry={reload}>
        {([organization, { chatbots }, usage]) => (
          <>
            <section class="stats" aria-label="Organization">
              <article>
                <span class="stat-label">Subscription</span>
                <span class="stat-value">
                  {organization.subscription === "active" ? (
                    <Badge tone="good">Active</Badge>
                  ) : (
                    <Badge tone="bad">Inactive</Badge>
                  )}
                </span>
                {organization.subscription !== "active" && (
                  <small>API keys are refused (403) until it is active again.</small>
                )}
              </article>
              <article>
                <span class="stat-label">Rate limit</span>
                <span class="stat-value">{organization.rate_limit}</span>
                <small>requests per minute per API key</small>
              </article>
              <article>
                <span class="stat-label">Visitor messages, 30 days</span>
                <span class="stat-value">{usage.totals.visitor_messages}</span>
              </article>
              <article>
                <span class="stat-label">Fallback replies, 30 days</span>
                <span class="stat-value">{usage.totals.fallbacks}</span>
              </article>
            </section>
            {chatbots.length === 0 ? (
              <Empty>
                <p>No chatbots yet.</p>
                <Link href="/chatbots/new">Create your first chatbot</Link>
              </Empty>
            ) : (
              <UsageCharts
                usage={usage}
                days={days}
                names={new Map(chatbots.map((bot) => [bot.chatbot_id, bot.name]))}
              />
            )}
          </>
        )}
      </Loaded>
    </>
  );
}

function UsageCharts({ usage, days, names }: { usage: Usage; days: string[]; names: Map<string, string> }) {
  const index = new Map(days.map((day, position) => [day, position]));
  const botIds = [...new Set(usage.days.map((day) => day.chatbot_id))];
  const perBot = (pick: (day: Usage["days"][number]) => number) =>
    botIds.map((botId, position) => {
      const values = days.map(() => 0);
      for (const day of usage.days) {
        const at = index.get(day.date);
        if (day.chatbot_id === botId && at !== undefined) values[at] = (values[at] ?? 0) + pick(day);
      }
      return {
        name: names.get(botId) ?? "Deleted chatbot",
        color: palette[position % palette.length] ?? "#1d4ed8",
        values,
      };
    });
  const fallbacks = days.map(() => 0);
  for (const day of usage.days) {
    const at = index.get(day.date);
    if (at !== undefined) fallbacks[at] = (fallbacks[at] ?? 0) + day.fallbacks;
  }
  const lookups = Object.entries(usage.totals.lookups).map(([name, value]) => ({
    name: name.replace("_", " "),
    value,
    color: lookupColors[name] ?? "#475569",
  }));
  if (usage.days.length === 0) {
    return (
      <Empty>
        <p>No conversations in the last 30 days yet.</p>
        <p>
          Create an API key under <Link href="/settings/api">Settings → API</Link>, or talk to a chatbot with{" "}
          <Link href="/chatbots">Try it</Link>.
        </p>
      </Empty>
    );
  }
  return (
    <>
      <article>
        <h2>Messages per day, per chatbot</h2>
        <StackedBars
          id="messages"
          title="Visitor messages per day"
          labels={days}
          series={perBot((day) => day.visitor_messages)}
        />
      </article>
      <div class="grid">
        <article>
          <h2>Fallback replies per day</h2>
          <StackedBars
            id="fallbacks"
            title="Fallback replies per day"
            labels={days}
            series={[{ name: "Fallbacks", color: "#b91c1c", values: fallbacks }]}
          />
        </article>
        <article>
          <h2>Look-ups by outcome</h2>
          <TotalsBars id="lookups" title="Look-ups by outcome, 30 days" items={lookups} />
        </article>
      </div>
    </>
  );
}
