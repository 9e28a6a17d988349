/**
 * POST /manage/members — an admin invites someone by e-mail with a role. A new person gets the
 * user pool's invitation e-mail (a temporary password; they choose their own at the first sign-in);
 * someone with an account already (a member elsewhere) simply gains this organization.
 */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { directoryFromEnvironment } from "#functions/domain/directory";
import { inviteMember } from "#functions/domain/people";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { displayName, email, role } from "#functions/http/manage-inputs";
import { memberView, toMemberView } from "#functions/http/manage-views";

const body = z.object({ email, role, display_name: displayName });

const response = z.extend(memberView, {
  invitation: z
    .enum(["sent", "existing_account"])
    .check(
      z.describe(
        "`sent`: a new account, the invitation e-mail is on its way; `existing_account`: they sign in as before.",
      ),
    ),
});

export const contract = {
  operationId: "manageInviteMember",
  summary: "Invite a member",
  description:
    "Adds a person to the organization with a role, inviting them by e-mail when they have no account yet. A person who is a member already is a 409.",
  tags: ["Management: members"],
  auth: "manage",
  access: "admin",
  status: 201,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, body }) => {
  const invited = await inviteMember(ctx, directoryFromEnvironment(), {
    organizationId: caller.organizationId,
    email: body.email,
    role: body.role,
    ...(body.display_name ? { displayName: body.display_name } : {}),
    invitedBy: caller.principal.kind === "user" ? caller.principal.userId : `key:${caller.principal.keyId}`,
  });
  return { body: { ...toMemberView(invited.member), invitation: invited.invitation } };
});
