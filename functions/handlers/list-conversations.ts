/** GET /api/conversations — the organization's conversations, most recent activity first, filtered. */

import * as z from "zod/mini";
import { withContacts } from "#functions/domain/contacts";
import { contextFromEnvironment } from "#functions/domain/context";
import { listConversations } from "#functions/domain/conversation-listing";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import {
  conversationFilters,
  publicConversationStatus,
  publicConversationView,
  toPublicConversationView,
} from "#functions/http/conversation-view";
import { pageQuery } from "#functions/http/manage-views";
import { uuid } from "#functions/http/schemas";

const query = z.object({
  chatbot_id: z.optional(uuid("Only this chatbot's conversations.")),
  contact_id: z.optional(uuid("Only this contact's conversations.")),
  external_id: z.optional(
    z
      .string()
      .check(z.minLength(1), z.maxLength(255), z.describe("Only conversations with this external id.")),
  ),
  status: z.optional(publicConversationStatus.check(z.describe("Only conversations in this status."))),
  ...pageQuery,
});

const response = z.object({
  conversations: z.array(publicConversationView).check(z.describe("Most recent activity first.")),
  has_more: z.boolean(),
  next_cursor: z.nullable(z.string().check(z.describe("Pass as `cursor` for the next page."))),
});

export const contract = {
  operationId: "listConversations",
  summary: "List conversations",
  description:
    "The organization's conversations, most recent activity (message or status change) first. Every filter is optional and they combine. A page costs the same however many conversations the organization has.",
  tags: ["Conversations"],
  auth: "apiKey",
  query,
  response,
  errors: [401, 403, 422, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", undefined, typeof query, undefined, typeof response>;

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
        toPublicConversationView,
      ),
      has_more: page.nextCursor !== null,
      next_cursor: page.nextCursor,
    },
  };
});
