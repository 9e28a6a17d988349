/** POST /manage/api-keys — a new API key of scope chat or manage; the key is in this answer only. */

import * as z from "zod/mini";
import { createApiKey } from "#functions/domain/api-keys";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { apiKeyScope } from "#functions/http/manage-views";

const body = z.object({
  name: z
    .string()
    .check(z.minLength(1), z.maxLength(100), z.describe("A label, e.g. where the key is used.")),
  scope: z._default(
    apiKeyScope.check(
      z.describe(
        "`chat` (default): the public API only. `manage`: also the management API, as an admin of this organization.",
      ),
    ),
    "chat",
  ),
  test: z._default(
    z
      .boolean()
      .check(
        z.describe(
          "`true`: a key for trying chatbots out (the console's Try it panel): scope `chat`, valid one hour, left out of key listings; the conversations it starts are marked `test`.",
        ),
      ),
    false,
  ),
});

const response = z.object({
  key_id: z.string(),
  name: z.string(),
  scope: apiKeyScope,
  prefix: z.string(),
  created_at: z.string().check(z.describe("ISO 8601, UTC")),
  expires_at: z.nullable(z.string().check(z.describe("When the key stops working (test keys), ISO 8601."))),
  key: z.string().check(z.describe("The key itself. Shown this once: store it now; only its hash is kept.")),
});

export const contract = {
  operationId: "manageCreateApiKey",
  summary: "Create an API key",
  description:
    "Creates a key for the organization. The answer holds the key itself, the only time it is ever shown.",
  tags: ["Management: API keys"],
  auth: "manage",
  access: "admin",
  status: 201,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, body }) => {
  const created = await createApiKey(ctx, {
    organizationId: caller.organizationId,
    name: body.name,
    scope: body.scope,
    test: body.test,
  });
  return {
    body: {
      key_id: created.record.keyId,
      name: created.record.name,
      scope: body.scope,
      prefix: created.record.displayPrefix,
      created_at: created.record.createdAt,
      expires_at:
        created.record.expiresAt === undefined
          ? null
          : new Date(created.record.expiresAt * 1000).toISOString(),
      key: created.apiKey,
    },
    headers: { "cache-control": "no-store" },
  };
});
