/**
 * Who is calling `/manage/*`, as whom, and whether their bucket has a token: the management
 * authorizer's decision.
 *
 * Main course:
 *   - `Bearer cbk_…`: an API key, authenticated exactly as on the public API (one conditional
 *     UpdateItem that also takes its token and notes `lastUsedAt`). Only scope `manage` may manage,
 *     as an admin of the key's own organization; operator routes are never a key's.
 *   - any other bearer token: a console access token, verified (domain/access-tokens.ts). Then one
 *     conditional UpdateItem on the item that holds the person's role for this route, which both
 *     reads the role and takes a token from the bucket kept on it:
 *       organization routes → the membership in the organization named by X-Organization-Id (or
 *         the person's only one: a Query first); no membership → the operator grant (operators
 *         act as an admin of any organization they name); neither → "organization not found";
 *       operator routes → the operator grant; none → forbidden;
 *       (a refusal of these two kinds takes its token from the person's own item, so it is metered);
 *       `signedIn` routes (`/manage/me`) → the person's own item (created on first sight).
 * No read-modify-write: the write's condition is the check, and a refused write returns nothing
 * taken.
 */
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { AccessTokenRejected, type AccessTokenVerifier } from "#functions/domain/access-tokens";
import { API_KEY_PREFIX } from "#functions/domain/api-keys";
import { authenticate, bearerToken, RATE_PERIOD_MS } from "#functions/domain/authentication";
import type { DomainContext } from "#functions/domain/context";
import { type BucketPolicy, type BucketState, takeToken } from "#functions/domain/token-bucket";
import type { ManageVerdict } from "#functions/http/manage-context";
import { canonicalUuid } from "#functions/http/validation";
import { entities, type Key, keys, prefixes, records } from "#functions/store/items";
import type { ManageAccess } from "#lib/routes";

/** Management requests per minute: per person per organization, per operator, per person outside organizations. */
export const MANAGEMENT_RATE_LIMIT = 300;

const personPolicy: BucketPolicy = { limit: MANAGEMENT_RATE_LIMIT, periodMs: RATE_PERIOD_MS };
const BUCKET_ATTRIBUTE = "bucketTat";

export interface ManageRequest {
  authorization: string | undefined;
  /** The X-Organization-Id header, if sent. */
  organizationHeader: string | undefined;
  access: ManageAccess;
}

/** Last TAT seen per bucket item in this instance: picks the likely write shape (a hint only). */
const hints = new Map<string, number>();
const MAX_HINTS = 5_000;

function remember(key: Key, tat: unknown): void {
  const id = `${key.PK}\n${key.SK}`;
  if (typeof tat !== "number") return;
  if (hints.size >= MAX_HINTS && !hints.has(id)) {
    const oldest = hints.keys().next().value;
    if (oldest !== undefined) hints.delete(oldest);
  }
  hints.set(id, tat);
}

/** An organization id as sent: a UUID in any form becomes canonical; anything else is used as is (and found nowhere). */
function organizationIdOf(header: string | undefined): string | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  return canonicalUuid(value) ?? value;
}

export async function decideManageAccess(
  ctx: DomainContext,
  request: ManageRequest,
  verifier: AccessTokenVerifier | undefined,
): Promise<ManageVerdict> {
  const token = bearerToken(request.authorization);
  if (!token) return { outcome: "unauthenticated", reason: "missing" };
  if (token.startsWith(API_KEY_PREFIX)) return keyAccess(ctx, request);
  if (!verifier) return { outcome: "unauthenticated", reason: "no_user_pool" };
  let userId: string;
  try {
    userId = (await verifier.verify(token)).userId;
  } catch (error) {
    if (error instanceof AccessTokenRejected) return { outcome: "unauthenticated", reason: error.reason };
    throw error;
  }
  const principal = { kind: "user" as const, userId };
  switch (request.access) {
    case "signedIn": {
      const taken = await takePersonToken(ctx, keys.person(userId), { upsert: userId });
      if (taken.kind === "absent") return { outcome: "error" };
      return taken.kind === "limited"
        ? { outcome: "rate_limited", principal, rate: taken.rate, retryAfter: taken.retryAfter }
        : { outcome: "allowed", principal, rate: taken.rate };
    }
    case "operator": {
      const taken = await takePersonToken(ctx, keys.operatorGrant(userId));
      if (taken.kind === "absent")
        return refusedWithToken(ctx, userId, (rate) => ({
          outcome: "forbidden",
          message: "Only platform operators may do this",
          rate,
        }));
      return taken.kind === "limited"
        ? { outcome: "rate_limited", principal, rate: taken.rate, retryAfter: taken.retryAfter }
        : { outcome: "allowed", principal, role: "operator", rate: taken.rate };
    }
    case "viewer":
    case "admin": {
      let organizationId = organizationIdOf(request.organizationHeader);
      if (!organizationId) {
        const memberships = await membershipsOf(ctx, userId);
        organizationId = memberships.length === 1 ? memberships[0] : undefined;
        if (!organizationId) {
          return refusedWithToken(ctx, userId, (rate) => ({
            outcome: "organization_required",
            memberships: memberships.length,
            rate,
          }));
        }
      }
      const member = await takePersonToken(ctx, keys.membership(userId, organizationId));
      if (member.kind === "limited")
        return { outcome: "rate_limited", principal, rate: member.rate, retryAfter: member.retryAfter };
      if (member.kind === "taken") {
        const role = records.membership(member.item).role;
        return { outcome: "allowed", principal, organizationId, role, rate: member.rate };
      }
      const operator = await takePersonToken(ctx, keys.operatorGrant(userId));
      if (operator.kind === "absent")
        return refusedWithToken(ctx, userId, (rate) => ({ outcome: "organization_not_found", rate }));
      if (operator.kind === "limited")
        return { outcome: "rate_limited", principal, rate: operator.rate, retryAfter: operator.retryAfter };
      return {
        outcome: "allowed",
        principal,
        organizationId,
        role: "admin",
        actingOperator: true,
        rate: operator.rate,
      };
    }
  }
}

