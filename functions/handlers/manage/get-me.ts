/** GET /manage/me — who is calling: the person or key, operator or not, and their organizations. */

import * as z from "zod/mini";
import { getApiKey } from "#functions/domain/api-keys";
import { contextFromEnvironment } from "#functions/domain/context";
import { getOrganization, getOrganizations } from "#functions/domain/organizations";
import { personOverview } from "#functions/domain/people";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { apiKeyScope } from "#functions/http/manage-views";

const membership = z.object({
  organization_id: z.string(),
  organization_name: z.string(),
  role: z.enum(["admin", "viewer"]),
});

const response = z.object({
  principal: z.union([
    z.object({
      type: z.literal("user"),
      user_id: z.string().check(z.describe("The person's id (the user pool's `sub`).")),
      email: z.nullable(z.string()),
    }),
    z.object({ type: z.literal("api_key"), key_id: z.string(), name: z.string(), scope: apiKeyScope }),
  ]),
  operator: z
    .boolean()
    .check(z.describe("A platform operator: manages organizations, subscriptions and rate limits.")),
  memberships: z
    .array(membership)
    .check(
      z.describe(
        "The organizations the caller may act on, with the role in each (a key: its own organization, as an admin). Send the chosen one's id as `X-Organization-Id`.",
      ),
    ),
});

export const contract = {
  operationId: "manageGetMe",
  summary: "Who am I",
  description:
    "The signed-in person (or the API key), whether they are a platform operator, and every organization they belong to with their role: what the console's organization switcher shows. Needs no `X-Organization-Id`.",
  tags: ["Management: account"],
  auth: "manage",
  access: "signedIn",
  response,
  errors: [401, 403, 404, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller }) => {
  if (caller.principal.kind === "key") {
    const organizationId = caller.organizationId ?? "";
    const [key, organization] = await Promise.all([
      getApiKey(ctx, { organizationId, keyId: caller.principal.keyId }),
      getOrganization(ctx, organizationId),
    ]);
    return {
      body: {
        principal: {
          type: "api_key" as const,
          key_id: key.keyId,
          name: key.name,
          scope: key.scope ?? "chat",
        },
        operator: false,
        memberships: [
          {
            organization_id: organization.organizationId,
            organization_name: organization.name,
            role: "admin" as const,
          },
        ],
      },
    };
  }
  const person = await personOverview(ctx, caller.principal.userId);
  const organizations = await getOrganizations(
    ctx,
    person.memberships.map((member) => member.organizationId),
  );
  return {
    body: {
      principal: { type: "user" as const, user_id: person.userId, email: person.email ?? null },
      operator: person.operator,
      memberships: person.memberships.flatMap((member) => {
        const organization = organizations.get(member.organizationId);
        return organization
          ? [
              {
                organization_id: organization.organizationId,
                organization_name: organization.name,
                role: member.role,
              },
            ]
          : [];
      }),
    },
  };
});
