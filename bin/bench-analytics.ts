/**
 * `npm run bench -- --analytics`: what the analytics counters cost (functions/domain/analytics.ts),
 * counted at DynamoDB Local through a proxy in front of it (each call's operation and the capacity
 * units DynamoDB Local reports for it), on the local runtime with its stream emulator:
 *
 * 1. Turns one after another, then the same number at once: the counters' calls (the fan-out's
 *    TransactWriteItems on `ORG#…#ANALYTICS`) and their write units per turn, and a turn's own calls
 *    and units (its replies' transaction carries one reply reference per reply).
 * 2. Feedback on a reply and a conversation's rating: their calls and units.
 * 3. A 365-day series: `GET /manage/analytics` over a year of (filled) day items, its calls and read
 *    units.
 */
import { BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import { sketchIndex } from "#functions/domain/analytics";
import { createApiKey } from "#functions/domain/api-keys";
import { addKnowledgeEntry, createChatbot } from "#functions/domain/chatbots";
import { systemClock } from "#functions/domain/context";
import { createOrganization } from "#functions/domain/organizations";
import { createDb } from "#functions/store/dynamodb";
import { keys } from "#functions/store/items";
import { startLocalRuntime } from "#lib/local/runtime";
import { type Call, countingProxy } from "./bench-table-proxy.ts";

/** The analytics counters' writes (the fan-out's, on `ORG#…#ANALYTICS`). */
const onAnalytics = (call: Call) => call.request.includes('#ANALYTICS"');

const summary = (calls: readonly Call[]) => {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call.operation, (counts.get(call.operation) ?? 0) + 1);
  return {
    calls: [...counts].map(([operation, count]) => `${count}×${operation}`).join(" + ") || "none",
    write: calls.reduce((sum, call) => sum + call.writeUnits, 0),
    read: calls.reduce((sum, call) => sum + call.readUnits, 0),
  };
};
const fixed = (value: number, digits = 2) => value.toFixed(digits);

const CONVERSATIONS = 20;
const TURNS_EACH = 2;