/** A manage key acts as an admin of its own organization; a chat key is refused after being counted like any valid key. */
async function keyAccess(ctx: DomainContext, request: ManageRequest): Promise<ManageVerdict> {
  const outcome = await authenticate(ctx, request.authorization);
  switch (outcome.kind) {
    case "invalid_key":
      return { outcome: "unauthenticated", reason: "api_key" };
    case "subscription_inactive":
      return { outcome: "subscription_inactive", rate: outcome.rate };
    case "rate_limited":
      return {
        outcome: "rate_limited",
        principal: { kind: "key", keyId: outcome.keyId },
        rate: outcome.rate,
        retryAfter: outcome.retryAfterSeconds,
      };
    case "allowed": {
      if (outcome.scope !== "manage") {
        return {
          outcome: "forbidden",
          message:
            "This API key has the scope chat (the public API only); managing needs a key of scope manage",
          rate: outcome.rate,
        };
      }
      if (request.access === "operator") {
        return { outcome: "forbidden", message: "Only platform operators may do this", rate: outcome.rate };
      }
      const named = organizationIdOf(request.organizationHeader);
      if (named !== undefined && named !== outcome.organizationId)
        return { outcome: "organization_not_found", rate: outcome.rate };
      return {
        outcome: "allowed",
        principal: { kind: "key", keyId: outcome.keyId },
        organizationId: outcome.organizationId,
        role: "admin",
        rate: outcome.rate,
      };
    }
  }
}

/**
 * A person's request that no membership or grant answers for (an organization they are not in, an
 * operator route) is still metered: its token comes from the person's own bucket (the one `GET
 * /manage/me` takes from), so probing organizations is rate-limited like any request, and the
 * refusal carries the bucket's headers. An empty bucket makes it a 429 instead.
 */
async function refusedWithToken(
  ctx: DomainContext,
  userId: string,
  refusal: (rate: BucketState) => ManageVerdict,
): Promise<ManageVerdict> {
  const taken = await takePersonToken(ctx, keys.person(userId), { upsert: userId });
  if (taken.kind === "absent") return { outcome: "error" };
  if (taken.kind === "limited") {
    return {
      outcome: "rate_limited",
      principal: { kind: "user", userId },
      rate: taken.rate,
      retryAfter: taken.retryAfter,
    };
  }
  return refusal(taken.rate);
}

/** Up to two of the person's organizations: enough to tell "exactly one" from "none" and "several". */
async function membershipsOf(ctx: DomainContext, userId: string): Promise<string[]> {
  const result = await ctx.db.client.send(
    new QueryCommand({
      TableName: ctx.db.tableName,
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      ExpressionAttributeValues: { ":pk": prefixes.person(userId), ":prefix": prefixes.memberships },
      ProjectionExpression: "organizationId",
      Limit: 2,
    }),
  );
  return (result.Items ?? []).map((item) => String(item.organizationId));
}

type Taken =
  | {
      kind: "taken";
      item: Record<string, unknown>;
      rate: { limit: number; remaining: number; resetAt: number };
    }
  | { kind: "limited"; rate: { limit: number; remaining: number; resetAt: number }; retryAfter: number }
  | { kind: "absent" };

/**
 * One token from the bucket on `key`. The item must exist, unless `upsert` names the person whose
 * own item it is (created on first sight, as a person can sign in before any record of them exists).
 */
async function takePersonToken(
  ctx: DomainContext,
  key: Key,
  options: { upsert?: string } = {},
): Promise<Taken> {
  const now = ctx.clock();
  const hint = hints.get(`${key.PK}\n${key.SK}`);
  const result = await takeToken<"absent">(ctx.db, {
    key,
    attribute: BUCKET_ATTRIBUTE,
    policy: personPolicy,
    now,
    ...(hint === undefined ? {} : { hint }),
    ...(options.upsert
      ? {
          alsoSet: {
            assignments:
              "userId = if_not_exists(userId, :userId), #entity = if_not_exists(#entity, :entity), createdAt = if_not_exists(createdAt, :createdAt)",
            names: { "#entity": "entity" },
            values: {
              ":userId": options.upsert,
              ":entity": entities.person,
              ":createdAt": new Date(now).toISOString(),
            },
          },
        }
      : {
          guard: () => ({
            condition: "attribute_exists(PK)",
            names: {},
            values: {},
            judge: (stored) => (stored ? undefined : { refusal: "absent" as const }),
          }),
        }),
  });
  if ("refusal" in result) return { kind: "absent" };
  remember(key, result.item?.[BUCKET_ATTRIBUTE]);
  if (!result.admitted) return { kind: "limited", rate: result.state, retryAfter: result.retryAfterSeconds };
  return { kind: "taken", item: result.item, rate: result.state };
}

/** Test seam: forget what this instance learned. */
export function forgetManageHints(): void {
  hints.clear();
}
