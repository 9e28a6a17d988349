/**
 * Authenticates a bearer key and takes one token from its bucket, in one conditional write.
 *
 * Main course: parse `Authorization` → refuse malformed keys without I/O → UpdateItem on the key's
 * item that only succeeds if the key exists, is not revoked or expired, its organization is active,
 * the limit we assume is the stored one, and the bucket has a token. A refused write returns the
 * stored item, which says exactly why (an inactive organization's key is told its bucket's state,
 * but no token is taken). The same write records when the key was last used. Warm path: one
 * DynamoDB call; cold path (limit unknown in this instance): a GetItem first.
 *
 * A website visitor's access token (`cbv_…`) is checked by domain/visitor-access.ts instead, on the
 * widget's routes only; its outcome names the visitor it speaks for.
 */

import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { hashApiKey, isWellFormedApiKey } from "#functions/domain/api-keys";
import type { DomainContext } from "#functions/domain/context";
import { type BucketPolicy, type BucketState, stateAfter, takeToken } from "#functions/domain/token-bucket";
import {
  authenticateVisitor,
  isVisitorToken,
  type VisitorBinding,
  type VisitorLimitKind,
  visitorCallerId,
} from "#functions/domain/visitor-access";
import { type ApiKeyScope, type Item, keys, records } from "#functions/store/items";

export type AuthOutcome =
  | {
      kind: "allowed";
      organizationId: string;
      keyId: string;
      scope: ApiKeyScope;
      rate: BucketState;
      /** A console "Try it" key: what it starts is a test. */
      test: boolean;
      /** A website visitor's access token: who it speaks for (`keyId` then names the visitor). */
      visitor?: VisitorBinding;
    }
  | {
      kind: "rate_limited";
      organizationId: string;
      keyId: string;
      scope: ApiKeyScope;
      rate: BucketState;
      retryAfterSeconds: number;
      visitor?: VisitorBinding;
      /** A visitor's refusals say which of their limits they met. */
      limitKind?: VisitorLimitKind;
    }
  | { kind: "invalid_key" }
  /** The key is valid, so its answer carries the bucket's state; a refused request takes no token. */
  | { kind: "subscription_inactive"; rate: BucketState };

type Refusal = { kind: "invalid_key" } | { kind: "subscription_inactive"; rate: BucketState };

export const RATE_PERIOD_MS = 60_000;
const BUCKET_ATTRIBUTE = "bucketTat";

/** `Bearer <key>`, scheme case-insensitive. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? "");
  return match?.[1];
}

/**
 * Per-instance memory of each key's limit and last TAT. Only a hint: every write re-checks the
 * stored values, so a stale entry costs one extra attempt, never a wrong answer.
 */
const hints = new Map<string, { limit: number; tat: number | undefined }>();
const MAX_HINTS = 5_000;

function remember(hash: string, limit: number, tat: number | undefined): void {
  if (hints.size >= MAX_HINTS && !hints.has(hash)) {
    const oldest = hints.keys().next().value;
    if (oldest !== undefined) hints.delete(oldest);
  }
  hints.set(hash, { limit, tat });
}

function refusalOf(stored: Item | undefined, now: number): Refusal | undefined {
  if (!stored) return { kind: "invalid_key" };
  const key = records.apiKey(stored);
  if (key.revokedAt !== undefined) return { kind: "invalid_key" };
  if (key.expiresAt !== undefined && key.expiresAt <= Math.floor(now / 1000)) return { kind: "invalid_key" };
  if (!key.organizationActive) {
    // The bucket as it stands: the organization can do nothing, so nothing is counted against it.
    const policy = { limit: key.rateLimit, periodMs: RATE_PERIOD_MS };
    return { kind: "subscription_inactive", rate: stateAfter(policy, key.bucketTat ?? now, now) };
  }
  return undefined;
}

/**
 * `routeKey` (`POST /api/message`, as API Gateway names the route) decides whether a visitor token
 * may call it, and with which of its buckets; API keys are the same on every route.
 */
export async function authenticate(
  ctx: DomainContext,
  authorization: string | undefined,
  routeKey?: string,
): Promise<AuthOutcome> {
  const token = bearerToken(authorization);
  if (token && isVisitorToken(token)) return visitorOutcome(await authenticateVisitor(ctx, token, routeKey));
  if (!token || !isWellFormedApiKey(token)) return { kind: "invalid_key" };
  const hash = hashApiKey(token);
  const now = ctx.clock();
  const nowSeconds = Math.floor(now / 1000);

  let hint = hints.get(hash);
  if (!hint) {
    const { Item: stored } = await ctx.db.client.send(
      new GetCommand({ TableName: ctx.db.tableName, Key: keys.apiKey(hash) }),
    );
    const refusal = refusalOf(stored, now);
    if (refusal) return refusal;
    const key = records.apiKey(stored ?? {});
    hint = { limit: key.rateLimit, tat: key.bucketTat };
  }

  const policy: BucketPolicy = { limit: hint.limit, periodMs: RATE_PERIOD_MS };
  const result = await takeToken<Refusal>(ctx.db, {
    key: keys.apiKey(hash),
    attribute: BUCKET_ATTRIBUTE,
    policy,
    now,
    hint: hint.tat,
    alsoSet: {
      assignments: "lastUsedAt = :lastUsedAt",
      values: { ":lastUsedAt": new Date(now).toISOString() },
    },
    guard: (current) => ({
      condition:
        "attribute_exists(PK) AND attribute_not_exists(revokedAt) AND " +
        "(attribute_not_exists(expiresAt) OR expiresAt > :nowSeconds) AND " +
        "organizationActive = :true AND rateLimit = :limit",
      names: {},
      values: { ":nowSeconds": nowSeconds, ":true": true, ":limit": current.limit },
      judge: (stored) => {
        const refusal = refusalOf(stored, now);
        if (refusal) return { refusal };
        const storedLimit = records.apiKey(stored ?? {}).rateLimit;
        if (storedLimit !== current.limit)
          return { policy: { limit: storedLimit, periodMs: RATE_PERIOD_MS } };
        return undefined;
      },
    }),
  });

  if ("refusal" in result) {
    hints.delete(hash);
    return result.refusal;
  }
  const stored = records.apiKey(result.item ?? {});
  remember(hash, result.state.limit, stored.bucketTat);
  const scope = stored.scope ?? "chat";
  if (!result.admitted) {
    return {
      kind: "rate_limited",
      organizationId: stored.organizationId,
      keyId: stored.keyId,
      scope,
      rate: result.state,
      retryAfterSeconds: result.retryAfterSeconds,
    };
  }
  return {
    kind: "allowed",
    organizationId: stored.organizationId,
    keyId: stored.keyId,
    scope,
    rate: result.state,
    test: stored.test === true,
  };
}

function visitorOutcome(outcome: Awaited<ReturnType<typeof authenticateVisitor>>): AuthOutcome {
  if (outcome.kind === "invalid_key") return outcome;
  const common = {
    organizationId: outcome.organizationId,
    keyId: visitorCallerId(outcome.visitor.visitorId),
    scope: "chat" as const,
    rate: outcome.rate,
    visitor: outcome.visitor,
  };
  if (outcome.kind === "allowed") return { kind: "allowed", ...common, test: false };
  return {
    kind: "rate_limited",
    ...common,
    retryAfterSeconds: outcome.retryAfterSeconds,
    limitKind: outcome.limitKind,
  };
}

/** Test seam: forget what this instance learned (simulates a cold Lambda instance). */
export function forgetAuthenticationHints(): void {
  hints.clear();
}
