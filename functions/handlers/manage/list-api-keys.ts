/** GET /manage/api-keys — the organization's API keys: name, prefix, scope, created, last used. */

import * as z from "zod/mini";
import { listApiKeys } from "#functions/domain/api-keys";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { apiKeyView, toApiKeyView } from "#functions/http/manage-views";

const query = z.object({
  include_revoked: z._default(
    z.boolean().check(z.describe("Also list revoked keys (default false).")),
    false,
  ),
});

const response = z.object({ api_keys: z.array(apiKeyView).check(z.describe("Oldest first.")) });

export const contract = {
  operationId: "manageListApiKeys",
  summary: "List API keys",
  description:
    "The organization's API keys, never the keys themselves: name, the key's first characters, scope, when it was created and last used (last admitted request).",
  tags: ["Management: API keys"],
  auth: "manage",
  access: "admin",
  query,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, typeof query, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, query }) => {
  const found = await listApiKeys(ctx, caller.organizationId);
  return {
    body: {
      api_keys: found.filter((key) => query.include_revoked || key.revokedAt === undefined).map(toApiKeyView),
    },
  };
});
