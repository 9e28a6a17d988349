/** GET /manage/organizations — platform operators list every organization, a page at a time. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { listOrganizationsPage } from "#functions/domain/organizations";
import { validationError } from "#functions/errors";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { organizationView, pageQuery, toOrganizationView } from "#functions/http/manage-views";

const query = z.object(pageQuery);

const response = z.object({
  organizations: z.array(organizationView).check(z.describe("In id order.")),
  has_more: z.boolean(),
  next_cursor: z.nullable(z.string()),
});

export const contract = {
  operationId: "manageListOrganizations",
  summary: "List organizations (operators)",
  description: "Every organization of the platform, in id order, a page at a time. Platform operators only.",
  tags: ["Management: platform"],
  auth: "manage",
  access: "operator",
  query,
  response,
  errors: [401, 403, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, typeof query, undefined, typeof response>;

const ctx = contextFromEnvironment();

/** The cursor is the last organization id of the page, encoded; anything else is refused. */
function afterOf(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (/^[0-9a-f-]{36}$/.test(id)) return id;
  throw validationError([
    { type: "value_error", loc: ["query", "cursor"], msg: "Value error, Invalid cursor", input: cursor },
  ]);
}

export const handler = apiHandler(contract, async ({ query }) => {
  const after = afterOf(query.cursor);
  const page = await listOrganizationsPage(ctx, { limit: query.limit, ...(after ? { after } : {}) });
  return {
    body: {
      organizations: page.organizations.map(toOrganizationView),
      has_more: page.nextAfter !== null,
      next_cursor: page.nextAfter === null ? null : Buffer.from(page.nextAfter).toString("base64url"),
    },
  };
});
