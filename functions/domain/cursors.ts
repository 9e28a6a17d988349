/**
 * History cursors: the sort key of the last message of a page, signed with a secret kept on the
 * conversation. A cursor from another conversation, or a made-up one, fails the signature check.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { ConversationRecord } from "#functions/store/items";

const SORT_KEY_PATTERN = /^MSG#\d{10}#\d{2}$/;

/** A new conversation's cursor-signing secret. */
export const newCursorSecret = (): string => randomBytes(16).toString("base64url");

function signature(conversation: ConversationRecord, sortKey: string): string {
  return createHmac("sha256", conversation.cursorSecret ?? conversation.conversationId)
    .update(`${conversation.conversationId}\n${sortKey}`)
    .digest("base64url")
    .slice(0, 22);
}

export function signCursor(conversation: ConversationRecord, sortKey: string): string {
  return `${Buffer.from(sortKey).toString("base64url")}.${signature(conversation, sortKey)}`;
}

/** The sort key a cursor names, or undefined when it is not even shaped like one of ours. */
export function cursorSortKey(cursor: string): string | undefined {
  const [encoded] = cursor.split(".");
  const sortKey = Buffer.from(encoded ?? "", "base64url").toString();
  return SORT_KEY_PATTERN.test(sortKey) ? sortKey : undefined;
}

export function cursorIsGenuine(cursor: string, conversation: ConversationRecord): boolean {
  const sortKey = cursorSortKey(cursor);
  const [, given] = cursor.split(".");
  if (sortKey === undefined || given === undefined) return false;
  const expected = signature(conversation, sortKey);
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}
