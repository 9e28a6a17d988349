/** GET /manage/members — the people of the organization and their roles. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { listMembers } from "#functions/domain/people";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { memberView, toMemberView } from "#functions/http/manage-views";

const response = z.object({ members: z.array(memberView).check(z.describe("By e-mail address.")) });

export const contract = {
  operationId: "manageListMembers",
  summary: "List members",
  description: "Everyone who may act on the organization, with their role.",
  tags: ["Management: members"],
  auth: "manage",
  access: "viewer",
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller }) => ({
  body: { members: (await listMembers(ctx, caller.organizationId)).map(toMemberView) },
}));
