/**
 * `POST /api/widget/session`: a website visitor's browser gets a short-lived access token for one
 * chatbot, without any secret of the business in the page.
 *
 * Main course, cheapest refusals first:
 *   1. the client address's session bucket for this chatbot (`admitSession`, one conditional
 *      UpdateItem): a script hammering the route from one address is refused here, having cost one
 *      write and nothing else;
 *   2. the widget's settings (by chatbot id) beside the browser's visitor, if it sent a secret: an
 *      unknown chatbot or a widget that is off is 404, an origin not allowed 403;
 *   3. the chatbot and its organization (deleted: 404; subscription inactive: 403), beside the
 *      identity token's verification (HS256 against the widget's identity secrets, opened once per
 *      Lambda instance);
 *   4. the contact: the identity's (domain/widget-contacts.ts), else the returning visitor's, else
 *      a new one (created with the first conversation);
 *   5. the visitor written with the new token's hash (expired token hashes pruned), and the
 *      contact's latest conversation with this chatbot that is not closed.
 */
import { randomUUID } from "node:crypto";
import { BatchGetCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { listConversations } from "#functions/domain/conversation-listing";
import { type VerifiedIdentity, verifyIdentityToken } from "#functions/domain/identity-tokens";
import { type Admission, takeToken } from "#functions/domain/token-bucket";
import {
  newAccessToken,
  newVisitorSecret,
  visitorIdOf,
  visitorLimits,
} from "#functions/domain/visitor-access";
import { contactForIdentity } from "#functions/domain/widget-contacts";
import { originAllowed, readWidgetRecord, widgetDefaults } from "#functions/domain/widget-settings";
import { AppError } from "#functions/errors";
import { log } from "#functions/log";
import type { EnvelopeCipher } from "#functions/secrets/envelope";
import { refusedAs } from "#functions/store/conditions";
import {
  type ChatbotRecord,
  entities,
  items,
  keys,
  type OrganizationRecord,
  records,
  type VisitorRecord,
  visitorExpiry,
  type WidgetAppearance,
  type WidgetRecord,
} from "#functions/store/items";

export interface SessionContext extends DomainContext {
  /** Opens the widgets' identity secrets; absent: identity tokens cannot be verified (refused). */
  secrets?: EnvelopeCipher;
}

export interface SessionInput {
  chatbotId: string;
  /** The browser's `Origin` header. */
  origin: string | undefined;
  visitorSecret?: string;
  identityToken?: string;
}

/** What the widget shows before and while the visitor chats. */
export interface WidgetGreeting extends WidgetAppearance {
  welcomeMessage: string;
}

export interface VisitorSession {
  token: string;
  expiresAt: string;
  visitorSecret: string;
  contactId: string;
  conversationId: string | null;
  identified: boolean;
  widget: WidgetGreeting;
}

/** Takes one session from the bucket of `address` for `chatbotId`; the item expires an hour after it is full. */
export async function admitSession(
  ctx: DomainContext,
  chatbotId: string,
  address: string,
): Promise<Admission> {
  const result = await takeToken(ctx.db, {
    key: keys.sessionBucket(chatbotId, address),
    attribute: "tat",
    policy: visitorLimits.sessionsPerAddress,
    now: ctx.clock(),
    ttlAfterFullSeconds: 3_600,
    alsoSet: {
      assignments: "#entity = :entity",
      names: { "#entity": "entity" },
      values: { ":entity": entities.sessionBucket },
    },
  });
  // No guard, so no refusal of its own: the bucket admits or refuses.
  if ("refusal" in result) throw new Error("unexpected refusal");
  return result;
}

export async function startVisitorSession(ctx: SessionContext, input: SessionInput): Promise<VisitorSession> {
  const nowMs = ctx.clock();
  const now = isoTime(nowMs);
  const visitorId = input.visitorSecret ? visitorIdOf(input.visitorSecret) : undefined;
  const [widget, stored] = await Promise.all([
    readWidgetRecord(ctx, input.chatbotId),
    visitorId ? readVisitor(ctx, visitorId) : undefined,
  ]);
  if (!widget?.enabled) throw new AppError("chatbot_not_found");
  if (!originAllowed(widget.allowedOrigins, input.origin)) throw new AppError("origin_not_allowed");
  const organizationId = widget.organizationId;
  // A secret of another chatbot's (or organization's) widget is no secret here: a new visitor.
  const returning =
    stored && stored.chatbotId === input.chatbotId && stored.organizationId === organizationId
      ? stored
      : undefined;

  const [{ chatbot, organization }, identity] = await Promise.all([
    readChatbotAndOrganization(ctx, organizationId, input.chatbotId),
    identityOf(ctx, widget, input.identityToken, nowMs),
  ]);
  if (!chatbot) throw new AppError("chatbot_not_found");
  if (organization?.subscription !== "active") throw new AppError("subscription_inactive");

  const contact = identity
    ? await contactForIdentity(ctx, {
        organizationId,
        chatbotId: input.chatbotId,
        identity,
        visitor: returning,
        now,
      })
    : { contactId: returning?.contactId ?? randomUUID(), subjectHash: returning?.subjectHash };

  const fresh = returning ? undefined : newVisitorSecret();
  const { token, tokenHash } = newAccessToken(returning?.visitorId ?? fresh?.visitorId ?? "");
  const expiresAtSeconds = Math.floor(nowMs / 1000) + visitorLimits.tokenLifetimeSeconds;
  if (returning) {
    await renewVisitor(ctx, returning, {
      contactId: contact.contactId,
      subjectHash: contact.subjectHash,
      tokenHash,
      expiresAtSeconds,
      dailyMessageBudget: widget.dailyMessageBudget,
      nowMs,
    });
  } else if (fresh) {
    await ctx.db.client.send(
      new PutCommand({
        TableName: ctx.db.tableName,
        Item: items.visitor({
          visitorId: fresh.visitorId,
          organizationId,
          chatbotId: input.chatbotId,
          contactId: contact.contactId,
          ...(contact.subjectHash ? { subjectHash: contact.subjectHash } : {}),
          tokens: { [tokenHash]: expiresAtSeconds },
          dailyMessageBudget: widget.dailyMessageBudget,
          createdAt: now,
          lastSeenAt: now,
        }),
        ConditionExpression: "attribute_not_exists(PK)",
      }),
    );
  }

  // A brand-new anonymous contact has no conversation yet: nothing to look up.
  const conversationId =
    returning || identity
      ? await latestOpenConversation(ctx, organizationId, contact.contactId, input.chatbotId)
      : null;
  return {
    token,
    expiresAt: isoTime(expiresAtSeconds * 1000),
    // A returning visitor keeps the secret it sent (only its hash is stored).
    visitorSecret: fresh?.secret ?? input.visitorSecret ?? "",
    contactId: contact.contactId,
    conversationId,
    identified: contact.subjectHash !== undefined,
    widget: {
      ...widgetDefaults.appearance,
      ...widget.appearance,
      title: widget.appearance.title || chatbot.name,
      welcomeMessage: chatbot.welcomeMessage,
    },
  };
}

async function readVisitor(ctx: DomainContext, visitorId: string): Promise<VisitorRecord | undefined> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({ TableName: ctx.db.tableName, Key: keys.visitor(visitorId) }),
  );
  return Item ? records.visitor(Item) : undefined;
}

