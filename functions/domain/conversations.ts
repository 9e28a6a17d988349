/**
 * Starting and closing conversations.
 *
 * Main course of `startConversation`: the contact is read (when an id is given: another
 * organization's is a 403), then one transaction (1) creates the contact, or changes it, or counts
 * the conversation on it, with its search index (domain/contacts.ts, the home of contacts), (2)
 * checks the chatbot exists in the caller's organization, (3) puts the conversation (with its
 * listing-index keys), (4) links it into its contact's and its external id's lists. Either all of
 * it happens or none: a 404 or 403 leaves no stray contact or conversation behind. The refused
 * action tells which error it is; a contact changed meanwhile is read again. With an
 * Idempotency-Key, the same transaction completes the key (its fence), so one key can only ever
 * create one conversation, however often its writes are retried or land late.
 */
import { createHash, randomUUID } from "node:crypto";
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { withContactWrite } from "#functions/domain/contacts";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { changeStatus, type TransitionCause } from "#functions/domain/conversation-states";
import { newCursorSecret } from "#functions/domain/cursors";
import type { WorkFence } from "#functions/domain/idempotency";
import { AppError } from "#functions/errors";
import { cancellationReasons, type TransactAction } from "#functions/store/conditions";
import { type ConversationRecord, items, keys, type TransitionActor } from "#functions/store/items";

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
  /** Started by the website widget (absent: a client of the API). */
  channel?: "widget";
  /** A website visitor starts it: any chatbot but this one (their session's) is not found. */
  onlyChatbot?: string;
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
  if (input.onlyChatbot !== undefined && input.onlyChatbot !== input.chatbotId)
    throw new AppError("chatbot_not_found");
  const now = isoTime(ctx.clock());
  const conversationId = randomUUID();
  const contactWrite = {
    organizationId: input.organizationId,
    contactId: input.contactId,
    details: { userName: input.userName, userEmail: input.userEmail, userPhone: input.userPhone },
    externalId: input.externalId,
    conversationStartedAt: now,
  };
  return withContactWrite(ctx, contactWrite, async (contact) => {
    const conversation: ConversationRecord & { lastActivityAt: string } = {
      conversationId,
      organizationId: input.organizationId,
      chatbotId: input.chatbotId,
      contactId: contact.contactId,
      status: "open",
      turns: 0,
      messageCount: 0,
      visitorMessageCount: 0,
      createdAt: now,
      lastActivityAt: now,
      cursorSecret: newCursorSecret(),
      ...(input.externalId === undefined ? {} : { externalId: input.externalId }),
      ...(input.test ? { test: true as const } : {}),
      ...(input.channel ? { channel: input.channel } : {}),
    };
    const link = { conversationId, organizationId: input.organizationId, createdAt: now };
    const chatbotCheck = contact.actions.length;
    const actions: TransactAction[] = [
      // The contact's writes come first (domain/contacts.ts: a refusal there means "read it again").
      ...contact.actions,
      {
        ConditionCheck: {
          TableName: ctx.db.tableName,
          Key: keys.chatbot(input.organizationId, input.chatbotId),
          ConditionExpression: "attribute_exists(PK)",
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
      { Put: { TableName: ctx.db.tableName, Item: items.contactConversation(contact.contactId, link) } },
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
    const started = { conversationId, contactId: contact.contactId };
    try {
      if (input.fence) await input.fence.complete(actions, started);
      else await ctx.db.client.send(new TransactWriteCommand({ TransactItems: actions }));
    } catch (error) {
      if (error instanceof TransactionCanceledException) {
        const chatbot = cancellationReasons(error)[chatbotCheck];
        if (chatbot?.code === "ConditionalCheckFailed") throw new AppError("chatbot_not_found");
      }
      throw error;
    }
    return started;
  });
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
