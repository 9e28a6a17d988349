/** GET /manage/organization — the organization acted on. */

import { contextFromEnvironment } from "#functions/domain/context";
import { getOrganization } from "#functions/domain/organizations";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { organizationView, toOrganizationView } from "#functions/http/manage-views";

const response = organizationView;

export const contract = {
  operationId: "manageGetOrganization",
  summary: "Read the organization",
  description:
    "The organization named by `X-Organization-Id` (or the caller's only one): name, subscription and rate limit.",
  tags: ["Management: organization"],
  auth: "manage",
  access: "viewer",
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller }) => ({
  body: toOrganizationView(await getOrganization(ctx, caller.organizationId)),
}));
