/** POST /manage/chatbots/{chatbot_id}/knowledge/search — the passages a turn with this question would use. */

import * as z from "zod/mini";
import { agentServicesFromEnvironment } from "#functions/agent/services";
import { loadChatbotBundle } from "#functions/domain/chatbots";
import { contextFromEnvironment } from "#functions/domain/context";
import { AppError } from "#functions/errors";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter } from "#functions/http/manage-inputs";
import { PASSAGES_PER_TURN } from "#functions/knowledge/retriever";

const path = z.object({ chatbot_id: chatbotIdParameter });
const body = z.object({
  query: z
    .string()
    .check(
      z.minLength(1),
      z.maxLength(2_000),
      z.describe("A visitor's question, as a visitor would send it."),
    ),
  limit: z.optional(
    z
      .int()
      .check(
        z.minimum(1),
        z.maximum(20),
        z.describe(`Passages at most (default ${PASSAGES_PER_TURN}: what a turn puts before the model).`),
      ),
  ),
});
const result = z.object({
  source_id: z.string(),
  title: z.string().check(z.describe("The source's title.")),
  url: z.nullable(z.string()),
  text: z.string().check(z.describe("The passage.")),
  score: z.number().check(z.describe("Reciprocal rank fusion of the two rankings, 1 when first in both.")),
  confident: z
    .boolean()
    .check(
      z.describe(
        "It clears a bar that says it answers the question: a reply cites it, the scripted engine answers with the first such passage.",
      ),
    ),
  lexical_score: z.nullable(z.number().check(z.describe("BM25 score, when its words match."))),
  semantic_similarity: z.nullable(
    z.number().check(z.describe("Cosine similarity of the embeddings, when compared.")),
  ),
});
const response = z.object({
  results: z.array(result).check(z.describe("Best first; [] when nothing is relevant.")),
});

export const contract = {
  operationId: "manageSearchKnowledge",
  summary: "Test a question against the knowledge",
  description:
    "Exactly the passages a turn with this question would retrieve (the same hybrid search: words and embeddings, fused), best first, with their scores. Nothing is stored.",
  tags: ["Management: knowledge"],
  auth: "manage",
  access: "viewer",
  path,
  body,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();
const agent = agentServicesFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path, body }) => {
  const bundle = await loadChatbotBundle(ctx, caller.organizationId, path.chatbot_id, {
    readKnowledge: !agent.knowledgeIndexed(caller.organizationId, path.chatbot_id),
  });
  if (!bundle) throw new AppError("chatbot_not_found");
  const retrieval = await agent.retrieve({
    bundle,
    question: body.query,
    ...(body.limit ? { limit: body.limit } : {}),
  });
  return {
    body: {
      results: retrieval.passages.map((ranked) => ({
        source_id: ranked.passage.sourceId,
        title: ranked.passage.sourceTitle,
        url: ranked.passage.url ?? null,
        text: ranked.passage.text,
        score: Math.round(ranked.score * 1000) / 1000,
        confident: ranked.confident,
        lexical_score: ranked.lexical ? Math.round(ranked.lexical.score * 1000) / 1000 : null,
        semantic_similarity: ranked.semantic ? Math.round(ranked.semantic.similarity * 1000) / 1000 : null,
      })),
    },
  };
});
