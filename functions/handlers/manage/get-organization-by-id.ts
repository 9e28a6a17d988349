/** GET /manage/organizations/{organization_id} — a platform operator reads any organization. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { getOrganization } from "#functions/domain/organizations";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { organizationIdParameter } from "#functions/http/manage-inputs";
import { organizationView, toOrganizationView } from "#functions/http/manage-views";

const path = z.object({ organization_id: organizationIdParameter });
const response = organizationView;

export const contract = {
  operationId: "manageGetOrganizationById",
  summary: "Read an organization (operators)",
  description: "Any organization of the platform. Platform operators only.",
  tags: ["Management: platform"],
  auth: "manage",
  access: "operator",
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ path }) => ({
  body: toOrganizationView(await getOrganization(ctx, path.organization_id)),
}));
