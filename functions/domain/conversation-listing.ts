/**
 * An organization's conversations, most recent activity first, with optional filters (chatbot,
 * contact, external id, status, activity from/to). Shared by the management API and, later, the
 * public `GET /api/conversations`: no Scan, and a page costs the same however many conversations
 * the organization has.
 *
 * Where a page comes from (docs/data-model.md, access patterns 30–32):
 *   - external id or contact given → that id's own list (link items written with the conversation;
 *     a contact or an external id has a handful of conversations): read, sorted, filtered;
 *   - else chatbot given → GSI1, the chatbot's conversations; else → GSI2, the organization's.
 *     Both index sort keys are `{status}#{lastActivityAt}#{id}`: one status reads one key range
 *     backwards; any status merges one range per status (a fixed number of Queries of `limit`
 *     keys each). Then one batched read of the page's items.
 * The cursor holds, per status, the sort key where the next page starts, plus a fingerprint of
 * the filters; a cursor for other filters, or one not made here, is refused (422).
 */
import { createHash } from "node:crypto";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { getContact } from "#functions/domain/contacts";
import type { DomainContext } from "#functions/domain/context";
import { externalIdHash } from "#functions/domain/conversations";
import { AppError } from "#functions/errors";
import { batchGetItems } from "#functions/store/index-reads";
import {
  type ContactRecord,
  type ConversationRecord,
  type ConversationStatus,
  gsi1,
  gsi2,
  type Item,
  type Key,
  keys,
  prefixes,
  records,
} from "#functions/store/items";

/** Every status a conversation can have; "any status" merges one index range per entry. */
export const conversationStatuses: readonly ConversationStatus[] = ["open", "handoff", "closed"];

export interface ConversationFilters {
  chatbotId?: string;
  contactId?: string;
  externalId?: string;
  status?: ConversationStatus;
  /** ISO 8601: last activity at or after. */
  from?: string;
  /** ISO 8601: last activity at or before. */
  to?: string;
}

export interface ListConversationsInput {
  organizationId: string;
  filters: ConversationFilters;
  limit: number;
  cursor?: string;
}

export interface ConversationPage {
  conversations: ConversationRecord[];
  nextCursor: string | null;
}

interface Cursor {
  /** Fingerprint of the filters the cursor was made for. */
  f: string;
  /** Index listing: per status, the sort key the next page starts after (`null`: that status is done). */
  s?: Record<string, string | null>;
  /** Link listing: the (activity, id) the next page starts after. */
  a?: [string, string];
}

/** Activity of conversations made before listings existed: their creation. */
const activityOf = (conversation: ConversationRecord): string =>
  conversation.lastActivityAt ?? conversation.createdAt;

function fingerprint(organizationId: string, filters: ConversationFilters): string {
  return createHash("sha256")
    .update(
      JSON.stringify([
        organizationId,
        filters.chatbotId,
        filters.contactId,
        filters.externalId,
        filters.status,
        filters.from,
        filters.to,
      ]),
    )
    .digest("base64url")
    .slice(0, 16);
}

function invalidCursor(cursor: string): AppError {
  return new AppError("validation_failed", {
    detail: [
      {
        type: "value_error",
        loc: ["query", "cursor"],
        msg: "Value error, Invalid cursor: it was not made for this listing",
        input: cursor,
        ctx: { error: "Invalid cursor" },
      },
    ],
  });
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

function decodeCursor(text: string, expected: string): Cursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw invalidCursor(text);
  }
  if (parsed === null || typeof parsed !== "object" || (parsed as Cursor).f !== expected)
    throw invalidCursor(text);
  return parsed as Cursor;
}

export async function listConversations(
  ctx: DomainContext,
  input: ListConversationsInput,
): Promise<ConversationPage> {
  const expected = fingerprint(input.organizationId, input.filters);
  const cursor = input.cursor === undefined ? undefined : decodeCursor(input.cursor, expected);
  const { filters } = input;
  if (filters.externalId !== undefined || filters.contactId !== undefined) {
    const partition =
      filters.externalId !== undefined
        ? prefixes.externalConversations(input.organizationId, externalIdHash(filters.externalId))
        : prefixes.contactConversations(input.organizationId, filters.contactId ?? "");
    return linkedPage(ctx, input, partition, expected, cursor);
  }
  return indexPage(ctx, input, expected, cursor);
}

/** Conversations shown with a contact (GET /manage/contacts/{contact_id}); the rest via the listing. */
export const CONTACT_CONVERSATIONS_SHOWN = 20;

/** A contact of the organization (404 otherwise) with its most recent conversations, and the cursor for the rest. */
export async function readContactWithConversations(
  ctx: DomainContext,
  organizationId: string,
  contactId: string,
): Promise<{ contact: ContactRecord; conversations: ConversationRecord[]; nextCursor: string | null }> {
  const [contact, page] = await Promise.all([
    getContact(ctx, organizationId, contactId),
    listConversations(ctx, { organizationId, filters: { contactId }, limit: CONTACT_CONVERSATIONS_SHOWN }),
  ]);
  return { contact, conversations: page.conversations, nextCursor: page.nextCursor };
}

// ---------- through an index (organization or chatbot) ----------

const SORT_KEY = /^([a-z]+)#([0-9TZ:.+-]{10,40})#([0-9a-f-]{36})$/;