export async function printAnalyticsFigures(buildDirectory: string): Promise<void> {
  const runtime = await startLocalRuntime({ port: 0, buildDirectory, environment: { LOG_LEVEL: "warn" } });
  const proxy = await countingProxy(runtime.dynamoDbEndpoint, {
    ignore: (call) => call.operation === "DescribeTable" || call.operation === "?",
  });
  process.env.AWS_ENDPOINT_URL_DYNAMODB = proxy.url;
  try {
    const ctx = { db: createDb(runtime.tableName, runtime.dynamoDb), clock: systemClock };
    const organization = await createOrganization(ctx, { name: "Analytics bench", rateLimit: 100_000 });
    const organizationId = organization.organizationId;
    const { apiKey } = await createApiKey(ctx, { organizationId, name: "bench" });
    const { apiKey: manageKey } = await createApiKey(ctx, {
      organizationId,
      name: "manage",
      scope: "manage",
    });
    const chatbot = await createChatbot(ctx, { organizationId, name: "Bench bot" });
    await addKnowledgeEntry(ctx, {
      organizationId,
      chatbotId: chatbot.chatbotId,
      entry: { kind: "qa", question: "How long does shipping take?", answer: "Two working days." },
    });
    const send = async (method: string, path: string, body?: unknown, key = apiKey) => {
      const response = await fetch(`${runtime.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const analytics = (query: string) => send("GET", `/manage/analytics${query}`, undefined, manageKey);
    const totals = async () =>
      (await analytics("")).body.totals as {
        conversations: number;
        visitor_messages: number;
        ratings: number;
      };
    const settle = async (expect: (t: Awaited<ReturnType<typeof totals>>) => boolean) => {
      const deadline = Date.now() + 60_000;
      while (!expect(await totals())) {
        if (Date.now() > deadline) throw new Error("the analytics counters did not catch up in 60 s");
        await new Promise((resolveWait) => setTimeout(resolveWait, 250));
      }
      // Whatever the stream still had (status changes of the same items) lands too.
      await new Promise((resolveWait) => setTimeout(resolveWait, 2_000));
    };
    // Warm every function the figures go through.
    const warm = await send("POST", "/api/conversation", { chatbot_id: chatbot.chatbotId });
    await send("POST", "/api/message", { conversation_id: warm.body.conversation_id, message: "hello" });
    await settle((t) => t.visitor_messages >= 1);
    let conversationsSoFar = 1;
    let messagesSoFar = 1;

    const run = async (label: string, parallel: boolean) => {
      const before = proxy.calls.length;
      const turnCalls: Call[] = [];
      const ids: string[] = [];
      for (let index = 0; index < CONVERSATIONS; index += 1) {
        ids.push(
          String(
            (await send("POST", "/api/conversation", { chatbot_id: chatbot.chatbotId })).body.conversation_id,
          ),
        );
      }
      const turn = async (conversationId: string, message: string) => {
        const start = proxy.calls.length;
        await send("POST", "/api/message", { conversation_id: conversationId, message });
        if (!parallel) turnCalls.push(...proxy.calls.slice(start).filter((call) => !onAnalytics(call)));
      };
      for (let round = 0; round < TURNS_EACH; round += 1) {
        const message = round === 0 ? "How long does shipping take?" : "Thanks, and returns?";
        if (parallel) await Promise.all(ids.map((id) => turn(id, message)));
        else for (const id of ids) await turn(id, message);
      }
      conversationsSoFar += CONVERSATIONS;
      messagesSoFar += CONVERSATIONS * TURNS_EACH;
      await settle((t) => t.conversations >= conversationsSoFar && t.visitor_messages >= messagesSoFar);
      const counted = proxy.calls
        .slice(before)
        .filter((call) => onAnalytics(call) && call.operation !== "Query");
      const turns = CONVERSATIONS * TURNS_EACH;
      const figures = summary(counted);
      console.log(
        `  ${label}: ${CONVERSATIONS} conversations started + ${turns} turns → counters ${figures.calls}, ${fixed(figures.write, 1)} WRU: ${fixed(counted.length / turns)} calls and ${fixed(figures.write / turns)} WRU per turn (start included)`,
      );
      if (!parallel) {
        const own = summary(turnCalls);
        console.log(
          `  a turn's own calls (the key check's included), per turn: ${fixed(turnCalls.length / turns, 1)} calls, ${fixed(own.write / turns)} WRU, ${fixed(own.read / turns)} RRU (${own.calls})`,
        );
      }
      return ids;
    };
    console.log("\n10. Analytics: what the counters cost (counted at DynamoDB Local)\n");
    const ids = await run("turns one after another", false);
    await run(`${CONVERSATIONS} conversations at once`, true);

    // Feedback and a rating.
    const history = await send("GET", `/api/conversation/${ids[0]}/messages?limit=100`);
    const reply = (history.body.messages as { message_id: string; role: string }[]).find(
      (message) => message.role === "assistant",
    );
    for (const [label, act] of [
      [
        "POST /api/message/{id}/feedback",
        () => send("POST", `/api/message/${reply?.message_id}/feedback`, { rating: "up" }),
      ],
      [
        "POST /api/conversation/{id}/rating",
        () => send("POST", `/api/conversation/${ids[0]}/rating`, { score: 5 }),
      ],
    ] as const) {
      const start = proxy.calls.length;
      const answer = await act();
      const figures = summary(proxy.calls.slice(start).filter((call) => !onAnalytics(call)));
      console.log(
        `  ${label}: ${answer.status}, ${figures.calls}, ${fixed(figures.write, 1)} WRU, ${fixed(figures.read, 1)} RRU (key check included)`,
      );
    }
    await settle((t) => t.ratings >= 1);

    // A year of day items, each as full as a busy day makes it, then one 365-day read.
    const year = Array.from({ length: 365 }, (_, index) =>
      new Date(Date.UTC(2025, 0, 1) + index * 86_400_000).toISOString().slice(0, 10),
    );
    const busyDay = (day: string) => ({
      ...keys.analyticsDay(organizationId, day),
      entity: "Analytics",
      organizationId,
      day,
      ttl: Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000) + 400 * 86_400,
      conversations: 1_234,
      visitorMessages: 5_678,
      fallbackReplies: 321,
      lookups: 456,
      lookups_found: 300,
      lookups_not_found: 100,
      lookups_auth_failed: 10,
      lookups_rate_limited: 10,
      lookups_timeout: 20,
      lookups_unavailable: 16,
      outcome_resolved: 700,
      outcome_handed_off: 200,
      outcome_unresolved: 234,
      outcome_abandoned: 100,
      handoff_visitor_asked: 100,
      handoff_could_not_answer: 50,
      handoff_tool_failed: 10,
      handoff_client: 20,
      handoff_agent: 20,
      feedbackUp: 400,
      feedbackDown: 90,
      ratings: 150,
      ratingSum: 600,
      firstReplies: 1_134,
      // First replies from 300 ms to 30 s: the sketch's buckets a busy day fills.
      ...Object.fromEntries(
        Array.from({ length: 40 }, (_, bucket) => [`frt${sketchIndex(300 * 1.12 ** bucket)}`, 28]),
      ),
    });
    for (let start = 0; start < year.length; start += 25) {
      await ctx.db.client.send(
        new BatchWriteCommand({
          RequestItems: {
            [runtime.tableName]: year
              .slice(start, start + 25)
              .map((day) => ({ PutRequest: { Item: busyDay(day) } })),
          },
        }),
      );
    }
    const size = Buffer.byteLength(JSON.stringify(busyDay("2025-01-01")));
    const start = proxy.calls.length;
    const read = await analytics("?from=2025-01-01&to=2025-12-31");
    const figures = summary(proxy.calls.slice(start));
    const series = read.body.series as unknown[];
    console.log(
      `  GET /manage/analytics, 365 days (each day item ~${size} bytes as JSON): ${read.status}, ${series.length} days; ${figures.calls}, ${fixed(figures.read, 1)} RRU (key check included)`,
    );
  } finally {
    await proxy.close();
    await runtime.stop();
  }
}
