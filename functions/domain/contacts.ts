/**
 * Contacts: the people behind conversations. This module is the one home of a contact's creation
 * and change (a conversation start, a widget session, anything else that learns who a visitor
 * is), of its search index, and of reading contacts back.
 *
 * A contact item is global (`CONTACT#{contactId}`: a client may bring its own ids, and an id of
 * another organization must be recognised to be refused) and carries its `organizationId`. What
 * makes an organization's contacts listable and searchable lives in the organization's own
 * partition (`ORG#{org}#CONTACTS`, docs/data-model.md): one list entry per contact (newest first)
 * and one item per search term. A term is a normalized word of the name, the e-mail (whole, and its
 * domain), the phone's digits, or an external id of the contact's conversations (whole, and its
 * words); a search reads one prefix range of those terms (its longest word's), so a page costs the
 * same however many contacts the organization has. Each term item holds all of its contact's terms:
 * the query's other words are checked against them, and a contact matched by several terms is
 * shown once, at its first matching term.
 *
 * Writing: `prepareContactWrite` reads the contact (when an id is given) and returns the actions
 * that create or change it, with its index items, for the caller to put FIRST in its own
 * transaction (beside a conversation, say). A change of details is conditional on the version
 * read, so two writers never leave index items of a name the contact no longer has; a refused
 * contact action means "read again": `withContactWrite` does that loop. `saveContact` is the same
 * write on its own.
 */

