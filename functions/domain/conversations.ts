/**
 * Starting and closing conversations (SPEC.md §4, CONTRACT.md §4).
 *
 * Main course of `startConversation`: one transaction that (1) checks the chatbot exists in the
 * caller's organization, (2) creates the contact or updates it if it is already this
 * organization's, (3) puts the conversation (with its listing-index keys), (4) links it into its
 * contact's and its external id's lists. Either all of it happens or none: a 404 or 403 leaves
 * no stray contact or conversation behind. The refused action tells which error it is. With an
 * Idempotency-Key, the same transaction completes the key (its fence), so one key can only ever
 * create one conversation, however often its writes are retried or land late.
 */
import { createHash, randomUUID } from "node:crypto";
import { TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { newCursorSecret } from "#functions/domain/cursors";
import type { WorkFence } from "#functions/domain/idempotency";
import { AppError } from "#functions/errors";
import { cancellationReasons, refusedItem, type TransactAction } from "#functions/store/conditions";
import {
  type ConversationRecord,
  conversationActivityKey,
  entities,
  items,
  keys,
  records,
} from "#functions/store/items";

/** An external id is the caller's free text: its listing partition is keyed by its hash. */
export function externalIdHash(externalId: string): string {
  return createHash("sha256").update(externalId).digest("base64url");
}

export interface StartConversationInput {
  organizationId: string;
  chatbotId: string;
  /** Reused if it is this organization's, created with this id if unknown, generated if absent. */
  contactId?: string;
  externalId?: string;
  userName?: string;
  userEmail?: string;
  userPhone?: string;
  /** Started by the console's "Try it" (its key is a test key): marked as a test. */
  test?: boolean;
  /** The Idempotency-Key's fence, when the request carries one. */
  fence?: WorkFence<StartedConversation>;
}

export interface StartedConversation {
  conversationId: string;
  contactId: string;
}

export async function startConversation(
  ctx: DomainContext,
  input: StartConversationInput,
): Promise<StartedConversation> {
  const now = isoTime(ctx.clock());
  const contactId = input.contactId ?? randomUUID();
  const conversation: ConversationRecord & { lastActivityAt: string } = {
    conversationId: randomUUID(),
    organizationId: input.organizationId,
    chatbotId: input.chatbotId,
    contactId,
    status: "open",
    turns: 0,
    createdAt: now,
    lastActivityAt: now,
    cursorSecret: newCursorSecret(),
    ...(input.externalId === undefined ? {} : { externalId: input.externalId }),
    ...(input.test ? { test: true as const } : {}),
  };
  const link = {
    conversationId: conversation.conversationId,
    organizationId: input.organizationId,
    createdAt: now,
  };

  const contactFields: Record<string, string> = {
    ...(input.userName === undefined ? {} : { userName: input.userName }),
    ...(input.userEmail === undefined ? {} : { userEmail: input.userEmail }),
    ...(input.userPhone === undefined ? {} : { userPhone: input.userPhone }),
  };
  const setContactFields = Object.keys(contactFields).map((field) => `#${field} = :${field}`);

  const actions: TransactAction[] = [
    {
      ConditionCheck: {
        TableName: ctx.db.tableName,
        Key: keys.chatbot(input.organizationId, input.chatbotId),
        ConditionExpression: "attribute_exists(PK)",
      },
    },
    {
      Update: {
        TableName: ctx.db.tableName,
        Key: keys.contact(contactId),
        UpdateExpression: `SET ${[
          "contactId = :contactId",
          "organizationId = if_not_exists(organizationId, :org)",
          "entity = :entity",
          "createdAt = if_not_exists(createdAt, :now)",
          "updatedAt = :now",
          ...setContactFields,
        ].join(", ")}`,
        ConditionExpression: "attribute_not_exists(PK) OR organizationId = :org",
        // DynamoDB refuses an empty names map, so it is only sent with contact fields to set.
        ...(setContactFields.length > 0
          ? {
              ExpressionAttributeNames: Object.fromEntries(
                Object.keys(contactFields).map((field) => [`#${field}`, field]),
              ),
            }
          : {}),
        ExpressionAttributeValues: {
          ":contactId": contactId,
          ":org": input.organizationId,
          ":entity": entities.contact,
          ":now": now,
          ...Object.fromEntries(Object.entries(contactFields).map(([field, value]) => [`:${field}`, value])),
        },
      },
    },
    {
      Put: {
        TableName: ctx.db.tableName,
        Item: items.conversation(conversation),
        ConditionExpression: "attribute_not_exists(PK)",
      },
    },
    // The conversation's place in its contact's and its external id's lists (no index needed there).
    { Put: { TableName: ctx.db.tableName, Item: items.contactConversation(contactId, link) } },
    ...(input.externalId === undefined
      ? []
      : [
          {
            Put: {
              TableName: ctx.db.tableName,
              Item: items.externalConversation(externalIdHash(input.externalId), link),
            },
          },
        ]),
  ];
  const started = { conversationId: conversation.conversationId, contactId };
  try {
    if (input.fence) await input.fence.complete(actions, started);
    else await ctx.db.client.send(new TransactWriteCommand({ TransactItems: actions }));
  } catch (error) {
    const [chatbot, contact] = cancellationReasons(error);
    if (chatbot?.code === "ConditionalCheckFailed") throw new AppError("chatbot_not_found");
    if (contact?.code === "ConditionalCheckFailed") throw new AppError("contact_other_organization");
    throw error;
  }
  return started;
}

/**
 * Closes a conversation (operator CLI, management API); further messages get 409. Closing is
 * activity, so it moves the conversation in the listings. Idempotent: closing a closed
 * conversation changes nothing (so it records no second transition, and no second event).
 */
export async function closeConversation(
  ctx: DomainContext,
  input: { organizationId: string; conversationId: string },
): Promise<ConversationRecord> {
  const now = isoTime(ctx.clock());
  const sortKey = conversationActivityKey("closed", now, input.conversationId);
  try {
    const result = await ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.conversation(input.organizationId, input.conversationId),
        UpdateExpression:
          "SET #status = :closed, statusChangedAt = :now, lastActivityAt = :now, GSI1SK = :sortKey, GSI2SK = :sortKey",
        ConditionExpression: "attribute_exists(PK) AND #status <> :closed",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":closed": "closed", ":now": now, ":sortKey": sortKey },
        ReturnValues: "ALL_NEW",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return records.conversation(result.Attributes ?? {});
  } catch (error) {
    const stored = refusedItem(error);
    if (!stored) throw new AppError("conversation_not_found");
    return records.conversation(stored);
  }
}
