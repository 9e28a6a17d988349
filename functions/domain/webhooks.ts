/**
 * An organization's webhook endpoints and their deliveries: what the management API's
 * `/manage/webhook-endpoints…` routes call. Every function takes the organization explicitly and
 * builds keys under it, so another organization's endpoint or delivery is simply not found.
 *
 * - An endpoint is an https URL on a public address (checked when set, and again on every
 *   attempt), the event types it receives, and whether it is enabled.
 * - Its signing secret is generated here, sealed (secrets/envelope.ts) and returned once, at
 *   creation and at rotation; a rotated-out secret keeps signing for the overlap window.
 * - Deliveries are listed newest first with their attempts; a finished one can be delivered again.
 */
import { randomUUID } from "node:crypto";
import { GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { AppError, type ValidationItem } from "#functions/errors";
import type { EnvelopeCipher } from "#functions/secrets/envelope";
import { deleteExistingAction, putNewAction, refusedAs } from "#functions/store/conditions";
import {
  type CountedScope,
  CountedWriteRefused,
  createCounted,
  deleteCounted,
} from "#functions/store/counted";
import {
  type DeliveryAttempt,
  type Item,
  items,
  keys,
  prefixes,
  records,
  type StoredSigningSecret,
  type WebhookDeliveryRecord,
  type WebhookEndpointRecord,
} from "#functions/store/items";
import { type WebhookEventType, webhookEventTypes } from "#functions/webhooks/events";
import { checkEndpointUrl, type OutboundPolicy, type UrlProblem } from "#functions/webhooks/outbound";
import type { DeliveryQueue } from "#functions/webhooks/queue";
import { newSigningSecret } from "#functions/webhooks/signing";
import type { WebhookTimings } from "#functions/webhooks/timings";

export interface WebhooksContext extends DomainContext {
  /** Seals signing secrets; absent: endpoints cannot be created or rotated. */
  secrets?: EnvelopeCipher;
  /** Where redeliveries are queued; absent: redelivery is unavailable. */
  queue?: DeliveryQueue;
  outbound: OutboundPolicy;
  timings: Pick<WebhookTimings, "secretOverlapSeconds">;
}

export const webhookLimits = {
  urlLength: 2_048,
  descriptionLength: 200,
  endpointsPerOrganization: 20,
  /** Secrets signing at once: the current one and rotated-out ones still in their overlap. */
  signingSecrets: 3,
  deliveriesPageMax: 100,
  deliveriesPageDefault: 20,
  /** Attempts one delivery may accumulate, redeliveries included. */
  attemptsPerDelivery: 50,
} as const;

/** What the organization sees of an endpoint: never its secrets. */
export interface WebhookEndpointView {
  endpointId: string;
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  description?: string;
  createdAt: string;
  updatedAt: string;
  /** While rotated-out secrets still sign: when the last of them stops. */
  previousSecretExpiresAt?: string;
  failingSince?: string;
  lastFailureAt?: string;
  /** Until then at most a few attempts run at once: the endpoint answered slowly or not at all. */
  slowUntil?: string;
  disabledAt?: string;
  disabledReason?: string;
}

export interface WebhookDeliveryView {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  state: WebhookDeliveryRecord["state"];
  createdAt: string;
  attemptCount: number;
  /** Newest first. */
  attempts: DeliveryAttempt[];
  nextAttemptAt?: string;
  finishedAt?: string;
  failedReason?: string;
}

export function endpointView(record: WebhookEndpointRecord, now: number): WebhookEndpointView {
  const overlapping = record.secrets
    .map((secret) => secret.expiresAt)
    .filter((end): end is number => end !== undefined && end > now);
  return {
    endpointId: record.endpointId,
    url: record.url,
    events: record.events as WebhookEventType[],
    enabled: record.enabled,
    ...(record.description ? { description: record.description } : {}),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...(overlapping.length > 0 ? { previousSecretExpiresAt: isoTime(Math.max(...overlapping)) } : {}),
    ...(record.failingSince !== undefined ? { failingSince: isoTime(record.failingSince) } : {}),
    ...(record.lastFailureAt ? { lastFailureAt: record.lastFailureAt } : {}),
    ...(record.slowUntil !== undefined && record.slowUntil > now
      ? { slowUntil: isoTime(record.slowUntil) }
      : {}),
    ...(record.disabledAt ? { disabledAt: record.disabledAt } : {}),
    ...(record.disabledReason ? { disabledReason: record.disabledReason } : {}),
  };
}

export function deliveryView(record: WebhookDeliveryRecord): WebhookDeliveryView {
  return {
    deliveryId: record.deliveryId,
    endpointId: record.endpointId,
    eventId: record.eventId,
    eventType: record.eventType,
    state: record.state,
    createdAt: record.createdAt,
    attemptCount: record.attemptCount,
    attempts: [...(record.attempts ?? [])].reverse(),
    ...(record.nextAttemptAt !== undefined ? { nextAttemptAt: isoTime(record.nextAttemptAt) } : {}),
    ...(record.finishedAt ? { finishedAt: record.finishedAt } : {}),
    ...(record.failedReason ? { failedReason: record.failedReason } : {}),
  };
}

// ---------- validation ----------

function invalid(items: ValidationItem[]): AppError {
  return new AppError("invalid_argument", { detail: items });
}

const urlMessages: Record<UrlProblem, string> = {
  invalid_url: "Input should be a valid URL",
  not_https: "URL scheme should be 'https'",
  credentials_in_url: "URL should not contain a user name or password",
  blocked_address: "URL should point to a public address",
  unresolved: "URL host name could not be resolved",
};

async function checkUrl(ctx: WebhooksContext, url: unknown): Promise<ValidationItem | undefined> {
  if (typeof url !== "string") {
    return { type: "string_type", loc: ["body", "url"], msg: "Input should be a valid string", input: url };
  }
  if (url.length > webhookLimits.urlLength) {
    return {
      type: "string_too_long",
      loc: ["body", "url"],
      msg: `String should have at most ${webhookLimits.urlLength} characters`,
      input: url,
    };
  }
  const problem = await checkEndpointUrl(url, ctx.outbound);
  return problem
    ? { type: `url_${problem}`, loc: ["body", "url"], msg: urlMessages[problem], input: url }
    : undefined;
}

function checkEvents(events: unknown): ValidationItem | undefined {
  const known = new Set<string>(webhookEventTypes);
  if (!Array.isArray(events) || events.length === 0) {
    return {
      type: "too_short",
      loc: ["body", "events"],
      msg: "List should have at least 1 item",
      input: events,
    };
  }
  const index = events.findIndex((event) => typeof event !== "string" || !known.has(event));
  if (index >= 0) {
    return {
      type: "literal_error",
      loc: ["body", "events", index],
      msg: `Input should be ${webhookEventTypes.map((type) => `'${type}'`).join(", ")}`,
      input: events[index],
    };
  }
  return undefined;
}

function checkDescription(description: unknown): ValidationItem | undefined {
  if (description === undefined) return undefined;
  if (typeof description !== "string" || description.length > webhookLimits.descriptionLength) {
    return {
      type: "string_too_long",
      loc: ["body", "description"],
      msg: `String should have at most ${webhookLimits.descriptionLength} characters`,
      input: description,
    };
  }
  return undefined;
}

function requireCipher(ctx: WebhooksContext): EnvelopeCipher {
  if (!ctx.secrets) throw new Error("no webhook-secrets key is configured");
  return ctx.secrets;
}

// ---------- endpoints ----------

export interface CreateWebhookEndpointInput {
  organizationId: string;
  url: string;
  events: string[];
  enabled?: boolean;
  description?: string;
}

/** Creates an endpoint; its signing secret is in the answer and nowhere else, ever. */
export async function createWebhookEndpoint(
  ctx: WebhooksContext,
  input: CreateWebhookEndpointInput,
): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
  const problems = [
    await checkUrl(ctx, input.url),
    checkEvents(input.events),
    checkDescription(input.description),
  ].filter((problem) => problem !== undefined);
  if (problems.length > 0) throw invalid(problems);
  const now = isoTime(ctx.clock());
  const endpointId = randomUUID();
  const secret = newSigningSecret();
  const envelope = await requireCipher(ctx).encrypt(secret, {
    organizationId: input.organizationId,
    webhookEndpointId: endpointId,
  });
  const record: WebhookEndpointRecord = {
    endpointId,
    organizationId: input.organizationId,
    url: input.url,
    events: [...new Set(input.events)],
    enabled: input.enabled ?? true,
    ...(input.description ? { description: input.description } : {}),
    secrets: [{ envelope, createdAt: now }],
    createdAt: now,
    updatedAt: now,
    leases: {},
    leaseVersion: 0,
  };
  try {
    await createCounted(ctx.db, endpointsOf(ctx, input.organizationId), [
      putNewAction(ctx.db.tableName, items.webhookEndpoint(record)),
    ]);
  } catch (error) {
    if (!(error instanceof CountedWriteRefused)) throw error;
    throw error.refusal.kind === "full"
      ? new AppError("conflict", {
          detail: `An organization has at most ${webhookLimits.endpointsPerOrganization} webhook endpoints`,
          details: { reason: "limit_reached", limit: webhookLimits.endpointsPerOrganization },
        })
      : new AppError("conflict");
  }
  return { endpoint: endpointView(record, ctx.clock()), secret };
}

