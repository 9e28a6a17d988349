/**
 * One delivery attempt, from a queue message.
 *
 * Main course:
 *   1. a message whose time has not come (a long wait chained over several queue hops) goes back
 *      to the queue for the rest of the wait;
 *   2. read the delivery and its endpoint (consistent reads, in parallel); drop the message if the
 *      attempt it names was already made (a duplicate), retry it shortly if the previous attempt is
 *      not recorded yet, fail the delivery if the endpoint is gone or disabled;
 *   3. an endpoint recently slow (an attempt that timed out or took `slowAttemptMs`) gets at most
 *      `maxInFlightPerEndpoint` attempts at once: each takes a lease on the endpoint item, and an
 *      attempt finding them all taken goes back to the queue for a few seconds, so a slow endpoint
 *      holds a few workers and never the others' turn. Healthy endpoints take no lease (no extra
 *      write, no limit on their throughput);
 *   4. sign with every secret that currently signs and POST (webhooks/outbound.ts);
 *   5. after a failure with retries left, queue the next attempt first (so a crash after this
 *      point repeats the attempt rather than losing the retry), then record the attempt
 *      (conditional on the attempt count, so it is recorded once), then release the lease and
 *      update the endpoint's health when it changed (failing since, slow until); an endpoint
 *      failing for `disableAfterSeconds` is disabled, with the reason recorded.
 */
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { describeError, log } from "#functions/log";
import { refusedItem } from "#functions/store/conditions";
import {
  type DeliveryAttempt,
  keys,
  records,
  type StoredSigningSecret,
  type WebhookDeliveryRecord,
  type WebhookEndpointRecord,
} from "#functions/store/items";
import type { PostOutcome, WebhookPost } from "#functions/webhooks/outbound";
import type { DeliveryMessage, DeliveryQueue } from "#functions/webhooks/queue";
import { webhookHeaders } from "#functions/webhooks/signing";
import { queueDelaySeconds, retryDelayMs, type WebhookTimings } from "#functions/webhooks/timings";

export interface DeliveryContext extends DomainContext {
  queue: DeliveryQueue;
  timings: WebhookTimings;
  /** The plaintext of one of the endpoint's sealed secrets (cached by the caller). */
  openSecret(endpoint: WebhookEndpointRecord, secret: StoredSigningSecret): Promise<string>;
  post(request: WebhookPost): Promise<PostOutcome>;
  random?: () => number;
}

export type AttemptOutcome =
  | "delivered"
  | "retry_scheduled"
  | "failed"
  | "hop"
  | "deferred"
  | "early"
  | "duplicate"
  | "dropped";

/** A message may run this early (SQS delays are whole seconds, rounded up). */
const EARLY_TOLERANCE_MS = 500;
/** How long a message waits for the previous attempt to be recorded before it is dropped. */
const MAX_EARLY_WAIT_MS = 60 * 60_000;
const USER_AGENT = "ChatbotConversationAPI-Webhooks/1.0";

