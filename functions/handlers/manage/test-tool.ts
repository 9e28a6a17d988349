/**
 * POST /manage/chatbots/{chatbot_id}/tools/{tool_id}/test — runs one look-up against the real
 * platform with sample values (test that the external API answers with the expected data), and
 * shows what was requested (credentials redacted) and what the chatbot would be given.
 */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { testTool } from "#functions/domain/tools";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter, toolIdParameter } from "#functions/http/manage-inputs";
import { lazyToolsContext } from "#functions/http/tool-inputs";
import { toolEnvironment } from "#functions/tools/environment";
import { createHttpGet, type HttpGet } from "#functions/tools/http-get";

const path = z.object({ chatbot_id: chatbotIdParameter, tool_id: toolIdParameter });
const body = z.object({
  values: z
    .record(
      z.string().check(z.regex(/^[a-z][a-z0-9_]{0,31}$/), z.maxLength(32)),
      z.string().check(z.minLength(1), z.maxLength(320)),
    )
    .check(
      z.describe("A sample value per variable the tool collects, e.g. a real order number and its e-mail."),
    ),
});

const response = z.object({
  tool: z.object({ tool_id: z.string(), name: z.string(), platform: z.string() }),
  values: z.record(z.string(), z.string()),
  result: z
    .enum(["found", "not_found", "needs_input", "auth_failed", "rate_limited", "timeout", "unavailable"])
    .check(z.describe("How the look-up ended.")),
  verdict: z.string().check(z.describe("What the result means, in words.")),
  requests: z
    .array(
      z.object({
        method: z.literal("GET"),
        url: z.string().check(z.describe("The URL requested; credential values replaced by `[redacted]`.")),
        headers: z
          .record(z.string(), z.string())
          .check(z.describe("Headers sent; credentials `[redacted]`.")),
        outcome: z.string().check(z.describe("`ok`, or how the request failed.")),
        status: z.nullable(z.int()).check(z.describe("The platform's HTTP status, when it answered.")),
      }),
    )
    .check(z.describe("What was sent to the platform, in order.")),
  duration_ms: z.int(),
  model_sees: z
    .record(z.string(), z.unknown())
    .check(
      z.describe(
        "Exactly what a model would be given: the visitor-safe summary (status, dates, items, tracking), never names, addresses or credentials.",
      ),
    ),
  scripted_reply: z.string().check(z.describe("What the scripted engine would answer.")),
});

export const contract = {
  operationId: "manageTestTool",
  summary: "Test a look-up tool",
  description:
    "Runs one look-up against the platform with sample values, as the chatbot would (the collected-first rule aside: you give the values). Shows each request sent (credentials redacted), the platform's answer status, and the redacted outcome the chatbot would see.",
  tags: ["Management: tools"],
  auth: "manage",
  access: "admin",
  path,
  body,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const tools = lazyToolsContext(contextFromEnvironment());
let http: HttpGet | undefined;

export const handler = apiHandler(contract, async ({ caller, path, body }) => {
  http ??= createHttpGet(toolEnvironment(process.env).http);
  const report = await testTool(
    tools(),
    {
      organizationId: caller.organizationId,
      chatbotId: path.chatbot_id,
      toolId: path.tool_id,
      values: body.values,
    },
    { http },
  );
  return {
    body: {
      tool: { tool_id: report.tool.toolId, name: report.tool.name, platform: report.tool.platform },
      values: report.values,
      result: report.result,
      verdict: report.verdict,
      requests: report.sent.map((sent) => ({ ...sent, status: sent.status ?? null })),
      duration_ms: report.durationMs,
      model_sees: { status: report.modelSees.status, content: report.modelSees.content },
      scripted_reply: report.scriptedReply,
    },
  };
});
