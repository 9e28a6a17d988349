/**
 * Idempotency records (CONTRACT.md §7): one per (API key, Idempotency-Key), kept 24 hours.
 *
 * Main course: a conditional Put claims the key (only if absent, expired, or abandoned by a request
 * that died while holding it) → the request runs → its response is stored on the record. A refused
 * claim returns the stored record, which decides: different request → mismatch, still running →
 * in progress, finished → replay. Concurrent retries therefore run the work exactly once.
 */
import { createHash, randomUUID } from "node:crypto";
import { DeleteCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { refusedItem } from "#functions/store/conditions";
import { keys } from "#functions/store/items";

export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;
/** A claim older than this is abandoned (its Lambda died); longer than any request can run. */
const CLAIM_LEASE_MS = 90_000;

export interface StoredResponse {
  statusCode: number;
  body: string;
  headers: Record<string, string>;
}

export type Claim =
  | { kind: "claimed"; owner: string }
  | { kind: "replay"; response: StoredResponse }
  | { kind: "mismatch" }
  | { kind: "in_progress" };

export interface IdempotencyScope {
  keyId: string;
  idempotencyKey: string;
}

const recordKey = (scope: IdempotencyScope) =>
  keys.idempotencyRecord(scope.keyId, createHash("sha256").update(scope.idempotencyKey).digest("hex"));

export async function claimIdempotencyKey(
  ctx: DomainContext,
  scope: IdempotencyScope,
  fingerprint: string,
): Promise<Claim> {
  const now = ctx.clock();
  const owner = randomUUID();
  try {
    await ctx.db.client.send(
      new PutCommand({
        TableName: ctx.db.tableName,
        Item: {
          ...recordKey(scope),
          entity: "IdempotencyRecord",
          state: "in_progress",
          fingerprint,
          owner,
          leaseUntil: now + CLAIM_LEASE_MS,
          ttl: Math.floor(now / 1000) + IDEMPOTENCY_RETENTION_SECONDS,
        },
        ConditionExpression:
          "attribute_not_exists(PK) OR #ttl < :nowSeconds OR (#state = :inProgress AND leaseUntil < :now)",
        ExpressionAttributeNames: { "#ttl": "ttl", "#state": "state" },
        ExpressionAttributeValues: {
          ":nowSeconds": Math.floor(now / 1000),
          ":inProgress": "in_progress",
          ":now": now,
        },
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return { kind: "claimed", owner };
  } catch (error) {
    const stored = refusedItem(error);
    if (!stored || stored.fingerprint !== fingerprint) return { kind: "mismatch" };
    if (stored.state !== "completed") return { kind: "in_progress" };
    return { kind: "replay", response: stored.response as StoredResponse };
  }
}

/** Stores the response of the claimed request, so retries replay it. */
export async function completeIdempotencyKey(
  ctx: DomainContext,
  scope: IdempotencyScope,
  owner: string,
  response: StoredResponse,
): Promise<void> {
  await ctx.db.client.send(
    new UpdateCommand({
      TableName: ctx.db.tableName,
      Key: recordKey(scope),
      UpdateExpression: "SET #state = :completed, #response = :response REMOVE leaseUntil",
      ConditionExpression: "#owner = :owner",
      ExpressionAttributeNames: { "#state": "state", "#response": "response", "#owner": "owner" },
      ExpressionAttributeValues: { ":completed": "completed", ":response": response, ":owner": owner },
    }),
  );
}

/** Releases a claim whose request failed unexpectedly, so a retry can run it again. */
export async function releaseIdempotencyKey(
  ctx: DomainContext,
  scope: IdempotencyScope,
  owner: string,
): Promise<void> {
  await ctx.db.client.send(
    new DeleteCommand({
      TableName: ctx.db.tableName,
      Key: recordKey(scope),
      ConditionExpression: "#owner = :owner",
      ExpressionAttributeNames: { "#owner": "owner" },
      ExpressionAttributeValues: { ":owner": owner },
    }),
  );
}

/** Same request ⇔ same route and the same JSON (key order and whitespace do not matter). */
export function requestFingerprint(route: string, path: string, body: unknown): string {
  return createHash("sha256")
    .update(`${route}\n${path}\n${canonicalJson(body)}`)
    .digest("hex");
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