async function readChatbotAndOrganization(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
): Promise<{ chatbot: ChatbotRecord | undefined; organization: OrganizationRecord | undefined }> {
  const chatbotKey = keys.chatbot(organizationId, chatbotId);
  const organizationKey = keys.organization(organizationId);
  const result = await ctx.db.client.send(
    new BatchGetCommand({
      RequestItems: {
        [ctx.db.tableName]: {
          Keys: [chatbotKey, organizationKey],
          ProjectionExpression: "PK, SK, #name, welcomeMessage, subscription",
          ExpressionAttributeNames: { "#name": "name" },
        },
      },
    }),
  );
  // Two small items: DynamoDB leaves none unprocessed short of throttling, which the SDK retries.
  const found = result.Responses?.[ctx.db.tableName] ?? [];
  const chatbot = found.find((item) => item.PK === chatbotKey.PK);
  const organization = found.find((item) => item.PK === organizationKey.PK);
  return {
    chatbot: chatbot ? records.chatbot(chatbot) : undefined,
    organization: organization ? records.organization(organization) : undefined,
  };
}

/**
 * The identity a token proves, when the widget verifies identities: `required` refuses a session
 * without one; `off` ignores any token sent (nothing is verified, so nothing is believed).
 */
async function identityOf(
  ctx: SessionContext,
  widget: WidgetRecord,
  token: string | undefined,
  nowMs: number,
): Promise<VerifiedIdentity | undefined> {
  if (widget.identityVerification === "off") return undefined;
  if (token === undefined) {
    if (widget.identityVerification === "required") throw new AppError("invalid_identity_token");
    return undefined;
  }
  const secrets = await openIdentitySecrets(ctx, widget, nowMs);
  const verdict = await verifyIdentityToken(token, secrets, nowMs);
  if ("refused" in verdict) {
    log.info("identity token refused", { reason: verdict.refused });
    throw new AppError("invalid_identity_token");
  }
  return verdict.verified;
}

