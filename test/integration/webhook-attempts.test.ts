/**
 * The delivery function's decisions, one message at a time, on the local table: what makes
 * delivery at-least-once without repeats. The function's domain code runs here with a recording
 * queue and a scripted POST, so each case is exact (the pipeline tests show the same end to end).
 */
import { randomUUID } from "node:crypto";
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { createWebhookEndpoint, deleteWebhookEndpoint } from "#functions/domain/webhooks";
import { items, keys, records, type WebhookDeliveryRecord } from "#functions/store/items";
import { type DeliveryContext, processDeliveryMessage } from "#functions/webhooks/delivery";
import { createSecretOpener } from "#functions/webhooks/environment";
import { fanOut } from "#functions/webhooks/fanout";
import type { PostOutcome, WebhookPost } from "#functions/webhooks/outbound";
import type { DeliveryMessage, QueuedMessage } from "#functions/webhooks/queue";
import { defaultTimings } from "#functions/webhooks/timings";
import { domain, isLocal, seedTenant } from "#test/support/harness";
import { receiver, webhooksContext } from "#test/support/webhooks";

interface Setup {
  ctx: DeliveryContext;
  queued: QueuedMessage[];
  posts: WebhookPost[];
  delivery: WebhookDeliveryRecord;
  message: (overrides?: Partial<DeliveryMessage>) => DeliveryMessage;
  stored: () => Promise<WebhookDeliveryRecord>;
}

async function setup(
  options: { answer?: PostOutcome; delivery?: Partial<WebhookDeliveryRecord> } = {},
): Promise<Setup> {
  const tenant = await seedTenant();
  const { endpoint } = await createWebhookEndpoint(webhooksContext(), {
    organizationId: tenant.organizationId,
    url: receiver(`attempts-${randomUUID().slice(0, 8)}`).url,
    events: ["conversation.created"],
  });
  const now = Date.now();
  const delivery: WebhookDeliveryRecord = {
    deliveryId: randomUUID(),
    endpointId: endpoint.endpointId,
    organizationId: tenant.organizationId,
    eventId: `evt_${randomUUID().replaceAll("-", "").slice(0, 24)}`,
    eventType: "conversation.created",
    payload: JSON.stringify({
      type: "conversation.created",
      timestamp: new Date(now).toISOString(),
      data: {},
    }),
    createdAt: new Date(now).toISOString(),
    state: "pending",
    attemptCount: 0,
    attempts: [],
    expiresAt: Math.floor(now / 1000) + 3_600,
    ...options.delivery,
  };
  await domain().db.client.send(
    new PutCommand({ TableName: domain().db.tableName, Item: items.webhookDelivery(delivery) }),
  );
  const queued: QueuedMessage[] = [];
  const posts: WebhookPost[] = [];
  const ctx: DeliveryContext = {
    ...domain(),
    queue: {
      async send(messages) {
        queued.push(...messages);
      },
    },
    timings: { ...defaultTimings, maxInFlightPerEndpoint: 2, deferSeconds: 5 },
    openSecret: createSecretOpener(webhooksContext().secrets),
    post: async (request) => {
      posts.push(request);
      return options.answer ?? { kind: "answered", status: 200, latencyMs: 5, response: "ok" };
    },
  };
  return {
    ctx,
    queued,
    posts,
    delivery,
    message: (overrides = {}) => ({
      organizationId: delivery.organizationId,
      endpointId: delivery.endpointId,
      deliveryId: delivery.deliveryId,
      attempt: 1,
      trigger: "event",
      notBefore: now,
      queuedAt: now,
      ...overrides,
    }),
    stored: async () => {
      const { Item } = await domain().db.client.send(
        new GetCommand({
          TableName: domain().db.tableName,
          Key: keys.webhookDelivery(delivery.organizationId, delivery.endpointId, delivery.deliveryId),
          ConsistentRead: true,
        }),
      );
      return records.webhookDelivery(Item ?? {});
    },
  };
}

