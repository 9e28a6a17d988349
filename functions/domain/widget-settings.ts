/**
 * A chatbot's website widget: whether it is on, the origins allowed to start visitor sessions, how
 * identity tokens are treated, its appearance, its daily message budget and its identity secrets.
 *
 * The settings live in one global item keyed by the chatbot id (store/items.ts `widget`): the
 * session route is given a chatbot id and nothing else, so it must find the organization from it.
 * Every write checks, in the same transaction, that the chatbot is the caller's; the item carries
 * its organization, and a write for another organization's chatbot is refused as not found.
 *
 * Identity secrets are sealed like every other secret (secrets/envelope.ts: KMS on AWS, a key file
 * locally) and shown once. Rotating keeps the previous ones verifying for 24 hours, so a business
 * can deploy the new secret to its servers without a moment in which identities fail.
 */
import { randomBytes } from "node:crypto";
import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { AppError } from "#functions/errors";
import type { EnvelopeCipher } from "#functions/secrets/envelope";
import { cancellationReasons } from "#functions/store/conditions";
import {
  type IdentityVerification,
  items,
  keys,
  records,
  type StoredSigningSecret,
  type WidgetAppearance,
  type WidgetRecord,
} from "#functions/store/items";

export const widgetLimits = {
  allowedOrigins: 20,
  originLength: 255,
  titleLength: 60,
  launcherLabelLength: 40,
  starterQuestions: 4,
  starterQuestionLength: 120,
  languageLength: 35,
  /** A day's visitor messages at most (the budget an admin may set). */
  maxDailyMessageBudget: 1_000_000,
  /** Identity secrets kept at once: the current one and those still inside their overlap. */
  identitySecrets: 3,
  /** How long a rotated-out identity secret keeps verifying. */
  identitySecretOverlapMs: 24 * 60 * 60 * 1000,
} as const;

export const widgetDefaults = {
  enabled: false,
  allowedOrigins: [] as string[],
  identityVerification: "off" as IdentityVerification,
  appearance: {
    title: "",
    color: "#1f5fbf",
    position: "right",
    launcherLabel: "",
    starterQuestions: [] as string[],
    language: "auto",
  } satisfies WidgetAppearance,
  dailyMessageBudget: 2_000,
} as const;

/** What the management API shows: the settings, and when the identity secrets were made (never the secrets). */
export interface WidgetView {
  chatbotId: string;
  enabled: boolean;
  allowedOrigins: string[];
  identityVerification: IdentityVerification;
  appearance: WidgetAppearance;
  dailyMessageBudget: number;
  identitySecretCreatedAt: string | null;
  /** While a rotated-out secret still verifies: when the last of them stops. */
  previousIdentitySecretExpiresAt: string | null;
  updatedAt: string | null;
}

export interface WidgetChanges {
  enabled?: boolean;
  allowedOrigins?: string[];
  identityVerification?: IdentityVerification;
  appearance?: Partial<WidgetAppearance>;
  dailyMessageBudget?: number;
}

export interface WidgetContext extends DomainContext {
  /** Seals identity secrets; absent: they cannot be made (the environment names no key). */
  secrets?: EnvelopeCipher;
}

// ---------- origins ----------

/**
 * An allowed origin as stored: `scheme://host[:port]`, lower case, no default port; or
 * `scheme://*.host[:port]` (one leading wildcard label). Undefined when `text` is neither.
 */
