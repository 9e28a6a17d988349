/** DELETE /manage/members/{user_id} — an admin removes a member (never the last admin). */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { removeMember } from "#functions/domain/people";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { userIdParameter } from "#functions/http/manage-inputs";

const path = z.object({ user_id: userIdParameter });
const response = z.never();

export const contract = {
  operationId: "manageRemoveMember",
  summary: "Remove a member",
  description:
    "Takes the organization away from a person (their account stays, for their other organizations). The last admin cannot be removed (409, `details.reason` = `last_admin`).",
  tags: ["Management: members"],
  auth: "manage",
  access: "admin",
  status: 204,
  path,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => {
  await removeMember(ctx, { organizationId: caller.organizationId, userId: path.user_id });
  return { body: undefined };
});