describe.runIf(isLocal)("a delivery attempt", () => {
  it("is made once: the same message again is dropped without a call", async () => {
    const { ctx, posts, message, stored } = await setup();
    expect(await processDeliveryMessage(ctx, message())).toBe("delivered");
    expect(await processDeliveryMessage(ctx, message())).toBe("duplicate");
    expect(posts).toHaveLength(1);
    expect(posts[0]?.headers["webhook-id"]).toBe((await stored()).eventId);
    expect((await stored()).attemptCount).toBe(1);
  });

  it("queues the next attempt before recording a failure, with the schedule's wait", async () => {
    const { ctx, queued, message, stored } = await setup({
      answer: { kind: "answered", status: 500, latencyMs: 5, response: "no" },
    });
    const before = Date.now();
    expect(await processDeliveryMessage(ctx, message())).toBe("retry_scheduled");
    const [next] = queued;
    expect(next?.message).toMatchObject({ attempt: 2, trigger: "retry" });
    expect(next?.message.notBefore).toBeGreaterThanOrEqual(before + 4_500);
    expect(next?.delaySeconds).toBeGreaterThanOrEqual(5);
    const record = await stored();
    expect(record).toMatchObject({
      state: "pending",
      attemptCount: 1,
      nextAttemptAt: next?.message.notBefore,
    });
  });

  it("waits for its predecessor: a follow-up that arrives before the previous attempt is recorded comes back", async () => {
    const { ctx, queued, posts, message } = await setup();
    expect(await processDeliveryMessage(ctx, message({ attempt: 2, trigger: "retry" }))).toBe("early");
    expect(queued).toEqual([{ message: message({ attempt: 2, trigger: "retry" }), delaySeconds: 1 }]);
    expect(posts).toEqual([]);
  });

  it("chains long waits: a message before its time goes back for the rest, at most 15 minutes a hop", async () => {
    const { ctx, queued, posts, message } = await setup();
    const hop = message({ notBefore: Date.now() + 2 * 3_600_000, attempt: 1 });
    expect(await processDeliveryMessage(ctx, hop)).toBe("hop");
    expect(queued).toEqual([{ message: hop, delaySeconds: 900 }]);
    expect(posts).toEqual([]);
  });

  it("ends without a call when the endpoint was deleted", async () => {
    const { ctx, posts, message, stored, delivery } = await setup();
    await deleteWebhookEndpoint(domain(), {
      organizationId: delivery.organizationId,
      endpointId: delivery.endpointId,
    });
    expect(await processDeliveryMessage(ctx, message())).toBe("failed");
    expect(posts).toEqual([]);
    expect(await stored()).toMatchObject({ state: "failed", failedReason: "endpoint_deleted" });
  });

  it("for a slow endpoint, waits in the queue while its attempts in flight are at the cap, and drops a duplicate of one in flight", async () => {
    const { ctx, queued, posts, message, delivery } = await setup();
    const later = Date.now() + 60_000;
    const own = `${delivery.deliveryId}#1`;
    const setLeases = (leases: Record<string, number>) =>
      domain().db.client.send(
        new UpdateCommand({
          TableName: domain().db.tableName,
          Key: keys.webhookEndpoint(delivery.organizationId, delivery.endpointId),
          UpdateExpression: "SET slowUntil = :later, leases = :leases",
          ExpressionAttributeValues: { ":later": later, ":leases": leases },
        }),
      );
    await setLeases({ "other-a#1": later, "other-b#1": later, "expired#1": Date.now() - 1 });
    expect(await processDeliveryMessage(ctx, message())).toBe("deferred");
    expect(queued[0]?.delaySeconds).toBeGreaterThanOrEqual(5);
    expect(queued[0]?.delaySeconds).toBeLessThanOrEqual(10);
    await setLeases({ [own]: later });
    expect(await processDeliveryMessage(ctx, message())).toBe("duplicate");
    expect(posts).toEqual([]);
    // With room, it takes a lease, makes the attempt and gives the lease back.
    await setLeases({ "other-a#1": later, "expired#1": Date.now() - 1 });
    expect(await processDeliveryMessage(ctx, message())).toBe("delivered");
    const { Item } = await domain().db.client.send(
      new GetCommand({
        TableName: domain().db.tableName,
        Key: keys.webhookEndpoint(delivery.organizationId, delivery.endpointId),
        ConsistentRead: true,
      }),
    );
    expect(Object.keys(records.webhookEndpoint(Item ?? {}).leases)).toEqual(["other-a#1"]);
    expect(records.webhookEndpoint(Item ?? {}).slowUntil).toBeUndefined();
  });

  it("is not repeated when the stream hands the same change over again, even after it was delivered", async () => {
    // Prepare: a conversation's insert, as its stream record tells it.
    const { ctx, queued, posts, delivery } = await setup();
    const conversation = items.conversation({
      conversationId: randomUUID(),
      organizationId: delivery.organizationId,
      chatbotId: randomUUID(),
      contactId: randomUUID(),
      status: "open",
      turns: 0,
      createdAt: new Date().toISOString(),
    });
    const change = {
      eventName: "INSERT" as const,
      keys: { PK: String(conversation.PK), SK: String(conversation.SK) },
      newImage: conversation,
      sequenceNumber: "100",
      approximateCreationMs: Date.now(),
    };
    const drain = async () => {
      while (queued.length > 0) {
        const next = queued.shift();
        if (next) await processDeliveryMessage(ctx, next.message);
      }
    };
    // Act: the batch, its retry before anything was sent, and a replay after delivery.
    await fanOut(ctx, [change]);
    await fanOut(ctx, [change]);
    await drain();
    await fanOut(ctx, [change]);
    await drain();
    // Assess
    expect(posts).toHaveLength(1);
    expect(posts[0]?.body).toContain('"type":"conversation.created"');
  });
});
