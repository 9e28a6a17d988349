/**
 * What the Lambda authorizer hands to the integration, at `event.requestContext.authorizer.lambda`.
 *
 * The authorizer always answers `isAuthorized: true` and reports its verdict here instead: an HTTP
 * API cannot reshape its own 401/403 bodies, so the integration (api-handler) turns the verdict into
 * the exact bodies CONTRACT.md §2 and §5 require. HTTP API payload 2.0 keeps JSON types, so numbers
 * stay numbers. An integration that receives no verdict (a route wired without the authorizer)
 * fails closed: it answers 401.
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
  | { outcome: "subscription_inactive" }
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
      return { outcome: "subscription_inactive" };
  }
}

const isString = (value: unknown): value is string => typeof value === "string" && value.length > 0;
const isCount = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

/** Reads the verdict defensively; anything unexpected counts as no verdict. */
export function readAuthorizerContext(raw: unknown): AuthorizerContext | undefined {
  if (raw === null || typeof raw !== "object") return undefined;
  const context = raw as Record<string, unknown>;
  switch (context.outcome) {
    case "allowed":
    case "rate_limited": {
      const { organizationId, keyId, limit, remaining, resetAt } = context;
      if (
        !isString(organizationId) ||
        !isString(keyId) ||
        !isCount(limit) ||
        !isCount(remaining) ||
        !isCount(resetAt)
      )
        return undefined;
      if (context.outcome === "allowed") {
        return { outcome: "allowed", organizationId, keyId, limit, remaining, resetAt };
      }
      const retryAfter = context.retryAfter;
      if (!isCount(retryAfter)) return undefined;
      return { outcome: "rate_limited", organizationId, keyId, limit, remaining, resetAt, retryAfter };
    }
    case "invalid_key":
    case "subscription_inactive":
    case "unavailable":
    case "error":
      return { outcome: context.outcome };
    default:
      return undefined;
  }
}
