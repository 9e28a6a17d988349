/**
 * The fan-out: item changes in, one delivery per (event, subscribed endpoint) out.
 *
 * Main course, per batch of changes:
 *   1. derive the events (webhooks/events.ts);
 *   2. per organization with events, read its endpoints (one Query) and keep the enabled ones
 *      subscribed to each event's type;
 *   3. name the chatbot where the item did not (one GetItem per such conversation);
 *   4. per (event, endpoint): put the delivery item, only if it does not exist yet, and queue its
 *      first attempt. A repeated batch (a retry, a replay) finds the items and queues nothing
 *      new, except for a delivery whose first attempt never ran (the batch failed between the put
 *      and the queue): that one is queued again, and the attempt's own check drops any duplicate.
 * Throws if any of it fails, so the stream retries the batch (every step is safe to repeat).
 */
import { GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { log } from "#functions/log";
import { refusedItem } from "#functions/store/conditions";
import {
  type Item,
  items,
  keys,
  prefixes,
  records,
  type WebhookDeliveryRecord,
  type WebhookEndpointRecord,
} from "#functions/store/items";
import {
  deliveryIdFor,
  deriveEvents,
  eventPayload,
  type ItemChange,
  type WebhookEvent,
} from "#functions/webhooks/events";
import type { DeliveryQueue, QueuedMessage } from "#functions/webhooks/queue";

export interface FanoutContext extends DomainContext {
  queue: DeliveryQueue;
}

/** Deliveries are kept this long (the item's TTL). */
export const DELIVERY_RETENTION_SECONDS = 30 * 24 * 3_600;

export interface FanoutResult {
  events: number;
  deliveries: number;
  queued: number;
}

export async function fanOut(ctx: FanoutContext, changes: readonly ItemChange[]): Promise<FanoutResult> {
  const events = changes.flatMap(deriveEvents);
  if (events.length === 0) return { events: 0, deliveries: 0, queued: 0 };

  const byOrganization = new Map<string, WebhookEvent[]>();
  for (const event of events) {
    const list = byOrganization.get(event.organizationId) ?? [];
    list.push(event);
    byOrganization.set(event.organizationId, list);
  }

  const pairs: { event: WebhookEvent; endpoint: WebhookEndpointRecord }[] = [];
  await Promise.all(
    [...byOrganization].map(async ([organizationId, organizationEvents]) => {
      const endpoints = await enabledEndpoints(ctx, organizationId);
      for (const event of organizationEvents) {
        for (const endpoint of endpoints) {
          if (endpoint.events.includes(event.type)) pairs.push({ event, endpoint });
        }
      }
    }),
  );
  if (pairs.length === 0) return { events: events.length, deliveries: 0, queued: 0 };

  const chatbots = await chatbotsOf(
    ctx,
    pairs.map((pair) => pair.event).filter((event) => event.chatbotId === undefined),
  );
  const now = ctx.clock();
  const queued: QueuedMessage[] = [];
  await Promise.all(
    pairs.map(async ({ event, endpoint }) => {
      const chatbotId = event.chatbotId ?? chatbots.get(conversationKey(event)) ?? null;
      const delivery: WebhookDeliveryRecord = {
        deliveryId: deliveryIdFor(endpoint.endpointId, event),
        endpointId: endpoint.endpointId,
        organizationId: endpoint.organizationId,
        eventId: event.id,
        eventType: event.type,
        payload: eventPayload(event, chatbotId),
        createdAt: new Date(now).toISOString(),
        state: "pending",
        attemptCount: 0,
        attempts: [],
        expiresAt: Math.floor(now / 1000) + DELIVERY_RETENTION_SECONDS,
      };
      if (!(await putIfNew(ctx, delivery))) return;
      queued.push({
        message: {
          organizationId: delivery.organizationId,
          endpointId: delivery.endpointId,
          deliveryId: delivery.deliveryId,
          attempt: 1,
          trigger: "event",
          notBefore: now,
          queuedAt: now,
        },
        delaySeconds: 0,
      });
    }),
  );
  await ctx.queue.send(queued);
  log.info("webhook events fanned out", {
    events: events.length,
    deliveries: pairs.length,
    queued: queued.length,
  });
  return { events: events.length, deliveries: pairs.length, queued: queued.length };
}

/** The organization's enabled endpoints (one partition, one Query; a few dozen items at most). */
async function enabledEndpoints(
  ctx: DomainContext,
  organizationId: string,
): Promise<WebhookEndpointRecord[]> {
  const found: WebhookEndpointRecord[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: {
          ":pk": prefixes.webhooksPartition(organizationId),
          ":prefix": prefixes.webhookEndpoints,
        },
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const endpoint = records.webhookEndpoint(item);
      if (endpoint.enabled) found.push(endpoint);
    }
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return found;
}

const conversationKey = (event: Pick<WebhookEvent, "organizationId" | "conversationId">) =>
  `${event.organizationId}\n${event.conversationId}`;

/** The chatbot of each conversation whose events did not name it. */
async function chatbotsOf(ctx: DomainContext, events: readonly WebhookEvent[]): Promise<Map<string, string>> {
  const wanted = new Map(events.map((event) => [conversationKey(event), event]));
  const found = new Map<string, string>();
  await Promise.all(
    [...wanted].map(async ([key, event]) => {
      const result = await ctx.db.client.send(
        new GetCommand({
          TableName: ctx.db.tableName,
          Key: keys.conversation(event.organizationId, event.conversationId),
          ProjectionExpression: "chatbotId",
        }),
      );
      const chatbotId = result.Item?.chatbotId;
      if (typeof chatbotId === "string") found.set(key, chatbotId);
    }),
  );
  return found;
}

/**
 * Puts the delivery unless it exists. True when its first attempt should be queued: it is new, or
 * it exists but no attempt has run yet (a repeated batch may have stopped before queuing it).
 */
async function putIfNew(ctx: DomainContext, delivery: WebhookDeliveryRecord): Promise<boolean> {
  try {
    await ctx.db.client.send(
      new PutCommand({
        TableName: ctx.db.tableName,
        Item: items.webhookDelivery(delivery),
        ConditionExpression: "attribute_not_exists(PK)",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return true;
  } catch (error) {
    const stored = refusedItem(error);
    return stored?.state === "pending" && stored.attemptCount === 0;
  }
}