/** An organization's endpoints as a counted scope: at most `endpointsPerOrganization`, under any concurrency. */
function endpointsOf(ctx: DomainContext, organizationId: string): CountedScope {
  return {
    counter: keys.webhookEndpointCount(organizationId),
    limit: webhookLimits.endpointsPerOrganization,
    existing: async () => {
      const found = await ctx.db.client.send(
        new QueryCommand({
          TableName: ctx.db.tableName,
          KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
          ExpressionAttributeValues: {
            ":pk": prefixes.webhooksPartition(organizationId),
            ":prefix": prefixes.webhookEndpoints,
          },
          Select: "COUNT",
          ConsistentRead: true,
        }),
      );
      return { count: found.Count ?? 0 };
    },
  };
}

async function readEndpoint(
  ctx: DomainContext,
  organizationId: string,
  endpointId: string,
): Promise<WebhookEndpointRecord> {
  const result = await ctx.db.client.send(
    new GetCommand({
      TableName: ctx.db.tableName,
      Key: keys.webhookEndpoint(organizationId, endpointId),
      ConsistentRead: true,
    }),
  );
  if (!result.Item) throw new AppError("webhook_endpoint_not_found");
  return records.webhookEndpoint(result.Item);
}

export async function getWebhookEndpoint(
  ctx: DomainContext,
  input: { organizationId: string; endpointId: string },
): Promise<WebhookEndpointView> {
  return endpointView(await readEndpoint(ctx, input.organizationId, input.endpointId), ctx.clock());
}

