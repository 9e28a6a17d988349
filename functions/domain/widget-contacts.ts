/**
 * Which contact a website visitor is, once a verified identity says so. Creating and changing the
 * contact itself is the contacts home's (domain/contacts.ts `saveContact`); this module maps
 * identities to contacts and keeps an anonymous visitor's conversations when they identify.
 *
 * - A verified identity's `sub` (hashed: it is the business's own user id) names one contact per
 *   organization (store/items.ts `identitySubject`). The same person on another device finds it.
 * - The first time a `sub` is seen, an anonymous visitor proving it keeps their contact, so their
 *   conversations stay theirs. If the `sub` already has a contact, the anonymous visitor's
 *   conversations with this chatbot move to it (each in its own transaction, guarded by its
 *   current contact, so a move happens once however sessions race).
 * - Name, e-mail and phone from the token update the contact (created when it does not exist yet),
 *   through `saveContact`, so the contact is listed and searchable like any other.
 */
import { createHash, randomUUID } from "node:crypto";
import { GetCommand, PutCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { saveContact } from "#functions/domain/contacts";
import type { DomainContext } from "#functions/domain/context";
import { listConversations } from "#functions/domain/conversation-listing";
import type { VerifiedIdentity } from "#functions/domain/identity-tokens";
import { log } from "#functions/log";
import { cancellationReasons, refusedItem } from "#functions/store/conditions";
import { items, keys, records, type VisitorRecord } from "#functions/store/items";

/** Conversations of an anonymous visitor moved to their identity's contact, at most. */
const MAX_MOVED_CONVERSATIONS = 50;

export const subjectHashOf = (subject: string): string =>
  createHash("sha256").update(subject).digest("base64url");

/**
 * The contact a verified identity speaks for in `organizationId`, given the browser's visitor as
 * stored (absent: a browser without a visitor secret). Updates the contact's fields from the token.
 */
export async function contactForIdentity(
  ctx: DomainContext,
  input: {
    organizationId: string;
    chatbotId: string;
    identity: VerifiedIdentity;
    visitor: VisitorRecord | undefined;
    now: string;
  },
): Promise<{ contactId: string; subjectHash: string }> {
  const subjectHash = subjectHashOf(input.identity.subject);
  // An anonymous visitor's contact becomes the identity's, unless the identity already has one.
  const anonymous = input.visitor && input.visitor.subjectHash === undefined ? input.visitor : undefined;
  let contactId = await subjectContact(ctx, input.organizationId, subjectHash);
  if (contactId === undefined) {
    const proposed = anonymous?.contactId ?? randomUUID();
    contactId = await claimSubject(ctx, input.organizationId, subjectHash, proposed, input.now);
  }
  if (anonymous && anonymous.contactId !== contactId) {
    await moveConversations(ctx, {
      organizationId: input.organizationId,
      chatbotId: input.chatbotId,
      from: anonymous.contactId,
      to: contactId,
    });
  }
  // The contact home (domain/contacts.ts) creates or changes it, with its search terms.
  await saveContact(ctx, {
    organizationId: input.organizationId,
    contactId,
    details: {
      ...(input.identity.name ? { userName: input.identity.name } : {}),
      ...(input.identity.email ? { userEmail: input.identity.email } : {}),
      ...(input.identity.phone ? { userPhone: input.identity.phone } : {}),
    },
  });
  return { contactId, subjectHash };
}

async function subjectContact(
  ctx: DomainContext,
  organizationId: string,
  subjectHash: string,
): Promise<string | undefined> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({ TableName: ctx.db.tableName, Key: keys.identitySubject(organizationId, subjectHash) }),
  );
  return Item ? records.identitySubject(Item).contactId : undefined;
}

/** Maps the subject to `contactId`, unless a concurrent session mapped it first: then that one. */
async function claimSubject(
  ctx: DomainContext,
  organizationId: string,
  subjectHash: string,
  contactId: string,
  now: string,
): Promise<string> {
  try {
    await ctx.db.client.send(
      new PutCommand({
        TableName: ctx.db.tableName,
        Item: items.identitySubject({ organizationId, subjectHash, contactId, createdAt: now }),
        ConditionExpression: "attribute_not_exists(PK)",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return contactId;
  } catch (error) {
    const stored = refusedItem(error);
    return stored ? records.identitySubject(stored).contactId : contactId;
  }
}

/** Moves `from`'s conversations with `chatbotId` to `to` (see the module comment). */
async function moveConversations(
  ctx: DomainContext,
  input: { organizationId: string; chatbotId: string; from: string; to: string },
): Promise<void> {
  const page = await listConversations(ctx, {
    organizationId: input.organizationId,
    filters: { contactId: input.from, chatbotId: input.chatbotId },
    limit: MAX_MOVED_CONVERSATIONS,
  });
  for (const conversation of page.conversations) {
    const link = {
      conversationId: conversation.conversationId,
      organizationId: input.organizationId,
      createdAt: conversation.createdAt,
    };
    try {
      await ctx.db.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: ctx.db.tableName,
                Key: keys.conversation(input.organizationId, conversation.conversationId),
                UpdateExpression: "SET contactId = :to",
                ConditionExpression: "contactId = :from",
                ExpressionAttributeValues: { ":to": input.to, ":from": input.from },
              },
            },
            {
              Delete: {
                TableName: ctx.db.tableName,
                Key: keys.contactConversation(input.organizationId, input.from, conversation.conversationId),
              },
            },
            { Put: { TableName: ctx.db.tableName, Item: items.contactConversation(input.to, link) } },
          ],
        }),
      );
    } catch (error) {
      // Refused: a concurrent session moved it meanwhile, nothing left to do (anything else throws).
      cancellationReasons(error);
      log.info("conversation already moved to the identity's contact");
    }
  }
}
