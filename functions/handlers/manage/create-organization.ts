/**
 * POST /manage/organizations — a platform operator creates an organization, optionally inviting its
 * first admin by e-mail in the same call.
 */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { directoryFromEnvironment } from "#functions/domain/directory";
import { createOrganization } from "#functions/domain/organizations";
import { inviteMember } from "#functions/domain/people";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { email, organizationName, rateLimit, subscription } from "#functions/http/manage-inputs";
import { memberView, organizationView, toMemberView, toOrganizationView } from "#functions/http/manage-views";

const body = z.object({
  name: organizationName,
  rate_limit: z.optional(rateLimit),
  subscription: z.optional(subscription),
  admin_email: z.optional(email),
});

const response = z.object({
  organization: organizationView,
  admin: z.nullable(memberView).check(z.describe("The first admin, when `admin_email` was given.")),
  invitation: z
    .nullable(z.enum(["sent", "existing_account"]))
    .check(
      z.describe(
        "`sent`: a new account, the invitation e-mail is on its way; `existing_account`: they sign in as before.",
      ),
    ),
});

export const contract = {
  operationId: "manageCreateOrganization",
  summary: "Create an organization (operators)",
  description:
    "Creates an organization (active, 100 requests per minute per key unless told otherwise). With `admin_email`, that person becomes its first admin: invited by e-mail, or added if they have an account already. Platform operators only.",
  tags: ["Management: platform"],
  auth: "manage",
  access: "operator",
  status: 201,
  body,
  response,
  errors: [401, 403, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, body }) => {
  const organization = await createOrganization(ctx, {
    name: body.name,
    ...(body.rate_limit === undefined ? {} : { rateLimit: body.rate_limit }),
    ...(body.subscription === undefined ? {} : { subscription: body.subscription }),
  });
  const invited = body.admin_email
    ? await inviteMember(ctx, directoryFromEnvironment(), {
        organizationId: organization.organizationId,
        email: body.admin_email,
        role: "admin",
        ...(caller.principal.kind === "user" ? { invitedBy: caller.principal.userId } : {}),
      })
    : undefined;
  return {
    body: {
      organization: toOrganizationView(organization),
      admin: invited ? toMemberView(invited.member) : null,
      invitation: invited?.invitation ?? null,
    },
  };
});