/** The organization's endpoints, oldest first. */
export async function listWebhookEndpoints(
  ctx: DomainContext,
  input: { organizationId: string },
): Promise<WebhookEndpointView[]> {
  const found: WebhookEndpointRecord[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: {
          ":pk": prefixes.webhooksPartition(input.organizationId),
          ":prefix": prefixes.webhookEndpoints,
        },
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    found.push(...(page.Items ?? []).map(records.webhookEndpoint));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  const now = ctx.clock();
  return found
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.endpointId.localeCompare(b.endpointId))
    .map((record) => endpointView(record, now));
}

export interface UpdateWebhookEndpointInput {
  organizationId: string;
  endpointId: string;
  url?: string;
  events?: string[];
  enabled?: boolean;
  description?: string;
}

/**
 * Changes url, events, enabled or description. Enabling a disabled endpoint clears why it was
 * disabled and its failure streak. Refused (conflict) if someone changed it meanwhile.
 */
export async function updateWebhookEndpoint(
  ctx: WebhooksContext,
  input: UpdateWebhookEndpointInput,
): Promise<WebhookEndpointView> {
  const problems = [
    input.url === undefined ? undefined : await checkUrl(ctx, input.url),
    input.events === undefined ? undefined : checkEvents(input.events),
    checkDescription(input.description),
  ].filter((problem) => problem !== undefined);
  if (problems.length > 0) throw invalid(problems);
  const current = await readEndpoint(ctx, input.organizationId, input.endpointId);
  const now = isoTime(ctx.clock());
  const sets = ["updatedAt = :now"];
  const removes: string[] = [];
  const values: Record<string, unknown> = { ":now": now, ":seen": current.updatedAt };
  if (input.url !== undefined) {
    sets.push("#url = :url");
    values[":url"] = input.url;
  }
  if (input.events !== undefined) {
    sets.push("events = :events");
    values[":events"] = [...new Set(input.events)];
  }
  if (input.description !== undefined) {
    sets.push("description = :description");
    values[":description"] = input.description;
  }
  if (input.enabled !== undefined) {
    sets.push("enabled = :enabled");
    values[":enabled"] = input.enabled;
    if (input.enabled && !current.enabled)
      removes.push("disabledAt", "disabledReason", "failingSince", "slowUntil");
  }
  const result = await refusedAs(
    ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.webhookEndpoint(input.organizationId, input.endpointId),
        UpdateExpression: `SET ${sets.join(", ")}${removes.length > 0 ? ` REMOVE ${removes.join(", ")}` : ""}`,
        ConditionExpression: "updatedAt = :seen",
        ...(input.url !== undefined ? { ExpressionAttributeNames: { "#url": "url" } } : {}),
        ExpressionAttributeValues: values,
        ReturnValues: "ALL_NEW",
      }),
    ),
    () => new AppError("conflict"),
  );
  return endpointView(records.webhookEndpoint(result.Attributes ?? {}), ctx.clock());
}

