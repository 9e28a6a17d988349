/** GET /manage/contacts/{contact_id} — one contact with its most recent conversations. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { readContactWithConversations } from "#functions/domain/conversation-listing";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { contactView, toContactView } from "#functions/http/contact-view";
import { contactIdParameter } from "#functions/http/manage-inputs";
import { conversationView, toConversationView } from "#functions/http/manage-views";

const path = z.object({ contact_id: contactIdParameter });

const response = z.extend(contactView, {
  conversations: z
    .array(conversationView)
    .check(z.describe("Its conversations, most recent activity first: the first 20.")),
  conversations_next_cursor: z.nullable(
    z
      .string()
      .check(
        z.describe(
          "When it has more: pass as `cursor` to GET /manage/conversations?contact_id={contact_id} for the next ones.",
        ),
      ),
  ),
});

export const contract = {
  operationId: "manageGetContact",
  summary: "Read a contact",
  description:
    "One contact of the organization (another organization's is a 404, as an unknown id) with its most recent conversations.",
  tags: ["Management: contacts"],
  auth: "manage",
  access: "viewer",
  path,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path }) => {
  const found = await readContactWithConversations(ctx, caller.organizationId, path.contact_id);
  return {
    body: {
      ...toContactView(found.contact),
      conversations: found.conversations.map((conversation) =>
        toConversationView({ conversation, contact: found.contact }),
      ),
      conversations_next_cursor: found.nextCursor,
    },
  };
});
