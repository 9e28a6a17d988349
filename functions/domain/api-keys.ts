/**
 * API keys: their format, their hash, their scope, and create / list / revoke (operator CLI and
 * the management API alike). A key's scope is `chat` (the public API) unless made `manage`.
 *
 * A key is `cbk_` + 32 random base62 characters + a 6-character base62 CRC32 of them. The fixed
 * prefix lets secret scanners recognise leaked keys; the checksum lets the authorizer refuse
 * mistyped or invented keys without a database read. Only the SHA-256 of a key is stored (its
 * ~190 bits of randomness make a salt or pepper unnecessary); the key itself is shown once.
 */
import { createHash, randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";
import { GetCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { AppError } from "#functions/errors";
import { cancellationReasons, refusedAs } from "#functions/store/conditions";
import { batchGetItems, gsi1Keys } from "#functions/store/index-reads";
import {
  type ApiKeyRecord,
  type ApiKeyScope,
  gsi1,
  items,
  type Key,
  keys,
  records,
} from "#functions/store/items";

export const API_KEY_PREFIX = "cbk_";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const API_KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

/** Uniform base62 characters (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62.charAt(byte % 62);
    }
  }
  return out;
}

function base62Checksum(text: string): string {
  let value = crc32(text);
  let out = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62.charAt(value % 62) + out;
    value = Math.floor(value / 62);
  }
  return out;
}

export function generateApiKey(): string {
  const random = randomBase62(RANDOM_LENGTH);
  return `${API_KEY_PREFIX}${random}${base62Checksum(random)}`;
}

/** True when the text has the key format and its checksum matches: worth a database look-up. */
export function isWellFormedApiKey(text: string): boolean {
  if (!API_KEY_PATTERN.test(text)) return false;
  const body = text.slice(API_KEY_PREFIX.length);
  return base62Checksum(body.slice(0, RANDOM_LENGTH)) === body.slice(RANDOM_LENGTH);
}

export function hashApiKey(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
}

export function displayPrefixOf(apiKey: string): string {
  return `${apiKey.slice(0, API_KEY_PREFIX.length + 6)}…`;
}

export const apiKeyScopes: readonly ApiKeyScope[] = ["chat", "manage"];

export const newKeyId = (): string => `key_${randomBase62(16)}`;

/** How long a console "Try it" key works. */
export const TEST_KEY_LIFETIME_SECONDS = 3_600;

export interface CreatedApiKey {
  /** The key itself: returned once, never stored. */
  apiKey: string;
  record: ApiKeyRecord;
}

/**
 * Creates a key for an organization. The key copies the organization's subscription and rate limit,
 * so the write is conditional on the organization's version: a concurrent change cannot leave the
 * new key with stale copies.
 */
export async function createApiKey(
  ctx: DomainContext,
  input: {
    organizationId: string;
    name: string;
    scope?: ApiKeyScope;
    expiresAt?: number;
    /** A console "Try it" key: chat scope, an hour of life, hidden from listings, its conversations marked as tests. */
    test?: boolean;
  },
): Promise<CreatedApiKey> {
  if (input.test && (input.scope ?? "chat") !== "chat")
    throw new AppError("invalid_argument", { detail: "A test key has the scope chat" });
  const organization = await ctx.db.client.send(
    new GetCommand({
      TableName: ctx.db.tableName,
      Key: keys.organization(input.organizationId),
      ConsistentRead: true,
    }),
  );
  const orgItem = organization.Item;
  if (!orgItem) throw new AppError("organization_not_found");
  const org = records.organization(orgItem);
  const apiKey = generateApiKey();
  const expiresAt = input.test ? Math.floor(ctx.clock() / 1000) + TEST_KEY_LIFETIME_SECONDS : input.expiresAt;
  const record: ApiKeyRecord = {
    keyId: newKeyId(),
    organizationId: org.organizationId,
    name: input.name,
    scope: input.scope ?? "chat",
    displayPrefix: displayPrefixOf(apiKey),
    createdAt: isoTime(ctx.clock()),
    organizationActive: org.subscription === "active",
    rateLimit: org.rateLimit,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(input.test ? { test: true as const } : {}),
  };
  try {
    await ctx.db.client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            ConditionCheck: {
              TableName: ctx.db.tableName,
              Key: keys.organization(org.organizationId),
              ConditionExpression: "version = :version",
              ExpressionAttributeValues: { ":version": org.version },
            },
          },
          {
            Put: {
              TableName: ctx.db.tableName,
              Item: items.apiKey(hashApiKey(apiKey), record),
              ConditionExpression: "attribute_not_exists(PK)",
            },
          },
        ],
      }),
    );
  } catch (error) {
    if (cancellationReasons(error).some((reason) => reason.failed)) throw new AppError("conflict");
    throw error;
  }
  return { apiKey, record };
}

/**
 * The organization's keys, oldest first, without the console's throwaway "Try it" keys. Two steps:
 * the keys-only index, then the items.
 */
export async function listApiKeys(ctx: DomainContext, organizationId: string): Promise<ApiKeyRecord[]> {
  const found = (await batchGetItems(ctx.db, await apiKeyKeysOf(ctx, organizationId)))
    .map(records.apiKey)
    .filter((key) => !key.test);
  return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.keyId.localeCompare(b.keyId));
}

/** One of the organization's keys, by key id (any other organization's: not found). */
export async function getApiKey(
  ctx: DomainContext,
  input: { organizationId: string; keyId: string },
): Promise<ApiKeyRecord> {
  const [found] = await batchGetItems(ctx.db, await apiKeyKeysOf(ctx, input.organizationId, input.keyId));
  if (!found) throw new AppError("api_key_not_found");
  return records.apiKey(found);
}

/** Table keys (PK, SK) of an organization's API-key items (or of one of them), from GSI1. */
export function apiKeyKeysOf(ctx: DomainContext, organizationId: string, keyId?: string): Promise<Key[]> {
  return gsi1Keys(
    ctx.db,
    gsi1.organizationPartition(organizationId),
    keyId ? { equals: gsi1.apiKeySortKey(keyId) } : { beginsWith: gsi1.apiKeysPrefix },
  );
}

/** Revokes a key. Takes effect on the key's next request (no authorizer cache to wait for). */
export async function revokeApiKey(
  ctx: DomainContext,
  input: { organizationId: string; keyId: string },
): Promise<ApiKeyRecord> {
  const [key] = await apiKeyKeysOf(ctx, input.organizationId, input.keyId);
  if (!key) throw new AppError("api_key_not_found");
  const result = await refusedAs(
    ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: key,
        UpdateExpression: "SET revokedAt = if_not_exists(revokedAt, :now)",
        ConditionExpression: "attribute_exists(PK) AND organizationId = :org",
        ExpressionAttributeValues: { ":now": isoTime(ctx.clock()), ":org": input.organizationId },
        ReturnValues: "ALL_NEW",
      }),
    ),
    () => new AppError("api_key_not_found"),
  );
  return records.apiKey(result.Attributes ?? {});
}