export async function deleteWebhookEndpoint(
  ctx: DomainContext,
  input: { organizationId: string; endpointId: string },
): Promise<void> {
  try {
    await deleteCounted(ctx.db, endpointsOf(ctx, input.organizationId), [
      deleteExistingAction(ctx.db.tableName, keys.webhookEndpoint(input.organizationId, input.endpointId)),
    ]);
  } catch (error) {
    if (error instanceof CountedWriteRefused) throw new AppError("webhook_endpoint_not_found");
    throw error;
  }
}

/**
 * A new signing secret, returned once. The secrets signing until now keep signing for the overlap
 * window (each delivery then carries one signature per secret), so receivers can switch without
 * missing a delivery.
 */
export async function rotateWebhookSecret(
  ctx: WebhooksContext,
  input: { organizationId: string; endpointId: string },
): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
  const current = await readEndpoint(ctx, input.organizationId, input.endpointId);
  const nowMs = ctx.clock();
  const now = isoTime(nowMs);
  const secret = newSigningSecret();
  const envelope = await requireCipher(ctx).encrypt(secret, {
    organizationId: input.organizationId,
    webhookEndpointId: input.endpointId,
  });
  const overlapEnd = nowMs + ctx.timings.secretOverlapSeconds * 1000;
  const previous: StoredSigningSecret[] = current.secrets
    .filter((stored) => stored.expiresAt === undefined || stored.expiresAt > nowMs)
    .map((stored) => ({ ...stored, expiresAt: Math.min(stored.expiresAt ?? overlapEnd, overlapEnd) }));
  const secrets = [{ envelope, createdAt: now }, ...previous].slice(0, webhookLimits.signingSecrets);
  const result = await refusedAs(
    ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.webhookEndpoint(input.organizationId, input.endpointId),
        UpdateExpression: "SET secrets = :secrets, updatedAt = :now",
        ConditionExpression: "updatedAt = :seen",
        ExpressionAttributeValues: { ":secrets": secrets, ":now": now, ":seen": current.updatedAt },
        ReturnValues: "ALL_NEW",
      }),
    ),
    () => new AppError("conflict"),
  );
  return { endpoint: endpointView(records.webhookEndpoint(result.Attributes ?? {}), nowMs), secret };
}

// ---------- deliveries ----------

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function decodeCursor(cursor: string): string {
  const deliveryId = Buffer.from(cursor, "base64url").toString("utf8");
  if (!UUID.test(deliveryId)) {
    throw invalid([
      { type: "value_error", loc: ["query", "cursor"], msg: "Value error, invalid cursor", input: cursor },
    ]);
  }
  return deliveryId;
}

