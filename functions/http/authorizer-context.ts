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
import type { VisitorBinding, VisitorLimitKind } from "#functions/domain/visitor-access";

/** A website visitor's access token: the visitor, chatbot and contact it speaks for (flat: context values are scalars). */
export interface VisitorContext {
  visitorId: string;
  visitorChatbotId: string;
  visitorContactId: string;
}

export type AuthorizerContext =
  | ({
      outcome: "allowed";
      organizationId: string;
      keyId: string;
      limit: number;
      remaining: number;
      resetAt: number;
      /** A console "Try it" key (absent otherwise): the conversations it starts are tests. */
      test?: true;
    } & Partial<VisitorContext>)
  | ({
      outcome: "rate_limited";
      organizationId: string;
      keyId: string;
      limit: number;
      remaining: number;
      resetAt: number;
      retryAfter: number;
      /** A visitor's refusal: which of their limits. */
      limitKind?: VisitorLimitKind;
    } & Partial<VisitorContext>)
  | { outcome: "invalid_key" }
  | { outcome: "subscription_inactive"; limit: number; remaining: number; resetAt: number }
  /** The table did not answer in time: the integration answers 503. */
  | { outcome: "unavailable" }
  | { outcome: "error" };

const visitorContext = (visitor: VisitorBinding | undefined): Partial<VisitorContext> =>
  visitor
    ? {
        visitorId: visitor.visitorId,
        visitorChatbotId: visitor.chatbotId,
        visitorContactId: visitor.contactId,
      }
    : {};

/** The visitor a verdict names, when it names all three parts. */
export function visitorOf(context: Partial<VisitorContext>): VisitorBinding | undefined {
  const { visitorId, visitorChatbotId, visitorContactId } = context;
  return visitorId && visitorChatbotId && visitorContactId
    ? { visitorId, chatbotId: visitorChatbotId, contactId: visitorContactId }
    : undefined;
}

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
        ...visitorContext(outcome.visitor),
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
        ...(outcome.limitKind ? { limitKind: outcome.limitKind } : {}),
        ...visitorContext(outcome.visitor),
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

const limitKinds: readonly VisitorLimitKind[] = ["visitor_requests", "visitor_messages", "daily_budget"];

/** A visitor's three ids, all or none (null: some but not all, which no authorizer sends). */
function readVisitorContext(context: Record<string, unknown>): Partial<VisitorContext> | null {
  const { visitorId, visitorChatbotId, visitorContactId } = context;
  const given = [visitorId, visitorChatbotId, visitorContactId].filter((value) => value !== undefined);
  if (given.length === 0) return {};
  if (!isString(visitorId) || !isString(visitorChatbotId) || !isString(visitorContactId)) return null;
  return { visitorId, visitorChatbotId, visitorContactId };
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
      const visitor = readVisitorContext(context);
      if (visitor === null) return undefined;
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
          ...visitor,
        };
      }
      const retryAfter = countOf(context.retryAfter);
      if (retryAfter === undefined) return undefined;
      const limitKind = limitKinds.find((kind) => kind === context.limitKind);
      return {
        outcome: "rate_limited",
        organizationId,
        keyId,
        limit,
        remaining,
        resetAt,
        retryAfter,
        ...(limitKind ? { limitKind } : {}),
        ...visitor,
      };
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