export async function processDeliveryMessage(
  ctx: DeliveryContext,
  message: DeliveryMessage,
): Promise<AttemptOutcome> {
  const now = ctx.clock();
  if (message.notBefore - now > EARLY_TOLERANCE_MS) {
    await requeue(ctx, message, queueDelaySeconds(ctx.timings, message.notBefore, now));
    return "hop";
  }
  const [delivery, endpoint] = await Promise.all([readDelivery(ctx, message), readEndpoint(ctx, message)]);
  if (delivery?.state !== "pending" || delivery.attemptCount >= message.attempt) return "duplicate";
  if (delivery.attemptCount < message.attempt - 1) {
    if (now - message.queuedAt > MAX_EARLY_WAIT_MS) {
      log.warn("webhook attempt dropped: its previous attempt was never recorded", ids(message));
      return "dropped";
    }
    await requeue(ctx, message, 1);
    return "early";
  }
  if (!endpoint?.enabled) {
    await finish(ctx, delivery, message, endpoint ? "endpoint_disabled" : "endpoint_deleted");
    return "failed";
  }

  const limited = (endpoint.slowUntil ?? 0) > now;
  const lease = limited ? await takeLease(ctx, endpoint, message, now) : endpoint;
  if (lease === "held") return "duplicate";
  if (lease === "gone") {
    await finish(ctx, delivery, message, "endpoint_deleted");
    return "failed";
  }
  if (lease === "busy") {
    const random = ctx.random ?? Math.random;
    await requeue(ctx, message, Math.ceil(ctx.timings.deferSeconds * (1 + random())));
    return "deferred";
  }

  const leaseKey = limited ? leaseKeyOf(message) : undefined;
  let outcome: PostOutcome;
  try {
    outcome = await attempt(ctx, lease, delivery, now);
  } catch (error) {
    if (leaseKey) await updateEndpoint(ctx, lease, { leaseKey }).catch(() => undefined);
    throw error;
  }
  const succeeded = outcome.kind === "answered" && outcome.status >= 200 && outcome.status < 300;
  const waitMs =
    succeeded || message.trigger === "manual"
      ? undefined
      : retryDelayMs(ctx.timings, message.attempt, ctx.random ?? Math.random);
  const attemptedAt = ctx.clock();
  const nextAttemptAt = waitMs === undefined ? undefined : attemptedAt + waitMs;
  if (nextAttemptAt !== undefined) {
    await ctx.queue.send([
      {
        message: {
          ...message,
          attempt: message.attempt + 1,
          trigger: "retry",
          notBefore: nextAttemptAt,
          queuedAt: attemptedAt,
        },
        delaySeconds: queueDelaySeconds(ctx.timings, nextAttemptAt, attemptedAt),
      },
    ]);
  }
  const record: DeliveryAttempt = {
    attempt: message.attempt,
    at: new Date(now).toISOString(),
    trigger: message.trigger,
    latencyMs: outcome.latencyMs,
    ...(outcome.kind === "answered"
      ? { status: outcome.status, response: outcome.response }
      : { error: outcome.kind }),
  };
  const state = succeeded ? "delivered" : nextAttemptAt === undefined ? "failed" : "pending";
  await recordAttempt(ctx, delivery, record, state, nextAttemptAt, attemptedAt);
  const slow = outcome.kind === "timeout" || outcome.latencyMs >= ctx.timings.slowAttemptMs;
  const health = await updateEndpoint(ctx, lease, {
    ...(leaseKey ? { leaseKey } : {}),
    outcome: { succeeded, slow, at: attemptedAt },
  });
  if (!succeeded && health) await disableIfFailingTooLong(ctx, health, record, attemptedAt);
  log.info("webhook attempt", {
    ...ids(message),
    attempt: message.attempt,
    status: record.status,
    error: record.error,
    latencyMs: record.latencyMs,
    state,
  });
  return succeeded ? "delivered" : state === "pending" ? "retry_scheduled" : "failed";
}

async function attempt(
  ctx: DeliveryContext,
  endpoint: WebhookEndpointRecord,
  delivery: WebhookDeliveryRecord,
  now: number,
): Promise<PostOutcome> {
  const signing = endpoint.secrets.filter(
    (secret) => secret.expiresAt === undefined || secret.expiresAt > now,
  );
  const secrets = await Promise.all(signing.map((secret) => ctx.openSecret(endpoint, secret)));
  const headers = webhookHeaders(secrets, delivery.eventId, Math.floor(now / 1000), delivery.payload);
  return ctx.post({
    url: endpoint.url,
    headers: { ...headers, "user-agent": USER_AGENT },
    body: delivery.payload,
    timeoutMs: ctx.timings.requestTimeoutMs,
  });
}

const ids = (message: DeliveryMessage) => ({
  organizationId: message.organizationId,
  endpointId: message.endpointId,
  deliveryId: message.deliveryId,
});

async function requeue(ctx: DeliveryContext, message: DeliveryMessage, delaySeconds: number): Promise<void> {
  await ctx.queue.send([{ message, delaySeconds }]);
}

async function readDelivery(
  ctx: DomainContext,
  message: DeliveryMessage,
): Promise<WebhookDeliveryRecord | undefined> {
  const result = await ctx.db.client.send(
    new GetCommand({
      TableName: ctx.db.tableName,
      Key: keys.webhookDelivery(message.organizationId, message.endpointId, message.deliveryId),
      ConsistentRead: true,
    }),
  );
  return result.Item ? records.webhookDelivery(result.Item) : undefined;
}

async function readEndpoint(
  ctx: DomainContext,
  message: Pick<DeliveryMessage, "organizationId" | "endpointId">,
): Promise<WebhookEndpointRecord | undefined> {
  const result = await ctx.db.client.send(
    new GetCommand({
      TableName: ctx.db.tableName,
      Key: keys.webhookEndpoint(message.organizationId, message.endpointId),
      ConsistentRead: true,
    }),
  );
  return result.Item ? records.webhookEndpoint(result.Item) : undefined;
}

// ---------- in-flight leases ----------

/** One attempt's lease: delivery and attempt, so a duplicate of the same attempt is recognised. */
const leaseKeyOf = (message: DeliveryMessage) => `${message.deliveryId}#${message.attempt}`;

