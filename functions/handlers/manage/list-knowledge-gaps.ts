/** GET /manage/chatbots/{chatbot_id}/knowledge-gaps — questions the knowledge could not answer, grouped. */

import * as z from "zod/mini";
import { getChatbot } from "#functions/domain/chatbots";
import { contextFromEnvironment } from "#functions/domain/context";
import { validationError } from "#functions/errors";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter } from "#functions/http/manage-inputs";
import { isoTimestamp } from "#functions/http/schemas";
import { similarityBars } from "#functions/knowledge/embeddings";
import { listKnowledgeGaps } from "#functions/knowledge/gaps";
import { TITAN_V2 } from "#functions/knowledge/models";

/** Days one listing may span (gaps are kept 100 days). */
export const MAX_GAP_DAYS = 90;
const DEFAULT_GAP_DAYS = 30;
const DAY_MS = 86_400_000;

const day = (description: string) =>
  z.optional(
    z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/), z.describe(`${description} (UTC, YYYY-MM-DD).`)),
  );

const path = z.object({ chatbot_id: chatbotIdParameter });
const query = z.object({
  from: day(`First day (default: ${DEFAULT_GAP_DAYS - 1} days before \`to\`)`),
  to: day("Last day, included (default: today)"),
});
const gap = z.object({
  question: z.string().check(z.describe("The most asked wording of the group.")),
  count: z.int().check(z.describe("Times a question of the group was asked.")),
  last_asked_at: isoTimestamp("When one was last asked"),
  conversation_id: z.string().check(z.describe("The conversation it was last asked in.")),
});
const response = z.object({
  gaps: z.array(gap).check(z.describe("Similar questions grouped, most frequent first; at most 100 groups.")),
});

export const contract = {
  operationId: "manageListKnowledgeGaps",
  summary: "List knowledge gaps",
  description: `Visitors' questions the chatbot's knowledge could not answer (the reply was the fallback, or no passage answered confidently), similar ones grouped, most frequent first. Up to ${MAX_GAP_DAYS} days per request.`,
  tags: ["Management: knowledge"],
  auth: "manage",
  access: "viewer",
  path,
  query,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, typeof query, typeof path, typeof response>;

const ctx = contextFromEnvironment();
/** Two questions whose embeddings are this similar are one question (a little above the answer bar). */
const similar = Math.min(
  0.9,
  similarityBars(process.env.EMBEDDING_MODEL_ID || TITAN_V2, process.env.EMBEDDING_SIMILARITY_BARS)
    .confident + 0.2,
);

export const handler = apiHandler(contract, async ({ caller, path, query }) => {
  const to = query.to ?? new Date(ctx.clock()).toISOString().slice(0, 10);
  const from =
    query.from ??
    new Date(Date.parse(`${to}T00:00:00Z`) - (DEFAULT_GAP_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
  const span = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
  if (!Number.isFinite(span) || span < 1 || span > MAX_GAP_DAYS) {
    throw validationError([
      {
        type: "value_error",
        loc: ["query", "from"],
        msg: `Value error, from must be a valid day on or before to, at most ${MAX_GAP_DAYS} days before it`,
        input: query.from ?? from,
      },
    ]);
  }
  await getChatbot(ctx, caller.organizationId, path.chatbot_id);
  const gaps = await listKnowledgeGaps(ctx, {
    organizationId: caller.organizationId,
    chatbotId: path.chatbot_id,
    from,
    to,
    similar,
  });
  return {
    body: {
      gaps: gaps.map((found) => ({
        question: found.question,
        count: found.count,
        last_asked_at: found.lastAskedAt,
        conversation_id: found.conversationId,
      })),
    },
  };
});
