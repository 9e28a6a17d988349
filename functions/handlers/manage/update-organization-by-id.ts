/**
 * PATCH /manage/organizations/{organization_id} — a platform operator changes an organization's
 * name, subscription or rate limit; its API keys follow on their very next request.
 */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { updateOrganization } from "#functions/domain/organizations";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import {
  organizationIdParameter,
  organizationName,
  rateLimit,
  subscription,
} from "#functions/http/manage-inputs";
import { organizationView, toOrganizationView } from "#functions/http/manage-views";

const path = z.object({ organization_id: organizationIdParameter });
const body = z.object({
  name: z.optional(organizationName),
  subscription: z.optional(subscription),
  rate_limit: z.optional(rateLimit),
});
const response = organizationView;

export const contract = {
  operationId: "manageUpdateOrganizationById",
  summary: "Change an organization (operators)",
  description:
    "Name, subscription (`active`/`inactive`) and rate limit (requests per minute per API key) of any organization. Takes effect on its keys' next request. Platform operators only.",
  tags: ["Management: platform"],
  auth: "manage",
  access: "operator",
  path,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ path, body }) => ({
  body: toOrganizationView(
    await updateOrganization(ctx, path.organization_id, {
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.subscription === undefined ? {} : { subscription: body.subscription }),
      ...(body.rate_limit === undefined ? {} : { rateLimit: body.rate_limit }),
    }),
  ),
}));
