/**
 * A contact as the APIs show it: the summary every conversation answer carries (public and
 * management), and the whole contact of the management API's contact routes. The field names are
 * the ones `POST /api/conversation` takes (`user_name`, `user_email`, `user_phone`).
 */
import * as z from "zod/mini";
import { isoTimestamp } from "#functions/http/schemas";
import type { ContactRecord } from "#functions/store/items";

const nullableText = (description: string) => z.nullable(z.string().check(z.describe(description)));

const contactFields = {
  contact_id: z.string(),
  user_name: nullableText("The contact's name, if known."),
  user_email: nullableText("The contact's e-mail address, if known."),
  user_phone: nullableText("The contact's telephone number, if known."),
};

export const contactSummaryView = z
  .object(contactFields)
  .check(z.describe("The person the conversation is with, as the organization knows them now."));

export const toContactSummaryView = (
  contactId: string,
  contact: ContactRecord | undefined,
): z.input<typeof contactSummaryView> => ({
  contact_id: contactId,
  user_name: contact?.userName ?? null,
  user_email: contact?.userEmail ?? null,
  user_phone: contact?.userPhone ?? null,
});

export const contactView = z.object({
  ...contactFields,
  external_ids: z
    .array(z.string())
    .check(
      z.describe("The external ids its conversations were started with, the most recent first (at most 10)."),
    ),
  conversation_count: z.int().check(z.describe("Conversations started with this contact.")),
  last_conversation_at: z.nullable(isoTimestamp("When its last conversation started")),
  created_at: isoTimestamp("When the contact was first seen"),
  updated_at: isoTimestamp("When its name, e-mail, phone or external ids last changed"),
});

export const toContactView = (contact: ContactRecord): z.input<typeof contactView> => ({
  ...toContactSummaryView(contact.contactId, contact),
  external_ids: contact.externalIds ?? [],
  conversation_count: contact.conversationCount ?? 0,
  last_conversation_at: contact.lastConversationAt ?? null,
  created_at: contact.createdAt,
  updated_at: contact.updatedAt,
});
