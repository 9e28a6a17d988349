/**
 * What the management authorizer hands to a `/manage/*` integration, at
 * `event.requestContext.authorizer.lambda`: its verdict on the caller.
 *
 * Like the API-key authorizer, it always answers `isAuthorized: true` and reports here instead, so
 * every refusal is a Format A body made by the integration (api-handler), never the gateway's own.
 * Values are flat strings and numbers, read back from either form (a gateway may stringify them).
 * An integration without a verdict fails closed: 401.
 */
import type { BucketState } from "#functions/domain/token-bucket";

/** What a caller is: a signed-in person (`userId` = Cognito `sub`) or an API key of scope manage. */
export type ManagePrincipal = { kind: "user"; userId: string } | { kind: "key"; keyId: string };

/** The role the caller acts with: in an organization (admin, viewer) or as a platform operator. */
export type ManageRole = "admin" | "viewer" | "operator";

export type ManageVerdict =
  | {
      outcome: "allowed";
      principal: ManagePrincipal;
      /** Set on organization routes (and for keys): the organization acted on. */
      organizationId?: string;
      role?: ManageRole;
      /** An operator acting on an organization they are no member of. */
      actingOperator?: boolean;
      rate: BucketState;
    }
  | {
      outcome: "rate_limited";
      principal: ManagePrincipal;
      rate: BucketState;
      retryAfter: number;
    }
  /** No credential, or one that does not verify; `reason` is for the logs only. */
  | { outcome: "unauthenticated"; reason: string }
  /** A valid caller whose role or key scope does not reach this route (`rate` when a token was taken). */
  | { outcome: "forbidden"; message: string; rate?: BucketState }
  | { outcome: "subscription_inactive"; rate: BucketState }
  /** The organization named is unknown, or the caller is no member of it: the same answer (`rate` when a token was taken). */
  | { outcome: "organization_not_found"; rate?: BucketState }
  /** A person in several (or no) organizations must name one with X-Organization-Id. */
  | { outcome: "organization_required"; memberships: number; rate?: BucketState }
  /** The table or the user pool's keys did not answer in time: a 503 the caller may retry. */
  | { outcome: "unavailable" }
  | { outcome: "error" };

type Flat = Record<string, string | number | boolean>;

export function toManageContext(verdict: ManageVerdict): Flat {
  const rate = (state: BucketState | undefined): Flat =>
    state ? { limit: state.limit, remaining: state.remaining, resetAt: state.resetAt } : {};
  const principal = (who: ManagePrincipal): Flat =>
    who.kind === "user" ? { principal: "user", userId: who.userId } : { principal: "key", keyId: who.keyId };
  switch (verdict.outcome) {
    case "allowed":
      return {
        outcome: "allowed",
        ...principal(verdict.principal),
        ...(verdict.organizationId ? { organizationId: verdict.organizationId } : {}),
        ...(verdict.role ? { role: verdict.role } : {}),
        ...(verdict.actingOperator ? { actingOperator: true } : {}),
        ...rate(verdict.rate),
      };
    case "rate_limited":
      return {
        outcome: "rate_limited",
        ...principal(verdict.principal),
        ...rate(verdict.rate),
        retryAfter: verdict.retryAfter,
      };
    case "unauthenticated":
      return { outcome: "unauthenticated", reason: verdict.reason };
    case "forbidden":
      return { outcome: "forbidden", message: verdict.message, ...rate(verdict.rate) };
    case "subscription_inactive":
      return { outcome: "subscription_inactive", ...rate(verdict.rate) };
    case "organization_required":
      return { outcome: "organization_required", memberships: verdict.memberships, ...rate(verdict.rate) };
    case "organization_not_found":
      return { outcome: "organization_not_found", ...rate(verdict.rate) };
    case "unavailable":
    case "error":
      return { outcome: verdict.outcome };
  }
}

const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.length > 0 ? value : undefined;

/** A whole number of 0 or more, given as a number or as its plain decimal string. */
function count(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value === "string" && /^\d{1,15}$/.test(value)) return Number(value);
  return undefined;
}

function rateOf(context: Record<string, unknown>): BucketState | undefined {
  const limit = count(context.limit);
  const remaining = count(context.remaining);
  const resetAt = count(context.resetAt);
  if (limit === undefined || remaining === undefined || resetAt === undefined) return undefined;
  return { limit, remaining, resetAt };
}

function principalOf(context: Record<string, unknown>): ManagePrincipal | undefined {
  if (context.principal === "user") {
    const userId = text(context.userId);
    return userId ? { kind: "user", userId } : undefined;
  }
  if (context.principal === "key") {
    const keyId = text(context.keyId);
    return keyId ? { kind: "key", keyId } : undefined;
  }
  return undefined;
}

const roles: readonly string[] = ["admin", "viewer", "operator"];

/** Reads the verdict defensively; anything unexpected counts as no verdict (401). */
export function readManageContext(raw: unknown): ManageVerdict | undefined {
  if (raw === null || typeof raw !== "object") return undefined;
  const context = raw as Record<string, unknown>;
  switch (context.outcome) {
    case "allowed": {
      const principal = principalOf(context);
      const rate = rateOf(context);
      const role = text(context.role);
      if (!principal || !rate || (role !== undefined && !roles.includes(role))) return undefined;
      const organizationId = text(context.organizationId);
      return {
        outcome: "allowed",
        principal,
        rate,
        ...(organizationId ? { organizationId } : {}),
        ...(role ? { role: role as ManageRole } : {}),
        ...(context.actingOperator === true || context.actingOperator === "true"
          ? { actingOperator: true }
          : {}),
      };
    }
    case "rate_limited": {
      const principal = principalOf(context);
      const rate = rateOf(context);
      const retryAfter = count(context.retryAfter);
      if (!principal || !rate || retryAfter === undefined) return undefined;
      return { outcome: "rate_limited", principal, rate, retryAfter };
    }
    case "unauthenticated":
      return { outcome: "unauthenticated", reason: text(context.reason) ?? "unknown" };
    case "forbidden": {
      const rate = rateOf(context);
      return {
        outcome: "forbidden",
        message: text(context.message) ?? "Your role does not allow this",
        ...(rate ? { rate } : {}),
      };
    }
    case "subscription_inactive": {
      const rate = rateOf(context);
      return rate ? { outcome: "subscription_inactive", rate } : undefined;
    }
    case "organization_required": {
      const rate = rateOf(context);
      return {
        outcome: "organization_required",
        memberships: count(context.memberships) ?? 0,
        ...(rate ? { rate } : {}),
      };
    }
    case "organization_not_found": {
      const rate = rateOf(context);
      return { outcome: "organization_not_found", ...(rate ? { rate } : {}) };
    }
    case "unavailable":
    case "error":
      return { outcome: context.outcome };
    default:
      return undefined;
  }
}
