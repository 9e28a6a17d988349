/**
 * GET /manage/analytics — per UTC day: conversations and their outcomes, handoffs and why, visitor
 * messages, fallbacks, thumbs, ratings, the median time to first reply and look-ups; with totals.
 */

import * as z from "zod/mini";
import { type AnalyticsFigures, figuresOf, readAnalyticsDays } from "#functions/domain/analytics";
import { contextFromEnvironment } from "#functions/domain/context";
import { handoffReasons } from "#functions/domain/outcomes";
import { dayOf, lookupOutcomes } from "#functions/domain/usage";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { uuid } from "#functions/http/schemas";
import { calendarDay, dayRange, orderedRange } from "#functions/http/time-parameters";

/** Days one request may span (a year, leap years included); counters are kept 400 days. */
export const MAX_ANALYTICS_DAYS = 366;
const DEFAULT_ANALYTICS_DAYS = 30;
const DAY_MS = 86_400_000;

const query = z
  .object({
    from: z.optional(calendarDay(`First day (default: ${DEFAULT_ANALYTICS_DAYS - 1} days before \`to\`)`)),
    to: z.optional(calendarDay("Last day, included (default: today)")),
    chatbot_id: z.optional(uuid("Only this chatbot's conversations.")),
    granularity: z._default(
      z.enum(["day"]).check(z.describe("The series' step: one entry per UTC day.")),
      "day",
    ),
  })
  .check(orderedRange());

const count = (description: string) => z.int().check(z.describe(description));
const counts = <const T extends readonly string[]>(names: T, description: string) =>
  z
    .object(Object.fromEntries(names.map((name) => [name, z.int()])) as Record<T[number], z.ZodMiniInt>)
    .check(z.describe(description));

/** The figures of a day or of the whole range (docs/api.md "Analytics" defines each). */
const figures = {
  conversations: count("Conversations started (test conversations never count)."),
  visitor_messages: count("Messages the visitors of those conversations sent."),
  resolved: count("Of the conversations, those whose outcome is resolved (as it stands)."),
  handed_off: count("Of the conversations, those handed to a person."),
  unresolved: count("Of the conversations, those whose outcome is unresolved (as it stands)."),
  abandoned: count("Of the conversations, those where the visitor sent no message (as it stands)."),
  handoff_reasons: counts(handoffReasons, "The handed_off conversations by handoff_reason."),
  fallback_replies: count("Replies that were the chatbot's fallback reply (it could not answer)."),
  feedback_up: count("Thumbs up on the chatbot's replies."),
  feedback_down: count("Thumbs down."),
  ratings: count("Conversations the visitor rated."),
  rating_average: z.nullable(z.number().check(z.describe("Their average score, 1–5 (null: none)."))),
  first_replies: count("Conversations with a first reply."),
  first_reply_ms_p50: z.nullable(
    z
      .int()
      .check(
        z.describe(
          "Median milliseconds from the visitor's first message to the first reply (null: none), within 2 %.",
        ),
      ),
  ),
  lookups: count("Look-ups the chatbot made."),
  lookups_by_outcome: counts(lookupOutcomes, "The look-ups by their outcome."),
};

const response = z.object({
  from: z.string(),
  to: z.string(),
  chatbot_id: z.nullable(z.string()),
  granularity: z.literal("day"),
  series: z
    .array(z.object({ date: z.string().check(z.describe("UTC day, YYYY-MM-DD.")), ...figures }))
    .check(z.describe("Every day of the range, oldest first (days without conversations hold zeros).")),
  totals: z.object(figures).check(z.describe("The whole range.")),
});

export const contract = {
  operationId: "manageGetAnalytics",
  summary: "Read analytics",
  description: `Per UTC day (by the day each conversation started): conversations and their outcomes as they stand (an outcome is final 24 hours after the conversation's last message, at a handoff or at the close: a recent day's figures may still change), handoffs by reason, visitor messages, fallback replies, thumbs, ratings, the median time to first reply and look-ups; totals for the range. Up to ${MAX_ANALYTICS_DAYS} days per request; one read whatever the traffic (counters kept as conversations change). Test conversations are never counted.`,
  tags: ["Management: analytics"],
  auth: "manage",
  access: "viewer",
  query,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, typeof query, undefined, typeof response>;

const ctx = contextFromEnvironment();

const toFigures = (figures: AnalyticsFigures) => ({
  conversations: figures.conversations,
  visitor_messages: figures.visitorMessages,
  resolved: figures.outcomes.resolved,
  handed_off: figures.outcomes.handed_off,
  unresolved: figures.outcomes.unresolved,
  abandoned: figures.outcomes.abandoned,
  handoff_reasons: figures.handoffReasons,
  fallback_replies: figures.fallbackReplies,
  feedback_up: figures.feedbackUp,
  feedback_down: figures.feedbackDown,
  ratings: figures.ratings,
  rating_average: figures.ratingAverage,
  first_replies: figures.firstReplies,
  first_reply_ms_p50: figures.firstReplyMsP50,
  lookups: figures.lookups,
  lookups_by_outcome: figures.lookupResults,
});

export const handler = apiHandler(contract, async ({ caller, query }) => {
  const {
    from,
    to,
    days: span,
  } = dayRange(query, dayOf(ctx.clock()), {
    defaultDays: DEFAULT_ANALYTICS_DAYS,
    maxDays: MAX_ANALYTICS_DAYS,
  });
  const days = await readAnalyticsDays(ctx, {
    organizationId: caller.organizationId,
    from,
    to,
    ...(query.chatbot_id ? { chatbotId: query.chatbot_id } : {}),
  });
  const byDay = new Map(days.map((day) => [day.day, day]));
  const start = Date.parse(`${from}T00:00:00Z`);
  const series = Array.from({ length: span }, (_, offset) => {
    const date = dayOf(start + offset * DAY_MS);
    const day = byDay.get(date);
    return { date, ...toFigures(figuresOf(day ? [day] : [])) };
  });
  return {
    body: {
      from,
      to,
      chatbot_id: query.chatbot_id ?? null,
      granularity: "day" as const,
      series,
      totals: toFigures(figuresOf(days)),
    },
  };
});
