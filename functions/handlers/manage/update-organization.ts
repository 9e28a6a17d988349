/** PATCH /manage/organization — an admin renames their organization. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { updateOrganization } from "#functions/domain/organizations";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { organizationName } from "#functions/http/manage-inputs";
import { organizationView, toOrganizationView } from "#functions/http/manage-views";

const body = z.object({ name: organizationName });
const response = organizationView;

export const contract = {
  operationId: "manageUpdateOrganization",
  summary: "Rename the organization",
  description:
    "Admins may change their organization's name. Subscription and rate limit are the platform operators' (`PATCH /manage/organizations/{organization_id}`).",
  tags: ["Management: organization"],
  auth: "manage",
  access: "admin",
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, body }) => ({
  body: toOrganizationView(await updateOrganization(ctx, caller.organizationId, { name: body.name })),
}));