import { createHash, randomUUID } from "node:crypto";
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { BatchGetCommand, GetCommand, QueryCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { AppError, serviceUnavailable } from "#functions/errors";
import { cancellationReasons, type TransactAction } from "#functions/store/conditions";
import {
  type ContactRecord,
  type ConversationRecord,
  type Item,
  items,
  keys,
  prefixes,
  records,
} from "#functions/store/items";

export const contactLimits = {
  /** External ids kept (and searchable) per contact, the most recent first. */
  externalIds: 10,
  /** Words of a name (or an external id) indexed one by one. */
  nameWords: 8,
  /**
   * Terms a contact is indexed by: with the old ones deleted on a change, a conversation start
   * stays well inside a transaction's 100 actions.
   */
  terms: 40,
  /** Characters of a term (and of a query) that count. */
  termLength: 100,
  /** A search reads at most this many index items per contact asked for (`limit + 1`). */
  readsPerResult: 3,
  /** Attempts of a write whose contact changed meanwhile, before answering 503. */
  writeAttempts: 4,
} as const;

/** What a caller may know about the person; a field given replaces the stored one, one left out is kept. */
export interface ContactDetails {
  userName?: string | undefined;
  userEmail?: string | undefined;
  userPhone?: string | undefined;
}

export interface ContactWriteInput {
  organizationId: string;
  /** This organization's contact (reused), an unknown id (created with it), or absent (a new id). */
  contactId?: string | undefined;
  details?: ContactDetails;
  /** An external id of a conversation of the contact: kept (searchable) with it. */
  externalId?: string | undefined;
  /** A conversation started now with the contact: counted on it. */
  conversationStartedAt?: string;
}

export interface PreparedContactWrite {
  contactId: string;
  created: boolean;
  /** The contact as it is once the actions are written. */
  contact: ContactRecord;
  /** The contact's writes; they go first in the caller's transaction (a refusal of the first one: prepare again). */
  actions: TransactAction[];
}

// ---------- search terms ----------

/** Lower case, accents dropped, runs of white space made one space, `#` (the key separator) a `-`, cut to the term length. */
export function normalizeSearchText(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .replaceAll("#", "-")
    .trim()
    .slice(0, contactLimits.termLength);
}

const digitsOf = (text: string) => text.replace(/\D+/g, "").slice(0, contactLimits.termLength);

/**
 * A contact's search terms, sorted: each word of the name (and each part of a hyphenated word),
 * the e-mail address and its domain, the phone's digits, each external id. A search matches
 * prefixes of them.
 */
export function searchTermsOf(contact: ContactDetails & { externalIds?: string[] | undefined }): string[] {
  const terms = new Set<string>();
  const add = (text: string) => {
    const term = normalizeSearchText(text);
    if (term) terms.add(term);
  };
  if (contact.userName) {
    const words = normalizeSearchText(contact.userName).split(" ").slice(0, contactLimits.nameWords);
    for (const word of words) {
      add(word);
      // "Ångström-Smith" is found by "smith" too.
      for (const part of word.split(/[-.,'’]+/)) if (part !== word) add(part);
    }
  }
  if (contact.userEmail) {
    add(contact.userEmail);
    const at = contact.userEmail.lastIndexOf("@");
    if (at > 0) add(contact.userEmail.slice(at + 1));
  }
  if (contact.userPhone) {
    const digits = digitsOf(contact.userPhone);
    if (digits.length >= 3) terms.add(digits);
  }
  for (const externalId of contact.externalIds ?? []) {
    add(externalId);
    for (const word of normalizeSearchText(externalId).split(" ").slice(0, contactLimits.nameWords))
      add(word);
  }
  // Name, e-mail and phone first: they keep their terms if a contact has many external ids.
  return [...terms].slice(0, contactLimits.terms).sort();
}

/**
 * What a query searches: its words (normalized; a phone number as typed, `+31 6 12…`, is one word
 * of its digits). A contact matches when each word starts one of its terms; the longest word picks
 * the index range read, the others filter it.
 */
export function searchWordsOf(query: string): string[] {
  const text = normalizeSearchText(query);
  if (/^[\d\s+()./-]+$/.test(text) && /\d/.test(text)) return [digitsOf(text)];
  return text.split(" ").filter(Boolean);
}

// ---------- writing ----------

async function readContactItem(ctx: DomainContext, contactId: string): Promise<ContactRecord | undefined> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({ TableName: ctx.db.tableName, Key: keys.contact(contactId), ConsistentRead: true }),
  );
  return Item ? records.contact(Item) : undefined;
}

const sameList = (a: readonly string[] = [], b: readonly string[] = []) =>
  a.length === b.length && a.every((value, index) => value === b[index]);

/**
 * Reads the contact (when an id is given) and prepares its writes: created (with its list entry and
 * terms), changed (its terms rewritten, conditional on the version read), or only counted. Another
 * organization's contact is `contact_other_organization` (403), and nothing is prepared.
 */
export async function prepareContactWrite(
  ctx: DomainContext,
  input: ContactWriteInput,
): Promise<PreparedContactWrite> {
  const now = isoTime(ctx.clock());
  const contactId = input.contactId ?? randomUUID();
  const current = input.contactId === undefined ? undefined : await readContactItem(ctx, contactId);
  if (current && current.organizationId !== input.organizationId)
    throw new AppError("contact_other_organization");

  const details = input.details ?? {};
  const given = <K extends keyof ContactDetails>(field: K) => details[field] ?? current?.[field];
  const knownIds = current?.externalIds ?? [];
  const externalIds =
    input.externalId === undefined || knownIds.includes(input.externalId)
      ? knownIds
      : [input.externalId, ...knownIds].slice(0, contactLimits.externalIds);
  const next = {
    userName: given("userName"),
    userEmail: given("userEmail"),
    userPhone: given("userPhone"),
    externalIds,
  };
  const terms = searchTermsOf(next);
  const detailsChanged =
    current === undefined ||
    next.userName !== current.userName ||
    next.userEmail !== current.userEmail ||
    next.userPhone !== current.userPhone ||
    !sameList(next.externalIds, current.externalIds) ||
    // Made before contacts were indexed: its index items are written now.
    current.version === undefined;
  const counted = input.conversationStartedAt !== undefined;
  const createdAt = current?.createdAt ?? now;
  const contact: ContactRecord = {
    contactId,
    organizationId: input.organizationId,
    ...(next.userName === undefined ? {} : { userName: next.userName }),
    ...(next.userEmail === undefined ? {} : { userEmail: next.userEmail }),
    ...(next.userPhone === undefined ? {} : { userPhone: next.userPhone }),
    ...(externalIds.length > 0 ? { externalIds } : {}),
    conversationCount: (current?.conversationCount ?? 0) + (counted ? 1 : 0),
    ...(counted
      ? { lastConversationAt: input.conversationStartedAt }
      : current?.lastConversationAt
        ? { lastConversationAt: current.lastConversationAt }
        : {}),
    searchTerms: terms,
    version: (current?.version ?? 0) + (detailsChanged ? 1 : 0),
    createdAt,
    updatedAt: detailsChanged ? now : (current?.updatedAt ?? now),
  };

  if (!detailsChanged) {
    return {
      contactId,
      created: false,
      contact,
      actions: counted ? [countConversation(ctx, input.organizationId, contactId, now)] : [],
    };
  }

  const { conversationCount: _count, lastConversationAt: _last, ...fields } = contact;
  const set: Record<string, unknown> = { ...fields, entity: items.contact(contact).entity };
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const assignments = Object.entries(set).map(([field, value], index) => {
    names[`#f${index}`] = field;
    values[`:f${index}`] = value;
    return `#f${index} = :f${index}`;
  });
  if (counted) {
    names["#last"] = "lastConversationAt";
    values[":last"] = input.conversationStartedAt;
    assignments.push("#last = :last");
  }
  names["#count"] = "conversationCount";
  values[":count"] = counted ? 1 : 0;
  const condition =
    current === undefined
      ? "attribute_not_exists(PK)"
      : current.version === undefined
        ? "organizationId = :org AND attribute_not_exists(version)"
        : "organizationId = :org AND version = :seen";
  if (current !== undefined) values[":org"] = input.organizationId;
  if (current?.version !== undefined) values[":seen"] = current.version;

  const previousTerms = current?.searchTerms ?? [];
  const actions: TransactAction[] = [
    {
      Update: {
        TableName: ctx.db.tableName,
        Key: keys.contact(contactId),
        UpdateExpression: `SET ${assignments.join(", ")} ADD #count :count`,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
    // Every term item holds all the contact's terms, so each is written again (≤ 40 a contact).
    ...terms.map(
      (term): TransactAction => ({
        Put: {
          TableName: ctx.db.tableName,
          Item: items.contactSearchTerm(input.organizationId, { contactId, term, terms }),
        },
      }),
    ),
    ...previousTerms
      .filter((term) => !terms.includes(term))
      .map(
        (term): TransactAction => ({
          Delete: {
            TableName: ctx.db.tableName,
            Key: keys.contactSearchTerm(input.organizationId, term, contactId),
          },
        }),
      ),
    ...(current?.version === undefined
      ? [
          {
            Put: {
              TableName: ctx.db.tableName,
              Item: items.contactListEntry(input.organizationId, createdAt, contactId),
            },
          },
        ]
      : []),
  ];
  return { contactId, created: current === undefined, contact, actions };
}

function countConversation(
  ctx: DomainContext,
  organizationId: string,
  contactId: string,
  at: string,
): TransactAction {
  return {
    Update: {
      TableName: ctx.db.tableName,
      Key: keys.contact(contactId),
      UpdateExpression: "SET lastConversationAt = :at ADD conversationCount :one",
      ConditionExpression: "organizationId = :org",
      ExpressionAttributeValues: { ":at": at, ":one": 1, ":org": organizationId },
    },
  };
}

/** The transaction error behind `error` (a fence turns a conflict into a 503 that carries it). */
function cancelledTransaction(error: unknown): TransactionCanceledException | undefined {
  if (error instanceof TransactionCanceledException) return error;
  if (error instanceof AppError && error.cause instanceof TransactionCanceledException) return error.cause;
  return undefined;
}

/**
 * Prepares the contact's writes and runs `write` with them (which sends them first in its
 * transaction); when the contact's own action was refused or conflicted (someone changed it
 * meanwhile, or created it in another organization), reads it again and retries. After
 * `contactLimits.writeAttempts`, a 503 (the client may retry).
 */
export async function withContactWrite<T>(
  ctx: DomainContext,
  input: ContactWriteInput,
  write: (prepared: PreparedContactWrite) => Promise<T>,
): Promise<T> {
  let contactId = input.contactId;
  for (let attempt = 1; ; attempt++) {
    // A new contact's id is generated once: a retry reads the contact it tried to create.
    const prepared = await prepareContactWrite(ctx, { ...input, contactId });
    try {
      return await write(prepared);
    } catch (error) {
      const cancelled = cancelledTransaction(error);
      const contact =
        cancelled && prepared.actions.length > 0 ? cancellationReasons(cancelled)[0] : undefined;
      const refused = contact?.code === "ConditionalCheckFailed" || contact?.code === "TransactionConflict";
      if (!refused) throw error;
      if (attempt >= contactLimits.writeAttempts) throw serviceUnavailable(error);
      contactId = prepared.contactId;
    }
  }
}

/** Creates or changes a contact on its own (no conversation): the contact as stored. */
export async function saveContact(ctx: DomainContext, input: ContactWriteInput): Promise<ContactRecord> {
  return withContactWrite(ctx, input, async (prepared) => {
    if (prepared.actions.length > 0)
      await ctx.db.client.send(new TransactWriteCommand({ TransactItems: prepared.actions }));
    return prepared.contact;
  });
}

// ---------- reading ----------

/** This organization's contact; another organization's, or an unknown id, is `contact_not_found`. */
export async function getContact(
  ctx: DomainContext,
  organizationId: string,
  contactId: string,
): Promise<ContactRecord> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({ TableName: ctx.db.tableName, Key: keys.contact(contactId) }),
  );
  const contact = Item ? records.contact(Item) : undefined;
  if (!contact || contact.organizationId !== organizationId) throw new AppError("contact_not_found");
  return contact;
}

/** The organization's contacts with these ids (one batched read; others' and unknown ids are left out). */
export async function contactsByIds(
  ctx: DomainContext,
  organizationId: string,
  contactIds: readonly string[],
): Promise<Map<string, ContactRecord>> {
  const unique = [...new Set(contactIds)];
  if (unique.length === 0) return new Map();
  const found = new Map<string, ContactRecord>();
  for (let start = 0; start < unique.length; start += 100) {
    let request: Record<string, { Keys: Item[] }> | undefined = {
      [ctx.db.tableName]: { Keys: unique.slice(start, start + 100).map((id) => ({ ...keys.contact(id) })) },
    };
    while (request && Object.keys(request).length > 0) {
      const response = await ctx.db.client.send(new BatchGetCommand({ RequestItems: request }));
      for (const item of response.Responses?.[ctx.db.tableName] ?? []) {
        const contact = records.contact(item);
        if (contact.organizationId === organizationId) found.set(contact.contactId, contact);
      }
      request = response.UnprocessedKeys as Record<string, { Keys: Item[] }> | undefined;
    }
  }
  return found;
}

/** A conversation with its contact as known now (undefined: the contact item is gone or was never written). */
export interface ConversationWithContact {
  conversation: ConversationRecord;
  contact: ContactRecord | undefined;
}

/** The conversations with their contacts: one batched read of the contacts, whatever the conversations' number. */
export async function withContacts(
  ctx: DomainContext,
  organizationId: string,
  conversations: readonly ConversationRecord[],
): Promise<ConversationWithContact[]> {
  const contacts = await contactsByIds(
    ctx,
    organizationId,
    conversations.map((conversation) => conversation.contactId),
  );
  return conversations.map((conversation) => ({
    conversation,
    contact: contacts.get(conversation.contactId),
  }));
}

/** One conversation with its contact. */
export async function withContact(
  ctx: DomainContext,
  conversation: ConversationRecord,
): Promise<ConversationWithContact> {
  const [found] = await withContacts(ctx, conversation.organizationId, [conversation]);
  return found ?? { conversation, contact: undefined };
}

export interface ListContactsInput {
  organizationId: string;
  /** Searched in names, e-mails, phone numbers and external ids (a prefix); empty or absent: every contact, newest first. */
  query?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

export interface ContactPage {
  contacts: ContactRecord[];
  nextCursor: string | null;
}

interface Cursor {
  /** Fingerprint of the organization and the search. */
  f: string;
  /** The sort key the next page starts after. */
  k: string;
}

const fingerprint = (organizationId: string, prefix: string) =>
  createHash("sha256")
    .update(JSON.stringify([organizationId, prefix]))
    .digest("base64url")
    .slice(0, 16);

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

function decodeCursor(text: string, expected: string, sortKeyPrefix: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw invalidCursor(text);
  }
  const cursor = parsed as Partial<Cursor> | null;
  if (
    cursor === null ||
    typeof cursor !== "object" ||
    cursor.f !== expected ||
    typeof cursor.k !== "string" ||
    !cursor.k.startsWith(sortKeyPrefix)
  )
    throw invalidCursor(text);
  return cursor.k;
}

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString("base64url");

/**
 * A page of the organization's contacts: newest first, or (with a query) those with a term
 * starting with it, in term order, each contact once. Reads a bounded number of index items (at
 * most `readsPerResult × (limit + 1)` for a search) and one batch of contacts, whatever the
 * organization's size; a search page may hold fewer than `limit` contacts while more follow.
 */
export async function listContacts(ctx: DomainContext, input: ListContactsInput): Promise<ContactPage> {
  const partition = prefixes.contactsPartition(input.organizationId);
  const words = input.query === undefined ? [] : searchWordsOf(input.query);
  // The range read: the longest word's (the most selective); the other words filter it.
  const searched = words.reduce((longest, word) => (word.length > longest.length ? word : longest), "");
  const others = words.filter((word) => word !== searched);
  const sortKeyPrefix = searched ? prefixes.contactTerms(searched) : prefixes.contactList;
  const expected = fingerprint(input.organizationId, words.join(" "));
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor, expected, sortKeyPrefix);

  /** The page's contacts, in order, with the sort key each was found at. */
  const found: { contactId: string; sortKey: string }[] = [];
  let lastRead: string | undefined;
  let exhausted = false;
  let start: Item | undefined = after === undefined ? undefined : { PK: partition, SK: after };
  const budget = searched ? contactLimits.readsPerResult * (input.limit + 1) : input.limit + 1;
  let read = 0;
  while (found.length <= input.limit && read < budget) {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: { ":pk": partition, ":prefix": sortKeyPrefix },
        // The list reads newest first; a search reads terms in order.
        ScanIndexForward: searched !== "",
        // What the page still needs, with room for items of contacts shown at an earlier term.
        Limit: Math.min(100, budget - read, 2 * (input.limit + 1 - found.length)),
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      read++;
      const sortKey = String(item.SK);
      lastRead = sortKey;
      const contactId = String(item.contactId);
      if (searched) {
        const { term, terms } = records.contactSearchTerm(item);
        // Every other word must start one of its terms too.
        if (!others.every((word) => terms.some((candidate) => candidate.startsWith(word)))) continue;
        // Shown at its first matching term only: a contact matched by several terms appears once.
        if (terms.find((candidate) => candidate.startsWith(searched)) !== term) continue;
      }
      found.push({ contactId, sortKey });
      if (found.length > input.limit) break;
    }
    if (found.length > input.limit) break;
    if (!page.LastEvaluatedKey) {
      exhausted = true;
      break;
    }
    start = page.LastEvaluatedKey;
  }

  const shown = found.slice(0, input.limit);
  const resumeAt =
    found.length > input.limit ? shown.at(-1)?.sortKey : exhausted ? undefined : (lastRead ?? after);
  const contacts = await contactsByIds(
    ctx,
    input.organizationId,
    shown.map((entry) => entry.contactId),
  );
  return {
    contacts: shown.flatMap((entry) => contacts.get(entry.contactId) ?? []),
    nextCursor: resumeAt === undefined ? null : encodeCursor({ f: expected, k: resumeAt }),
  };
}
