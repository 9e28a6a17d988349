/** GET /manage/tool-templates — the look-up templates, described for the console's tool forms. */

import * as z from "zod/mini";
import { describeTemplates } from "#functions/domain/tools";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";

const variable = z.object({ name: z.string(), label: z.string(), description: z.string(), kind: z.string() });

const template = z.object({
  kind: z.string(),
  platform: z.string(),
  config: z
    .record(z.string(), z.unknown())
    .check(z.describe("JSON Schema of the template's settings: required fields, types, defaults.")),
  credentials: z
    .array(z.object({ name: z.string(), required: z.boolean() }))
    .check(z.describe("Credential fields: write-only.")),
  variables: z.array(variable).check(z.describe("What the visitor must give before a look-up.")),
  variables_note: z.nullable(z.string()),
  default_requests_per_minute: z.int(),
});

const response = z.object({ templates: z.array(template) });

export const contract = {
  operationId: "manageListToolTemplates",
  summary: "List look-up tool templates",
  description:
    "The five platform templates and the generic read-only GET: the settings each needs (as JSON Schema), its credential fields, and the details the chatbot collects from the visitor before a look-up.",
  tags: ["Management: tools"],
  auth: "manage",
  access: "viewer",
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, undefined, typeof response>;

export const handler = apiHandler(contract, async () => ({
  body: {
    templates: describeTemplates().map((described) => ({
      kind: described.kind,
      platform: described.platform,
      config: described.config,
      credentials: described.credentials,
      variables: described.variables,
      variables_note: described.variablesNote ?? null,
      default_requests_per_minute: described.defaultRequestsPerMinute,
    })),
  },
}));
