/** A conversation's history, a page at a time (GET /api/conversation/{id}/messages). */

import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { cursorIsGenuine, cursorSortKey, signCursor } from "#functions/domain/cursors";
import { type VisitorBinding, visitorOwns } from "#functions/domain/visitor-access";
import { AppError, validationError } from "#functions/errors";
import {
  type ConversationRecord,
  keys,
  type MessageRecord,
  messageSortKey,
  prefixes,
  records,
} from "#functions/store/items";

export interface ListMessagesInput {
  organizationId: string;
  conversationId: string;
  /** A website visitor reads: only their own conversation (another is not found). */
  visitor?: VisitorBinding;
  limit: number;
  cursor?: string;
}

export interface MessagePage {
  conversationId: string;
  conversation: ConversationRecord;
  messages: MessageRecord[];
  nextCursor: string | null;
}

/**
 * One page of a conversation's messages, oldest first: the conversation (404 if not this
 * organization's) and the page are read in parallel; the cursor's signature is checked against the
 * conversation's secret before anything is returned.
 */
export async function listMessages(ctx: DomainContext, input: ListMessagesInput): Promise<MessagePage> {
  const after = input.cursor === undefined ? undefined : cursorSortKey(input.cursor);
  if (input.cursor !== undefined && after === undefined) throw invalidCursor(input.cursor);
  const partition = prefixes.conversationPartition(input.organizationId, input.conversationId);
  const [meta, page] = await Promise.all([
    ctx.db.client.send(
      new GetCommand({
        TableName: ctx.db.tableName,
        Key: keys.conversation(input.organizationId, input.conversationId),
      }),
    ),
    ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: { ":pk": partition, ":prefix": prefixes.messages },
        ...(after ? { ExclusiveStartKey: { PK: partition, SK: after } } : {}),
        Limit: input.limit + 1,
      }),
    ),
  ]);
  if (!meta.Item) throw new AppError("conversation_not_found");
  const conversation = records.conversation(meta.Item);
  if (!visitorOwns(input.visitor, conversation)) throw new AppError("conversation_not_found");
  if (input.cursor !== undefined && !cursorIsGenuine(input.cursor, conversation))
    throw invalidCursor(input.cursor);

  const found = (page.Items ?? []).map(records.message);
  const messages = found.slice(0, input.limit);
  const last = messages.at(-1);
  const hasMore = found.length > input.limit;
  return {
    conversationId: conversation.conversationId,
    conversation,
    messages,
    nextCursor:
      hasMore && last ? signCursor(conversation, `MSG#${messageSortKey(last.turn, last.index)}`) : null,
  };
}

function invalidCursor(cursor: string): AppError {
  return validationError([
    {
      type: "value_error",
      loc: ["query", "cursor"],
      msg: "Value error, Invalid cursor: it does not belong to this conversation",
      input: cursor,
      ctx: { error: "Invalid cursor" },
    },
  ]);
}
