/**
 * Starting and closing conversations.
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
import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { changeStatus, type TransitionCause } from "#functions/domain/conversation-states";
import { newCursorSecret } from "#functions/domain/cursors";
import type { WorkFence } from "#functions/domain/idempotency";
import { AppError } from "#functions/errors";
import { cancellationReasons, type TransactAction } from "#functions/store/conditions";
import { type ConversationRecord, entities, items, keys, type TransitionActor } from "#functions/store/items";

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
 * Closes a conversation (operator CLI, management API, clients); further messages get 409.
 * Idempotent: closing a closed conversation changes nothing (no second transition, no second
 * event). The state machine and its races: domain/conversation-states.ts.
 */
export async function closeConversation(
  ctx: DomainContext,
  input: {
    organizationId: string;
    conversationId: string;
    cause?: TransitionCause;
    actor?: TransitionActor;
  },
): Promise<ConversationRecord> {
  const outcome = await changeStatus(ctx, {
    organizationId: input.organizationId,
    conversationId: input.conversationId,
    to: "closed",
    cause: input.cause ?? "agent",
    actor: input.actor ?? { kind: "person", name: "operator" },
  });
  return outcome.conversation;
}
