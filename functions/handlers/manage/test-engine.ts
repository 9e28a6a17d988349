/**
 * POST /manage/chatbots/{chatbot_id}/engine/test — one short model call with the engine as it would
 * be saved (the same rules as PATCH, the same guard and key handling as a turn); nothing is stored.
 */

import * as z from "zod/mini";
import { agentServicesFromEnvironment } from "#functions/agent/services";
import { contextFromEnvironment } from "#functions/domain/context";
import { ENGINE_TEST_MESSAGE, testEngine } from "#functions/domain/engine-test";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { engineFrom, stageEngineOptions } from "#functions/http/chatbot-settings";
import { chatbotIdParameter, chatbotSettings } from "#functions/http/manage-inputs";

const path = z.object({ chatbot_id: chatbotIdParameter });
const body = z.object({
  engine: chatbotSettings.engine,
  message: z.optional(
    z
      .string()
      .check(
        z.minLength(1),
        z.maxLength(500),
        z.describe(`What the test says to the model (default: "${ENGINE_TEST_MESSAGE}").`),
      ),
  ),
});

const response = z.object({
  ok: z.boolean().check(z.describe("Whether the engine answered.")),
  reply: z.nullable(z.string().check(z.describe("The model's answer (when it answered)."))),
  latency_ms: z.int().check(z.describe("How long the engine took.")),
  input_tokens: z.int(),
  output_tokens: z.int(),
  error: z.nullable(
    z
      .object({
        code: z
          .enum([
            "auth_failed",
            "not_found",
            "rate_limited",
            "timeout",
            "blocked_address",
            "unreachable",
            "bad_response",
            "model_error",
            "configuration",
          ])
          .check(z.describe("What went wrong.")),
        message: z.string().check(z.describe("What went wrong, in words (never a key).")),
        status: z.nullable(z.int().check(z.describe("The model server's HTTP status, when it answered."))),
      })
      .check(z.describe("Why the engine did not answer; null when it did.")),
  ),
});

export const contract = {
  operationId: "manageTestEngine",
  summary: "Test a chatbot's engine",
  description:
    "Sends one short message to the engine given (as PATCH would save it: a pasted `api_key` is used once, not stored; without one, the stored key of the same server) with the chatbot's instructions, within 15 s, and answers what came back: the reply, or why there was none. A failing engine is a 200 with `ok: false`; the settings' own problems are the 403/422 of PATCH.",
  tags: ["Management: chatbots"],
  auth: "manage",
  access: "admin",
  path,
  body,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const ctx = Object.assign(contextFromEnvironment(), { agent: agentServicesFromEnvironment() });

export const handler = apiHandler(contract, async ({ caller, path, body }) => {
  const result = await testEngine(ctx, {
    organizationId: caller.organizationId,
    chatbotId: path.chatbot_id,
    choose: (current) => engineFrom(body.engine, caller, current, stageEngineOptions()),
    ...(body.message === undefined ? {} : { message: body.message }),
  });
  return {
    body: result.ok
      ? {
          ok: true,
          reply: result.reply,
          latency_ms: result.latencyMs,
          input_tokens: result.inputTokens,
          output_tokens: result.outputTokens,
          error: null,
        }
      : {
          ok: false,
          reply: null,
          latency_ms: result.latencyMs,
          input_tokens: 0,
          output_tokens: 0,
          error: { code: result.failure, message: result.message, status: result.status ?? null },
        },
  };
});
