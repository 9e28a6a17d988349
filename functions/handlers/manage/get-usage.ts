/** GET /manage/usage — usage per day and chatbot: messages, replies, fallbacks, look-ups, tokens. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { dayOf, lookupOutcomes, readUsage } from "#functions/domain/usage";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { toUsageDayView, usageDayView } from "#functions/http/manage-views";
import { uuid } from "#functions/http/schemas";
import { calendarDay, dayRange, orderedRange } from "#functions/http/time-parameters";

/** Days a report may span; counters are kept longer (USAGE_RETENTION_DAYS), so 90 days back always exist. */
export const MAX_USAGE_DAYS = 366;
const DEFAULT_USAGE_DAYS = 30;

const query = z
  .object({
    from: z.optional(calendarDay(`First day (default: ${DEFAULT_USAGE_DAYS - 1} days before \`to\`)`)),
    to: z.optional(calendarDay("Last day, included (default: today)")),
    chatbot_id: z.optional(uuid("Only this chatbot.")),
  })
  .check(orderedRange());

const totals = z.omit(usageDayView, { date: true, chatbot_id: true });

const response = z.object({
  from: z.string(),
  to: z.string(),
  days: z
    .array(usageDayView)
    .check(z.describe("One entry per day and chatbot that had any turn; oldest first.")),
  totals,
});

export const contract = {
  operationId: "manageGetUsage",
  summary: "Read usage",
  description: `Per UTC day and chatbot: visitor messages, replies, fallback replies, look-ups by outcome and model tokens (input and output). Up to ${MAX_USAGE_DAYS} days per request; at least the last 90 days are kept.`,
  tags: ["Management: usage"],
  auth: "manage",
  access: "viewer",
  query,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, typeof query, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, query }) => {
  const { from, to } = dayRange(query, dayOf(ctx.clock()), {
    defaultDays: DEFAULT_USAGE_DAYS,
    maxDays: MAX_USAGE_DAYS,
  });
  const days = (
    await readUsage(ctx, {
      organizationId: caller.organizationId,
      from,
      to,
      ...(query.chatbot_id ? { chatbotId: query.chatbot_id } : {}),
    })
  ).map(toUsageDayView);
  const sum = (pick: (entry: (typeof days)[number]) => number) =>
    days.reduce((total, entry) => total + pick(entry), 0);
  return {
    body: {
      from,
      to,
      days,
      totals: {
        visitor_messages: sum((entry) => entry.visitor_messages),
        replies: sum((entry) => entry.replies),
        fallbacks: sum((entry) => entry.fallbacks),
        lookups: Object.fromEntries(
          lookupOutcomes.map((outcome) => [outcome, sum((entry) => entry.lookups[outcome])]),
        ) as (typeof days)[number]["lookups"],
        input_tokens: sum((entry) => entry.input_tokens),
        output_tokens: sum((entry) => entry.output_tokens),
      },
    },
  };
});