export interface DeliveriesPage {
  deliveries: WebhookDeliveryView[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** One page of an endpoint's deliveries, newest first, each with its attempts. */
export async function listWebhookDeliveries(
  ctx: DomainContext,
  input: { organizationId: string; endpointId: string; limit?: number; cursor?: string },
): Promise<DeliveriesPage> {
  const limit = input.limit ?? webhookLimits.deliveriesPageDefault;
  if (!Number.isInteger(limit) || limit < 1 || limit > webhookLimits.deliveriesPageMax) {
    throw invalid([
      {
        type: "less_than_equal",
        loc: ["query", "limit"],
        msg: `Input should be between 1 and ${webhookLimits.deliveriesPageMax}`,
        input: input.limit,
      },
    ]);
  }
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
  const [, page] = await Promise.all([
    readEndpoint(ctx, input.organizationId, input.endpointId),
    ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: {
          ":pk": prefixes.deliveriesPartition(input.organizationId, input.endpointId),
          ":prefix": prefixes.deliveries,
        },
        ScanIndexForward: false,
        Limit: limit + 1,
        ...(after
          ? { ExclusiveStartKey: keys.webhookDelivery(input.organizationId, input.endpointId, after) }
          : {}),
      }),
    ),
  ]);
  const found = (page.Items ?? []).map(records.webhookDelivery);
  const hasMore = found.length > limit;
  const shown = found.slice(0, limit);
  const last = shown.at(-1);
  return {
    deliveries: shown.map(deliveryView),
    hasMore,
    nextCursor: hasMore && last ? Buffer.from(last.deliveryId, "utf8").toString("base64url") : null,
  };
}

/**
 * Sends a finished (delivered or failed) delivery again: one more attempt, right away, with the
 * same `webhook-id`; no automatic retries follow it. A delivery still being retried is refused.
 */
export async function redeliverWebhookDelivery(
  ctx: WebhooksContext,
  input: { organizationId: string; endpointId: string; deliveryId: string },
): Promise<WebhookDeliveryView> {
  if (!ctx.queue) throw new Error("no delivery queue is configured");
  const [endpoint, found] = await Promise.all([
    readEndpoint(ctx, input.organizationId, input.endpointId),
    ctx.db.client.send(
      new GetCommand({
        TableName: ctx.db.tableName,
        Key: keys.webhookDelivery(input.organizationId, input.endpointId, input.deliveryId),
        ConsistentRead: true,
      }),
    ),
  ]);
  if (!found.Item) throw new AppError("webhook_delivery_not_found");
  const delivery = records.webhookDelivery(found.Item);
  if (!endpoint.enabled) throw new AppError("conflict", { detail: "The webhook endpoint is disabled" });
  if (delivery.state === "pending") {
    throw new AppError("conflict", { detail: "The delivery is still being attempted" });
  }
  if (delivery.attemptCount >= webhookLimits.attemptsPerDelivery) {
    throw new AppError("conflict", { detail: "The delivery has been attempted too often" });
  }
  const key = keys.webhookDelivery(input.organizationId, input.endpointId, input.deliveryId);
  const reopen = (from: string, to: string) =>
    ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: key,
        UpdateExpression: `SET #state = :to${to === "pending" ? " REMOVE finishedAt, failedReason" : ""}`,
        ConditionExpression: "#state = :from AND attemptCount = :count",
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: { ":from": from, ":to": to, ":count": delivery.attemptCount },
      }),
    );
  await refusedAs(reopen(delivery.state, "pending"), () => new AppError("conflict"));
  const now = ctx.clock();
  try {
    await ctx.queue.send([
      {
        message: {
          organizationId: input.organizationId,
          endpointId: input.endpointId,
          deliveryId: input.deliveryId,
          attempt: delivery.attemptCount + 1,
          trigger: "manual",
          notBefore: now,
          queuedAt: now,
        },
        delaySeconds: 0,
      },
    ]);
  } catch (error) {
    await reopen("pending", delivery.state).catch(() => undefined);
    throw error;
  }
  const { finishedAt: _finishedAt, failedReason: _failedReason, ...rest } = delivery;
  return deliveryView({ ...rest, state: "pending" });
}