async function indexPage(
  ctx: DomainContext,
  input: ListConversationsInput,
  expected: string,
  cursor: Cursor | undefined,
): Promise<ConversationPage> {
  const { organizationId, filters, limit } = input;
  const index = filters.chatbotId
    ? {
        name: gsi1.name,
        pk: "GSI1PK",
        sk: "GSI1SK",
        partition: gsi1.chatbotConversationsPartition(organizationId, filters.chatbotId),
      }
    : { name: gsi2.name, pk: "GSI2PK", sk: "GSI2SK", partition: gsi2.conversationsPartition(organizationId) };
  const statuses = filters.status ? [filters.status] : conversationStatuses;
  const starts = cursor?.s ?? {};
  if (
    cursor &&
    (!cursor.s || Object.keys(cursor.s).some((status) => !statuses.includes(status as ConversationStatus)))
  )
    throw invalidCursor(input.cursor ?? "");

  // One range per status, read backwards (newest first), `limit + 1` keys each.
  const ranges = await Promise.all(
    statuses.map(async (status) => {
      const after = starts[status];
      if (after === null) return { status, keys: [] as string[], more: false };
      if (after !== undefined) {
        const match = SORT_KEY.exec(after);
        if (!match || match[1] !== status) throw invalidCursor(input.cursor ?? "");
      }
      const page = await ctx.db.client.send(
        new QueryCommand({
          TableName: ctx.db.tableName,
          IndexName: index.name,
          KeyConditionExpression: `${index.pk} = :pk AND ${index.sk} BETWEEN :first AND :last`,
          ExpressionAttributeValues: {
            ":pk": index.partition,
            ":first": `${status}#${filters.from ?? ""}`,
            // `~` sorts after every character of a timestamp and an id: the whole `to` instant.
            ":last": `${status}#${filters.to ?? ""}~`,
          },
          ScanIndexForward: false,
          Limit: limit + 1,
          ...(after !== undefined
            ? {
                ExclusiveStartKey: {
                  ...keys.conversation(organizationId, SORT_KEY.exec(after)?.[3] ?? ""),
                  [index.pk]: index.partition,
                  [index.sk]: after,
                },
              }
            : {}),
        }),
      );
      const sortKeys = (page.Items ?? []).map((item) => String(item[index.sk]));
      return { status, keys: sortKeys, more: sortKeys.length > limit || page.LastEvaluatedKey !== undefined };
    }),
  );

  // Merge: newest activity first across statuses (the part after the status orders them).
  const candidates = ranges
    .flatMap((range) => range.keys.map((sortKey) => ({ status: range.status, sortKey })))
    .sort((a, b) => b.sortKey.slice(b.status.length).localeCompare(a.sortKey.slice(a.status.length)));
  const taken = candidates.slice(0, limit);
  const next: Record<string, string | null> = {};
  let hasMore = false;
  for (const range of ranges) {
    const mine = taken.filter((candidate) => candidate.status === range.status);
    const last = mine.at(-1)?.sortKey;
    const left = range.keys.length - mine.length > 0 || range.more;
    if (left) hasMore = true;
    next[range.status] = left ? (last ?? starts[range.status] ?? null) : null;
    // A status none of whose keys were taken keeps its start: undefined means "from the top".
    if (left && last === undefined && starts[range.status] === undefined) delete next[range.status];
  }

  const pageKeys: Key[] = taken.map((candidate) =>
    keys.conversation(organizationId, SORT_KEY.exec(candidate.sortKey)?.[3] ?? ""),
  );
  const conversations = await readInOrder(ctx, pageKeys);
  return { conversations, nextCursor: hasMore ? encodeCursor({ f: expected, s: next }) : null };
}

/** The items with these keys, in this order (an item deleted meanwhile is left out). */
async function readInOrder(ctx: DomainContext, wanted: readonly Key[]): Promise<ConversationRecord[]> {
  const byKey = new Map((await batchGetItems(ctx.db, wanted)).map((item) => [String(item.PK), item]));
  return wanted
    .map((key) => byKey.get(key.PK))
    .filter((item): item is Item => item !== undefined)
    .map(records.conversation);
}

// ---------- through a contact's or an external id's list ----------

async function linkedPage(
  ctx: DomainContext,
  input: ListConversationsInput,
  partition: string,
  expected: string,
  cursor: Cursor | undefined,
): Promise<ConversationPage> {
  const { organizationId, filters, limit } = input;
  if (cursor && (!Array.isArray(cursor.a) || cursor.a.length !== 2)) throw invalidCursor(input.cursor ?? "");
  const links: Key[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: { ":pk": partition, ":prefix": prefixes.conversationLinks },
        ProjectionExpression: "conversationId",
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    for (const item of page.Items ?? [])
      links.push(keys.conversation(organizationId, String(item.conversationId)));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);

  const after = cursor?.a;
  const matching = (await readInOrder(ctx, links))
    .filter(
      (conversation) =>
        (filters.chatbotId === undefined || conversation.chatbotId === filters.chatbotId) &&
        (filters.contactId === undefined || conversation.contactId === filters.contactId) &&
        (filters.externalId === undefined || conversation.externalId === filters.externalId) &&
        (filters.status === undefined || conversation.status === filters.status) &&
        (filters.from === undefined || activityOf(conversation) >= filters.from) &&
        (filters.to === undefined || activityOf(conversation) <= `${filters.to}~`),
    )
    .sort(
      (a, b) =>
        activityOf(b).localeCompare(activityOf(a)) || b.conversationId.localeCompare(a.conversationId),
    )
    .filter(
      (conversation) =>
        after === undefined ||
        activityOf(conversation) < after[0] ||
        (activityOf(conversation) === after[0] && conversation.conversationId < after[1]),
    );
  const conversations = matching.slice(0, limit);
  const last = conversations.at(-1);
  return {
    conversations,
    nextCursor:
      matching.length > limit && last
        ? encodeCursor({ f: expected, a: [activityOf(last), last.conversationId] })
        : null,
  };
}
