/**
 * What the Lambda authorizer hands to the integration, at `event.requestContext.authorizer.lambda`.
 *
 * The authorizer always answers `isAuthorized: true` and reports its verdict here instead: an HTTP
 * API cannot reshape its own 401/403 bodies, so the integration (api-handler) turns the verdict into
 * the exact 401 / 403 / 429 bodies docs/api.md documents. The authorizer sets numbers, but no AWS document
 * promises they reach the integration as numbers (REST APIs stringify context values), so the
 * counts are read from either shape. An integration that receives no verdict (a route wired
 * without the authorizer) fails closed: it answers 401.
 */
import type { AuthOutcome } from "#functions/domain/authentication";

export type AuthorizerContext =
  | {
      outcome: "allowed";
      organizationId: string;
      keyId: string;
      limit: number;
      remaining: number;
      resetAt: number;
      /** A console "Try it" key (absent otherwise): the conversations it starts are tests. */
      test?: true;
    }
  | {
      outcome: "rate_limited";
      organizationId: string;
      keyId: string;
      limit: number;
      remaining: number;
      resetAt: number;
      retryAfter: number;
    }
  | { outcome: "invalid_key" }
  | { outcome: "subscription_inactive"; limit: number; remaining: number; resetAt: number }
  /** The table did not answer in time: the integration answers 503. */
  | { outcome: "unavailable" }
  | { outcome: "error" };

export function toAuthorizerContext(outcome: AuthOutcome): AuthorizerContext {
  switch (outcome.kind) {
    case "allowed":
      return {
        outcome: "allowed",
        organizationId: outcome.organizationId,
        keyId: outcome.keyId,
        limit: outcome.rate.limit,
        remaining: outcome.rate.remaining,
        resetAt: outcome.rate.resetAt,
        ...(outcome.test ? { test: true as const } : {}),
      };
    case "rate_limited":
      return {
        outcome: "rate_limited",
        organizationId: outcome.organizationId,
        keyId: outcome.keyId,
        limit: outcome.rate.limit,
        remaining: 0,
        resetAt: outcome.rate.resetAt,
        retryAfter: outcome.retryAfterSeconds,
      };
    case "invalid_key":
      return { outcome: "invalid_key" };
    case "subscription_inactive":
      return {
        outcome: "subscription_inactive",
        limit: outcome.rate.limit,
        remaining: outcome.rate.remaining,
        resetAt: outcome.rate.resetAt,
      };
  }
}

const isString = (value: unknown): value is string => typeof value === "string" && value.length > 0;

/** A whole number of 0 or more, given as a number or as its plain decimal string ("100"). */
function countOf(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value === "string" && /^\d{1,15}$/.test(value)) return Number(value);
  return undefined;
}

/** Reads the verdict defensively; anything unexpected counts as no verdict. */
export function readAuthorizerContext(raw: unknown): AuthorizerContext | undefined {
  if (raw === null || typeof raw !== "object") return undefined;
  const context = raw as Record<string, unknown>;
  switch (context.outcome) {
    case "allowed":
    case "rate_limited": {
      const { organizationId, keyId } = context;
      const limit = countOf(context.limit);
      const remaining = countOf(context.remaining);
      const resetAt = countOf(context.resetAt);
      if (
        !isString(organizationId) ||
        !isString(keyId) ||
        limit === undefined ||
        remaining === undefined ||
        resetAt === undefined
      )
        return undefined;
      if (context.outcome === "allowed") {
        // Like the counts, the flag may arrive as its string.
        const test = context.test === true || context.test === "true";
        return {
          outcome: "allowed",
          organizationId,
          keyId,
          limit,
          remaining,
          resetAt,
          ...(test ? { test } : {}),
        };
      }
      const retryAfter = countOf(context.retryAfter);
      if (retryAfter === undefined) return undefined;
      return { outcome: "rate_limited", organizationId, keyId, limit, remaining, resetAt, retryAfter };
    }
    case "subscription_inactive": {
      const limit = countOf(context.limit);
      const remaining = countOf(context.remaining);
      const resetAt = countOf(context.resetAt);
      if (limit === undefined || remaining === undefined || resetAt === undefined) return undefined;
      return { outcome: "subscription_inactive", limit, remaining, resetAt };
    }
    case "invalid_key":
    case "unavailable":
    case "error":
      return { outcome: context.outcome };
    default:
      return undefined;
  }
}
