/** GET /manage/conversations — the organization's conversations, most recent activity first, filtered. */

import * as z from "zod/mini";
import { withContacts } from "#functions/domain/contacts";
import { contextFromEnvironment } from "#functions/domain/context";
import { listConversations } from "#functions/domain/conversation-listing";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { conversationFilters } from "#functions/http/conversation-view";
import {
  conversationStatus,
  conversationView,
  pageQuery,
  toConversationView,
} from "#functions/http/manage-views";
import { uuid } from "#functions/http/schemas";
import { dayOrInstant, orderedRange } from "#functions/http/time-parameters";

const query = z
  .object({
    chatbot_id: z.optional(uuid("Only this chatbot's conversations.")),
    contact_id: z.optional(uuid("Only this contact's conversations.")),
    external_id: z.optional(
      z
        .string()
        .check(z.minLength(1), z.maxLength(255), z.describe("Only conversations with this external id.")),
    ),
    status: z.optional(conversationStatus.check(z.describe("Only conversations in this status."))),
    from: z.optional(dayOrInstant("Last activity at or after")),
    to: z.optional(dayOrInstant("Last activity at or before (a date: the whole day)")),
    ...pageQuery,
  })
  .check(orderedRange());

const response = z.object({
  conversations: z.array(conversationView).check(z.describe("Most recent activity first.")),
  has_more: z.boolean(),
  next_cursor: z.nullable(z.string()),
});

export const contract = {
  operationId: "manageListConversations",
  summary: "List conversations",
  description:
    "The organization's conversations, most recent activity (message or status change) first. Every filter is optional and they combine. A page costs the same however many conversations the organization has.",
  tags: ["Management: conversations"],
  auth: "manage",
  access: "viewer",
  query,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, typeof query, undefined, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, query }) => {
  const page = await listConversations(ctx, {
    organizationId: caller.organizationId,
    filters: conversationFilters(query),
    limit: query.limit,
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  });
  return {
    body: {
      conversations: (await withContacts(ctx, caller.organizationId, page.conversations)).map(
        toConversationView,
      ),
      has_more: page.nextCursor !== null,
      next_cursor: page.nextCursor,
    },
  };
});