export function normalizeAllowedOrigin(text: string): string | undefined {
  const match = /^(https?):\/\/(\*\.)?([^/?#@\s]+)\/?$/i.exec(text.trim());
  if (!match) return undefined;
  const [, scheme = "", wildcard, rest = ""] = match;
  let url: URL;
  try {
    url = new URL(`${scheme.toLowerCase()}://${rest}`);
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.pathname !== "/" || url.search || url.hash) return undefined;
  if (!/^(\[[0-9a-f:.]+\]|[a-z0-9-]+(\.[a-z0-9-]+)*)$/.test(url.hostname)) return undefined;
  // A wildcard stands for one label in front of a name of at least one label: never the whole host.
  if (wildcard && (url.hostname.startsWith("[") || /^[\d.]+$/.test(url.hostname))) return undefined;
  return `${url.protocol}//${wildcard ? "*." : ""}${url.host}`;
}

/** The origin a browser sent (`Origin` header), normalised; undefined for `null` or anything malformed. */
export function normalizeRequestOrigin(origin: string | undefined): string | undefined {
  if (!origin || origin === "null") return undefined;
  try {
    const url = new URL(origin);
    if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
    return `${url.protocol}//${url.host}`;
  } catch {
    return undefined;
  }
}

/** Whether a browser's origin is one of the allowed ones (a wildcard matches exactly one label). */
export function originAllowed(allowed: readonly string[], origin: string | undefined): boolean {
  const actual = normalizeRequestOrigin(origin);
  if (!actual) return false;
  return allowed.some((pattern) => {
    if (!pattern.includes("://*.")) return pattern === actual;
    const [scheme, rest = ""] = pattern.split("://*.");
    const prefix = `${scheme}://`;
    if (!actual.startsWith(prefix) || !actual.endsWith(`.${rest}`)) return false;
    const label = actual.slice(prefix.length, actual.length - rest.length - 1);
    return /^[a-z0-9-]+$/.test(label);
  });
}

// ---------- reads ----------

/** The widget of a chatbot as stored, whatever its organization (the session route's read). */
export async function readWidgetRecord(
  ctx: DomainContext,
  chatbotId: string,
): Promise<WidgetRecord | undefined> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({ TableName: ctx.db.tableName, Key: keys.widget(chatbotId) }),
  );
  return Item ? records.widget(Item) : undefined;
}

function viewOf(chatbotId: string, record: WidgetRecord | undefined, nowMs: number): WidgetView {
  const secrets = record?.identitySecrets ?? [];
  const overlapping = secrets
    .slice(1)
    .map((secret) => secret.expiresAt ?? 0)
    .filter((expiresAt) => expiresAt > nowMs);
  return {
    chatbotId,
    enabled: record?.enabled ?? widgetDefaults.enabled,
    allowedOrigins: record?.allowedOrigins ?? [...widgetDefaults.allowedOrigins],
    identityVerification: record?.identityVerification ?? widgetDefaults.identityVerification,
    appearance: { ...widgetDefaults.appearance, ...record?.appearance },
    dailyMessageBudget: record?.dailyMessageBudget ?? widgetDefaults.dailyMessageBudget,
    identitySecretCreatedAt: secrets[0]?.createdAt ?? null,
    previousIdentitySecretExpiresAt: overlapping.length > 0 ? isoTime(Math.max(...overlapping)) : null,
    updatedAt: record?.updatedAt ?? null,
  };
}

/** The organization's chatbot must exist; its widget may not have been set up yet (the defaults then). */
async function chatbotAndWidget(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
): Promise<WidgetRecord | undefined> {
  const [chatbot, widget] = await Promise.all([
    ctx.db.client.send(
      new GetCommand({
        TableName: ctx.db.tableName,
        Key: keys.chatbot(organizationId, chatbotId),
        ProjectionExpression: "PK",
      }),
    ),
    readWidgetRecord(ctx, chatbotId),
  ]);
  if (!chatbot.Item) throw new AppError("chatbot_not_found");
  // The chatbot is this organization's, so its widget is too; checked all the same.
  if (widget && widget.organizationId !== organizationId) throw new AppError("chatbot_not_found");
  return widget;
}

export async function getWidgetSettings(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
): Promise<WidgetView> {
  return viewOf(chatbotId, await chatbotAndWidget(ctx, organizationId, chatbotId), ctx.clock());
}

// ---------- writes ----------

/**
 * Changes the settings given (the others keep their value), in one transaction with a check that
 * the chatbot is still the organization's; a concurrent change of the same widget is a conflict.
 */
