/**
 * The table side of look-ups: the per-conversation result cache and the per-tool request bucket.
 *
 * - Cache: one item per (tool, tool version, values) in the conversation's partition, written after
 *   a look-up that found a record or found nothing, read back (GetItem) before the next identical
 *   one. Its key holds a hash, never the values. DynamoDB's TTL deletes it eventually; reads ignore
 *   it as soon as `expiresAt` has passed, since TTL deletion can lag by days.
 * - Bucket: THE token bucket of domain/token-bucket.ts (GCRA, one conditional UpdateItem per
 *   request) on a per-tool item with a TTL, `requestsPerMinute` tokens refilled per minute. When a
 *   platform says "slow down", the bucket's TAT is pushed past the wait, so every Lambda instance
 *   holds back until the platform's window reopens.
 */
import { createHash } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type BucketPolicy, takeToken } from "#functions/domain/token-bucket";
import type { Db } from "#functions/store/dynamodb";
import { items, keys, records } from "#functions/store/items";
import type { ConfiguredTool } from "#functions/tools/registry";
import type { LookupResult } from "#functions/tools/result";
import type { LookupCache, RequestAdmission, RequestLimiter } from "#functions/tools/toolbox";
import { canonicalValue } from "#functions/tools/variables";

/** How long a look-up's result is reused within its conversation. */
export const LOOKUP_CACHE_SECONDS = 300;
/** A bucket item outlives the moment it is full again by this much, then TTL removes it. */
const BUCKET_TTL_AFTER_FULL_SECONDS = 3_600;
const BUCKET_ATTRIBUTE = "tat";
/** Longest pause a platform can impose on a tool (Lightspeed's daily window resets within a day). */
const MAX_PAUSE_SECONDS = 86_400;

export interface ToolTableSettings {
  db: Db;
  clock: () => number;
  organizationId: string;
  chatbotId: string;
  conversationId: string;
  /** Per tool id: the cap and a version that changes whenever the tool is edited (busts the cache). */
  toolInfo(toolId: string): { requestsPerMinute: number; version: string } | undefined;
}

/** Hash of a look-up: the tool, its version, and the values as compared (so "#1001" ≡ "1001"). */
export function lookupHash(
  tool: ConfiguredTool,
  version: string,
  values: Readonly<Record<string, string>>,
): string {
  const canonical = tool.variables.map((v) => canonicalValue(v.kind, values[v.name] ?? ""));
  return createHash("sha256")
    .update(JSON.stringify([tool.id, version, canonical]))
    .digest("base64url")
    .slice(0, 32);
}

const reusable = (result: LookupResult): boolean => result.kind === "found" || result.kind === "not_found";

export function createTableLookupCache(settings: ToolTableSettings): LookupCache {
  const { db, clock, organizationId, conversationId } = settings;
  const hashOf = (tool: ConfiguredTool, values: Readonly<Record<string, string>>) =>
    lookupHash(tool, settings.toolInfo(tool.id)?.version ?? "", values);
  return {
    async read(tool, values) {
      const { Item } = await db.client.send(
        new GetCommand({
          TableName: db.tableName,
          Key: keys.toolCache(organizationId, conversationId, hashOf(tool, values)),
        }),
      );
      if (!Item) return undefined;
      const cached = records.toolCache(Item);
      if (cached.expiresAt <= Math.floor(clock() / 1000) || cached.toolId !== tool.id) return undefined;
      const result = cached.result as unknown as LookupResult;
      return reusable(result) ? result : undefined;
    },
    async write(tool, values, result) {
      if (!reusable(result)) return;
      const now = clock();
      await db.client.send(
        new PutCommand({
          TableName: db.tableName,
          Item: items.toolCache(organizationId, conversationId, {
            lookupHash: hashOf(tool, values),
            toolId: tool.id,
            result: result as unknown as Record<string, unknown>,
            cachedAt: new Date(now).toISOString(),
            expiresAt: Math.floor(now / 1000) + LOOKUP_CACHE_SECONDS,
          }),
        }),
      );
    },
  };
}

export function createTableRequestLimiter(settings: ToolTableSettings): RequestLimiter {
  const { db, clock, organizationId, chatbotId } = settings;
  const policyOf = (tool: ConfiguredTool): BucketPolicy => ({
    limit: Math.max(1, settings.toolInfo(tool.id)?.requestsPerMinute ?? 1),
    periodMs: 60_000,
  });
  return {
    async take(tool): Promise<RequestAdmission> {
      const admission = await takeToken(db, {
        key: keys.toolBucket(organizationId, chatbotId, tool.id),
        attribute: BUCKET_ATTRIBUTE,
        policy: policyOf(tool),
        now: clock(),
        ttlAfterFullSeconds: BUCKET_TTL_AFTER_FULL_SECONDS,
      });
      if ("refusal" in admission) return { admitted: false, retryAfterSeconds: 1 };
      return admission.admitted
        ? { admitted: true }
        : { admitted: false, retryAfterSeconds: admission.retryAfterSeconds };
    },
    async pause(tool, seconds) {
      // A TAT one period past the wait refuses every request until the wait is over (then one
      // token per interval comes back), exactly as the bucket's own arithmetic reads it.
      const now = clock();
      const policy = policyOf(tool);
      const until = now + Math.min(seconds, MAX_PAUSE_SECONDS) * 1000 + policy.periodMs;
      try {
        await db.client.send(
          new UpdateCommand({
            TableName: db.tableName,
            Key: keys.toolBucket(organizationId, chatbotId, tool.id),
            UpdateExpression: "SET #tat = :until, #ttl = :ttl",
            ConditionExpression: "attribute_not_exists(#tat) OR #tat < :until",
            ExpressionAttributeNames: { "#tat": BUCKET_ATTRIBUTE, "#ttl": "ttl" },
            ExpressionAttributeValues: {
              ":until": until,
              ":ttl": Math.ceil(until / 1000) + BUCKET_TTL_AFTER_FULL_SECONDS,
            },
          }),
        );
      } catch (error) {
        // Already paused at least as long by someone else.
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },
  };
}