/** Opened secrets by envelope, per Lambda instance: a session rarely waits on (or pays for) KMS. */
const openedSecrets = new Map<string, Promise<string>>();
const MAX_OPENED_SECRETS = 1_000;

async function openIdentitySecrets(
  ctx: SessionContext,
  widget: WidgetRecord,
  nowMs: number,
): Promise<string[]> {
  const usable = widget.identitySecrets.filter(
    (secret, index) => index === 0 || (secret.expiresAt ?? 0) > nowMs,
  );
  if (usable.length === 0 || !ctx.secrets) return [];
  const cipher = ctx.secrets;
  return Promise.all(
    usable.map((secret) => {
      let opened = openedSecrets.get(secret.envelope);
      if (!opened) {
        if (openedSecrets.size >= MAX_OPENED_SECRETS) openedSecrets.clear();
        opened = cipher.decrypt(secret.envelope, {
          organizationId: widget.organizationId,
          widgetChatbotId: widget.chatbotId,
        });
        opened.catch(() => openedSecrets.delete(secret.envelope));
        openedSecrets.set(secret.envelope, opened);
      }
      return opened;
    }),
  );
}

/** The returning visitor with its new token (and its contact, if an identity changed it); expired tokens pruned. */
async function renewVisitor(
  ctx: DomainContext,
  visitor: VisitorRecord,
  change: {
    contactId: string;
    subjectHash: string | undefined;
    tokenHash: string;
    expiresAtSeconds: number;
    dailyMessageBudget: number;
    nowMs: number;
  },
): Promise<void> {
  const nowSeconds = Math.floor(change.nowMs / 1000);
  const expired = Object.entries(visitor.tokens ?? {})
    .filter(([, expiresAt]) => expiresAt <= nowSeconds)
    .map(([hash]) => hash);
  const names: Record<string, string> = { "#tokens": "tokens", "#new": change.tokenHash, "#ttl": "ttl" };
  expired.forEach((hash, index) => {
    names[`#old${index}`] = hash;
  });
  await refusedAs(
    ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.visitor(visitor.visitorId),
        UpdateExpression: [
          "SET #tokens.#new = :expiresAt, contactId = :contactId, dailyMessageBudget = :budget, lastSeenAt = :now, #ttl = :ttl",
          change.subjectHash ? ", subjectHash = :subject" : "",
          expired.length > 0 ? ` REMOVE ${expired.map((_, index) => `#tokens.#old${index}`).join(", ")}` : "",
        ].join(""),
        ConditionExpression: "chatbotId = :chatbotId",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: {
          ":expiresAt": change.expiresAtSeconds,
          ":contactId": change.contactId,
          ":budget": change.dailyMessageBudget,
          ":now": isoTime(change.nowMs),
          ":ttl": visitorExpiry(change.nowMs),
          ":chatbotId": visitor.chatbotId,
          ...(change.subjectHash ? { ":subject": change.subjectHash } : {}),
        },
      }),
    ),
    // Forgotten (its TTL) between the read and this write: the visitor starts over.
    () => new AppError("conflict"),
  );
}

/** The contact's most recently active conversation with this chatbot that is not closed, if any. */
async function latestOpenConversation(
  ctx: DomainContext,
  organizationId: string,
  contactId: string,
  chatbotId: string,
): Promise<string | null> {
  const page = await listConversations(ctx, {
    organizationId,
    filters: { contactId, chatbotId },
    limit: 20,
  });
  return page.conversations.find((conversation) => conversation.status !== "closed")?.conversationId ?? null;
}
