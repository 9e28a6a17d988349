/** DELETE /manage/api-keys/{key_id} — revokes a key: its next request gets 401. */

import * as z from "zod/mini";
import { revokeApiKey } from "#functions/domain/api-keys";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";

const path = z.object({
  key_id: z
    .string()
    .check(z.regex(/^key_[0-9A-Za-z]{16}$/), z.describe("The key's id (`key_…`), not the key.")),
});
const response = z.never();

export const contract = {
  operationId: "manageRevokeApiKey",
  summary: "Revoke an API key",
  description:
    "Revokes the key at once: its next request is refused (there is no cache to wait out). Revoking a revoked key changes nothing.",
  tags: ["Management: API keys"],
  auth: "manage",
  access: "admin",
  status: 204,
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => {
  await revokeApiKey(ctx, { organizationId: caller.organizationId, keyId: path.key_id });
  return { body: undefined };
});
