/** GET /api/me — who the calling key belongs to; used by the n8n credential test. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { getOrganization } from "#functions/domain/organizations";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";

const response = z.object({
  organization_id: z.string(),
  organization_name: z.string(),
  key_id: z.string().check(z.describe("Identifier of the API key used (not the key itself).")),
  rate_limit: z.object({ limit: z.number().check(z.describe("Requests per minute for this key.")) }),
});

export const contract = {
  operationId: "getMe",
  summary: "Describe the calling API key",
  description: "The organization and rate limit of the API key making the request. No side effects.",
  tags: ["Account"],
  auth: "apiKey",
  response,
  errors: [401, 403, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", undefined, undefined, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller }) => {
  const organization = await getOrganization(ctx, caller.organizationId);
  return {
    body: {
      organization_id: organization.organizationId,
      organization_name: organization.name,
      key_id: caller.keyId,
      rate_limit: { limit: caller.rateLimit },
    },
  };
});