/**
 * Takes a lease on the endpoint for this attempt. The endpoint item's `leases` map holds the
 * attempts in flight with their lease ends; a taker writes its own entry and removes expired ones,
 * conditional on the `leaseVersion` it read, so the cap holds against concurrent takers. A lease
 * outlives any attempt (the request timeout plus a minute), and expires if its Lambda dies.
 */
async function takeLease(
  ctx: DeliveryContext,
  read: WebhookEndpointRecord,
  message: DeliveryMessage,
  now: number,
): Promise<WebhookEndpointRecord | "held" | "busy" | "gone"> {
  const key = leaseKeyOf(message);
  const until = now + ctx.timings.requestTimeoutMs + 60_000;
  let endpoint: WebhookEndpointRecord | undefined = read;
  for (let tries = 0; tries < 3; tries++) {
    if (!endpoint) return "gone";
    const entries = Object.entries(endpoint.leases ?? {});
    if ((endpoint.leases?.[key] ?? 0) > now) return "held";
    const live = entries.filter(([, end]) => end > now);
    if (live.length >= ctx.timings.maxInFlightPerEndpoint) return "busy";
    const expired = entries.filter(([, end]) => end <= now).slice(0, 20);
    const names: Record<string, string> = { "#mine": key };
    for (const [index, [name]] of expired.entries()) names[`#x${index}`] = name;
    try {
      const result = await ctx.db.client.send(
        new UpdateCommand({
          TableName: ctx.db.tableName,
          Key: keys.webhookEndpoint(endpoint.organizationId, endpoint.endpointId),
          UpdateExpression: `SET leases.#mine = :until, leaseVersion = :next${
            expired.length > 0 ? ` REMOVE ${expired.map((_, index) => `leases.#x${index}`).join(", ")}` : ""
          }`,
          ConditionExpression: "leaseVersion = :seen",
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ":until": until,
            ":seen": endpoint.leaseVersion,
            ":next": endpoint.leaseVersion + 1,
          },
          ReturnValues: "ALL_NEW",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      return records.webhookEndpoint(result.Attributes ?? {});
    } catch (error) {
      // Another taker was first: look again at what it left.
      const stored = refusedItem(error);
      endpoint = stored ? records.webhookEndpoint(stored) : undefined;
    }
  }
  return "busy";
}

/**
 * After an attempt (or when giving up on one): ends its lease, if it took one, and keeps the
 * endpoint's health where it changed: a failure starts `failingSince` (if unset) and notes
 * `lastFailureAt`, a success ends the streak; a slow attempt (timed out, or `slowAttemptMs` or more)
 * limits the endpoint's attempts in flight for `slowPenaltySeconds`, a fast success lifts that.
 * Nothing is written for a healthy endpoint's success. Returns the endpoint as it is now when it
 * was written (undefined if nothing was, or it was deleted meanwhile). Removing a lease bumps no
 * version: it only makes room.
 */
async function updateEndpoint(
  ctx: DeliveryContext,
  endpoint: WebhookEndpointRecord,
  change: { leaseKey?: string; outcome?: { succeeded: boolean; slow: boolean; at: number } },
): Promise<WebhookEndpointRecord | undefined> {
  const removes: string[] = [];
  const sets: string[] = [];
  const values: Record<string, unknown> = {};
  const names: Record<string, string> = {};
  if (change.leaseKey) {
    removes.push("leases.#mine");
    names["#mine"] = change.leaseKey;
  }
  const outcome = change.outcome;
  if (outcome) {
    if (outcome.succeeded && endpoint.failingSince !== undefined) removes.push("failingSince");
    if (!outcome.succeeded) {
      sets.push("lastFailureAt = :at", "failingSince = if_not_exists(failingSince, :atMs)");
      values[":at"] = new Date(outcome.at).toISOString();
      values[":atMs"] = outcome.at;
    }
    if (outcome.slow) {
      sets.push("slowUntil = :slowUntil");
      values[":slowUntil"] = outcome.at + ctx.timings.slowPenaltySeconds * 1000;
    } else if (outcome.succeeded && endpoint.slowUntil !== undefined) {
      removes.push("slowUntil");
    }
  }
  if (removes.length === 0 && sets.length === 0) return undefined;
  try {
    const response = await ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.webhookEndpoint(endpoint.organizationId, endpoint.endpointId),
        UpdateExpression: [
          sets.length > 0 ? `SET ${sets.join(", ")}` : "",
          removes.length > 0 ? `REMOVE ${removes.join(", ")}` : "",
        ]
          .filter(Boolean)
          .join(" "),
        ConditionExpression: "attribute_exists(PK)",
        ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
        ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
        ReturnValues: "ALL_NEW",
      }),
    );
    return records.webhookEndpoint(response.Attributes ?? {});
  } catch (error) {
    refusedItem(error);
    return undefined;
  }
}