export async function updateWidgetSettings(
  ctx: DomainContext,
  input: { organizationId: string; chatbotId: string; changes: WidgetChanges },
): Promise<WidgetView> {
  const current = await chatbotAndWidget(ctx, input.organizationId, input.chatbotId);
  const nowMs = ctx.clock();
  const now = isoTime(nowMs);
  const base = viewOf(input.chatbotId, current, nowMs);
  const { changes } = input;
  const record: WidgetRecord = {
    chatbotId: input.chatbotId,
    organizationId: input.organizationId,
    enabled: changes.enabled ?? base.enabled,
    allowedOrigins: changes.allowedOrigins ?? base.allowedOrigins,
    identityVerification: changes.identityVerification ?? base.identityVerification,
    appearance: { ...base.appearance, ...changes.appearance },
    dailyMessageBudget: changes.dailyMessageBudget ?? base.dailyMessageBudget,
    identitySecrets: current?.identitySecrets ?? [],
    createdAt: current?.createdAt ?? now,
    updatedAt: now,
  };
  await writeWidget(ctx, record, current);
  return viewOf(input.chatbotId, record, nowMs);
}

/** A new identity secret (`cis_…`), in this answer only; the previous ones verify for 24 hours more. */
export async function rotateIdentitySecret(
  ctx: WidgetContext,
  input: { organizationId: string; chatbotId: string },
): Promise<{ widget: WidgetView; identitySecret: string }> {
  if (!ctx.secrets) throw new Error("no widget-secrets key is configured");
  const current = await chatbotAndWidget(ctx, input.organizationId, input.chatbotId);
  const nowMs = ctx.clock();
  const now = isoTime(nowMs);
  const identitySecret = `cis_${randomBytes(32).toString("base64url")}`;
  const envelope = await ctx.secrets.encrypt(identitySecret, {
    organizationId: input.organizationId,
    widgetChatbotId: input.chatbotId,
  });
  const overlapEnd = nowMs + widgetLimits.identitySecretOverlapMs;
  const previous: StoredSigningSecret[] = (current?.identitySecrets ?? [])
    .filter((stored) => stored.expiresAt === undefined || stored.expiresAt > nowMs)
    .map((stored) => ({ ...stored, expiresAt: Math.min(stored.expiresAt ?? overlapEnd, overlapEnd) }));
  const base = viewOf(input.chatbotId, current, nowMs);
  const record: WidgetRecord = {
    chatbotId: input.chatbotId,
    organizationId: input.organizationId,
    enabled: base.enabled,
    allowedOrigins: base.allowedOrigins,
    identityVerification: base.identityVerification,
    appearance: base.appearance,
    dailyMessageBudget: base.dailyMessageBudget,
    identitySecrets: [{ envelope, createdAt: now }, ...previous].slice(0, widgetLimits.identitySecrets),
    createdAt: current?.createdAt ?? now,
    updatedAt: now,
  };
  await writeWidget(ctx, record, current);
  return { widget: viewOf(input.chatbotId, record, nowMs), identitySecret };
}

async function writeWidget(
  ctx: DomainContext,
  record: WidgetRecord,
  current: WidgetRecord | undefined,
): Promise<void> {
  try {
    await ctx.db.client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            ConditionCheck: {
              TableName: ctx.db.tableName,
              Key: keys.chatbot(record.organizationId, record.chatbotId),
              ConditionExpression: "attribute_exists(PK)",
            },
          },
          {
            Put: {
              TableName: ctx.db.tableName,
              Item: items.widget(record),
              ...(current
                ? {
                    ConditionExpression: "updatedAt = :seen AND organizationId = :org",
                    ExpressionAttributeValues: { ":seen": current.updatedAt, ":org": record.organizationId },
                  }
                : { ConditionExpression: "attribute_not_exists(PK)" }),
            },
          },
        ],
      }),
    );
  } catch (error) {
    const [chatbot, widget] = cancellationReasons(error);
    if (chatbot?.failed) throw new AppError("chatbot_not_found");
    if (widget?.failed) throw new AppError("conflict");
    throw error;
  }
}
