/** GET /manage/contacts — the organization's contacts, newest first, or those a search finds. */

import * as z from "zod/mini";
import { listContacts } from "#functions/domain/contacts";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { contactView, toContactView } from "#functions/http/contact-view";
import { pageQuery } from "#functions/http/manage-views";

const query = z.object({
  query: z.optional(
    z
      .string()
      .check(
        z.maxLength(200),
        z.describe(
          "Finds contacts with a name, a word of the name, an e-mail address, an e-mail domain, a phone number (its digits) or an external id that starts with this text; case and accents do not matter. Empty: every contact, newest first.",
        ),
      ),
  ),
  ...pageQuery,
});

const response = z.object({
  contacts: z
    .array(contactView)
    .check(z.describe("Newest first; with a query, in the order of what matched (each contact once).")),
  has_more: z.boolean(),
  next_cursor: z.nullable(z.string().check(z.describe("Pass as `cursor` for the next page."))),
});

export const contract = {
  operationId: "manageListContacts",
  summary: "List or search contacts",
  description:
    "The organization's contacts (the people behind conversations), newest first, or those whose name, e-mail, phone or external id starts with `query`. A page costs the same however many contacts the organization has; a search page may hold fewer than `limit` contacts while `has_more` is true.",
  tags: ["Management: contacts"],
  auth: "manage",
  access: "viewer",
  query,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, typeof query, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, query }) => {
  const page = await listContacts(ctx, {
    organizationId: caller.organizationId,
    query: query.query,
    limit: query.limit,
    cursor: query.cursor,
  });
  return {
    body: {
      contacts: page.contacts.map(toContactView),
      has_more: page.nextCursor !== null,
      next_cursor: page.nextCursor,
    },
  };
});
