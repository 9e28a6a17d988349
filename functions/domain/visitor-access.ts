/**
 * What a website visitor's browser holds, and how the key authorizer checks it.
 *
 * - The visitor secret (`cvs_…`, 256 random bits) names one browser on one chatbot's widget for 90
 *   days since its last session: only its hash is stored, as the visitor's key (store/items.ts
 *   `visitor`).
 * - The access token (`cbv_{visitorId}.{secret}`) is what the widget sends as `Authorization:
 *   Bearer` for at most an hour. It names its visitor (the hash of the visitor secret, not the
 *   secret), and the visitor's item holds the token's hash with its expiry. So one conditional
 *   UpdateItem on the visitor's item checks the token, takes a token from the visitor's bucket and
 *   returns the organization, chatbot and contact the token is bound to: the same single call an
 *   API key costs.
 *
 * A visitor token works on the widget's routes only (lib/routes.ts `widget`): anywhere else it is
 * an invalid key, decided without I/O. Its buckets (per visitor, surviving token renewals): 60
 * requests a minute on reads and handoffs, 10 messages a minute on the message routes; a message
 * also takes one from the chatbot's daily budget (domain/usage.ts). All refusals are the §5-style
 * 429 with the rate headers.
 */
import { createHash, randomBytes } from "node:crypto";
import type { DomainContext } from "#functions/domain/context";
import { type BucketPolicy, type BucketState, takeToken } from "#functions/domain/token-bucket";
import { takeFromDailyBudget } from "#functions/domain/usage";
import { type Item, keys, records } from "#functions/store/items";
import { widgetRouteKinds } from "#lib/routes";

export const visitorLimits = {
  /** Sessions one client address may start on one chatbot. */
  sessionsPerAddress: { limit: 30, periodMs: 10 * 60_000 },
  /** A visitor's requests on the widget's routes other than messages (reads, polling, handoff). */
  requests: { limit: 60, periodMs: 60_000 },
  /** A visitor's messages (POST /api/message and its stream). */
  messages: { limit: 10, periodMs: 60_000 },
  /** How long an access token works. */
  tokenLifetimeSeconds: 60 * 60,
} as const satisfies Record<string, BucketPolicy | number>;

/** Who a visitor token speaks for. */
export interface VisitorBinding {
  visitorId: string;
  chatbotId: string;
  contactId: string;
}

/** What a visitor's request was held to when it was refused for its rate. */
export type VisitorLimitKind = "visitor_requests" | "visitor_messages" | "daily_budget";

export type VisitorAuthOutcome =
  | { kind: "allowed"; organizationId: string; visitor: VisitorBinding; rate: BucketState }
  | {
      kind: "rate_limited";
      organizationId: string;
      visitor: VisitorBinding;
      rate: BucketState;
      retryAfterSeconds: number;
      limitKind: VisitorLimitKind;
    }
  | { kind: "invalid_key" };

const hash = (text: string): string => createHash("sha256").update(text).digest("base64url");
const VISITOR_SECRET = /^cvs_[A-Za-z0-9_-]{43}$/;
const VISITOR_TOKEN = /^cbv_([A-Za-z0-9_-]{43})\.[A-Za-z0-9_-]{43}$/;

export const isVisitorToken = (token: string): boolean => token.startsWith("cbv_");

export function newVisitorSecret(): { secret: string; visitorId: string } {
  const secret = `cvs_${randomBytes(32).toString("base64url")}`;
  return { secret, visitorId: hash(secret) };
}

/** The visitor a secret names (the hash), or undefined when it is not one. */
export function visitorIdOf(secret: string): string | undefined {
  return VISITOR_SECRET.test(secret) ? hash(secret) : undefined;
}

export function newAccessToken(visitorId: string): { token: string; tokenHash: string } {
  const token = `cbv_${visitorId}.${randomBytes(32).toString("base64url")}`;
  return { token, tokenHash: hash(token) };
}

/** The identifier a visitor's requests are known by where an API key's id would be (logs, idempotency). */
export const visitorCallerId = (visitorId: string): string => `visitor:${visitorId}`;

function bindingOf(item: Item): VisitorBinding & { organizationId: string; dailyMessageBudget: number } {
  const visitor = records.visitor(item);
  return {
    visitorId: visitor.visitorId,
    chatbotId: visitor.chatbotId,
    contactId: visitor.contactId,
    organizationId: visitor.organizationId,
    dailyMessageBudget: visitor.dailyMessageBudget,
  };
}

const tokenWorks = (item: Item | undefined, tokenHash: string, nowSeconds: number): boolean => {
  const tokens = item?.tokens as Record<string, unknown> | undefined;
  const expiresAt = tokens?.[tokenHash];
  return typeof expiresAt === "number" && expiresAt > nowSeconds;
};

/**
 * Checks a visitor token on a route (`routeKey` as API Gateway names it) and takes a token from the
 * visitor's bucket for that route; on a message route, then one from the chatbot's daily budget.
 */
export async function authenticateVisitor(
  ctx: DomainContext,
  token: string,
  routeKey: string | undefined,
): Promise<VisitorAuthOutcome> {
  const kind = routeKey === undefined ? undefined : widgetRouteKinds.get(routeKey);
  const visitorId = VISITOR_TOKEN.exec(token)?.[1];
  if (!kind || !visitorId) return { kind: "invalid_key" };
  const tokenHash = hash(token);
  const now = ctx.clock();
  const nowSeconds = Math.floor(now / 1000);
  const messages = kind === "messages";
  const policy: BucketPolicy = messages ? visitorLimits.messages : visitorLimits.requests;
  const result = await takeToken<{ kind: "invalid_key" }>(ctx.db, {
    key: keys.visitor(visitorId),
    attribute: messages ? "messageTat" : "requestTat",
    policy,
    now,
    guard: () => ({
      condition: "attribute_exists(PK) AND #tokens.#token > :nowSeconds",
      names: { "#tokens": "tokens", "#token": tokenHash },
      values: { ":nowSeconds": nowSeconds },
      judge: (stored) =>
        tokenWorks(stored, tokenHash, nowSeconds) ? undefined : { refusal: { kind: "invalid_key" } },
    }),
  });
  if ("refusal" in result || !result.item) return { kind: "invalid_key" };
  const { organizationId, dailyMessageBudget, ...visitor } = bindingOf(result.item);
  if (!result.admitted) {
    return {
      kind: "rate_limited",
      organizationId,
      visitor,
      rate: result.state,
      retryAfterSeconds: result.retryAfterSeconds,
      limitKind: messages ? "visitor_messages" : "visitor_requests",
    };
  }
  if (!messages) return { kind: "allowed", organizationId, visitor, rate: result.state };
  const budget = await takeFromDailyBudget(ctx, {
    organizationId,
    chatbotId: visitor.chatbotId,
    budget: dailyMessageBudget,
    at: now,
  });
  if (budget.admitted) return { kind: "allowed", organizationId, visitor, rate: result.state };
  return {
    kind: "rate_limited",
    organizationId,
    visitor,
    rate: { limit: dailyMessageBudget, remaining: 0, resetAt: budget.resetAt },
    retryAfterSeconds: budget.retryAfterSeconds,
    limitKind: "daily_budget",
  };
}

/** A conversation a visitor may read or write: its own contact's, with its own chatbot. */
export function visitorOwns(
  visitor: VisitorBinding | undefined,
  conversation: { contactId: string; chatbotId: string },
): boolean {
  return (
    visitor === undefined ||
    (conversation.contactId === visitor.contactId && conversation.chatbotId === visitor.chatbotId)
  );
}
