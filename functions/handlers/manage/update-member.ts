/** PATCH /manage/members/{user_id} — an admin changes a member's role (never the last admin's). */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { changeMemberRole } from "#functions/domain/people";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { role, userIdParameter } from "#functions/http/manage-inputs";
import { memberView, toMemberView } from "#functions/http/manage-views";

const path = z.object({ user_id: userIdParameter });
const body = z.object({ role });
const response = memberView;

export const contract = {
  operationId: "manageUpdateMember",
  summary: "Change a member's role",
  description:
    "Makes a member an admin or a viewer. The organization's last admin cannot become a viewer (409, `details.reason` = `last_admin`).",
  tags: ["Management: members"],
  auth: "manage",
  access: "admin",
  path,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path, body }) => ({
  body: toMemberView(
    await changeMemberRole(ctx, {
      organizationId: caller.organizationId,
      userId: path.user_id,
      role: body.role,
    }),
  ),
}));