async function disableIfFailingTooLong(
  ctx: DeliveryContext,
  endpoint: WebhookEndpointRecord,
  last: DeliveryAttempt,
  now: number,
): Promise<void> {
  const since = endpoint.failingSince;
  if (!endpoint.enabled || since === undefined || now - since < ctx.timings.disableAfterSeconds * 1000)
    return;
  const answer = last.status !== undefined ? `HTTP ${last.status}` : (last.error ?? "no answer");
  const reason = `Disabled after failing continuously since ${new Date(since).toISOString()} (${formatDuration(
    now - since,
  )}); the last attempt got: ${answer}.`;
  try {
    await ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.webhookEndpoint(endpoint.organizationId, endpoint.endpointId),
        UpdateExpression:
          "SET enabled = :false, disabledAt = :now, disabledReason = :reason, updatedAt = :now",
        ConditionExpression: "enabled = :true AND failingSince = :since",
        ExpressionAttributeValues: {
          ":false": false,
          ":true": true,
          ":now": new Date(now).toISOString(),
          ":reason": reason,
          ":since": since,
        },
      }),
    );
    log.warn("webhook endpoint disabled", {
      organizationId: endpoint.organizationId,
      endpointId: endpoint.endpointId,
      failingForMs: now - since,
    });
  } catch (error) {
    // Someone else disabled it, re-enabled it, or it succeeded meanwhile: nothing to do.
    refusedItem(error);
  }
}

function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7_200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3_600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

// ---------- recording ----------

async function recordAttempt(
  ctx: DomainContext,
  delivery: WebhookDeliveryRecord,
  attempt: DeliveryAttempt,
  state: WebhookDeliveryRecord["state"],
  nextAttemptAt: number | undefined,
  now: number,
): Promise<void> {
  const sets = ["attemptCount = :n", "attempts = list_append(attempts, :attempt)", "#state = :state"];
  const values: Record<string, unknown> = {
    ":n": attempt.attempt,
    ":prev": attempt.attempt - 1,
    ":attempt": [attempt],
    ":state": state,
    ":pending": "pending",
  };
  if (nextAttemptAt !== undefined) {
    sets.push("nextAttemptAt = :next");
    values[":next"] = nextAttemptAt;
  } else {
    sets.push("finishedAt = :finished");
    values[":finished"] = new Date(now).toISOString();
  }
  if (state === "failed") {
    sets.push("failedReason = :reason");
    values[":reason"] = attempt.trigger === "manual" ? "redelivery_failed" : "retries_exhausted";
  }
  try {
    await ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.webhookDelivery(delivery.organizationId, delivery.endpointId, delivery.deliveryId),
        UpdateExpression: `SET ${sets.join(", ")}${nextAttemptAt === undefined ? " REMOVE nextAttemptAt" : ""}`,
        ConditionExpression: "attemptCount = :prev AND #state = :pending",
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: values,
      }),
    );
  } catch (error) {
    // A duplicate of this attempt recorded it first.
    refusedItem(error);
    log.info("webhook attempt already recorded", {
      deliveryId: delivery.deliveryId,
      attempt: attempt.attempt,
    });
  }
}

/** Ends a delivery without an attempt (its endpoint is gone or disabled). */
async function finish(
  ctx: DomainContext,
  delivery: WebhookDeliveryRecord,
  message: DeliveryMessage,
  reason: "endpoint_disabled" | "endpoint_deleted",
): Promise<void> {
  try {
    await ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.webhookDelivery(delivery.organizationId, delivery.endpointId, delivery.deliveryId),
        UpdateExpression:
          "SET #state = :failed, failedReason = :reason, finishedAt = :now REMOVE nextAttemptAt",
        ConditionExpression: "attemptCount = :prev AND #state = :pending",
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: {
          ":failed": "failed",
          ":reason": reason,
          ":now": new Date(ctx.clock()).toISOString(),
          ":prev": message.attempt - 1,
          ":pending": "pending",
        },
      }),
    );
  } catch (error) {
    refusedItem(error);
  }
}

/** For logs: what went wrong in a message's processing, without payloads or secrets. */
export function describeDeliveryError(error: unknown): Record<string, unknown> {
  const { errorName, errorMessage } = describeError(error);
  return { errorName, errorMessage };
}
