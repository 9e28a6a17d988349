/**
 * Webhooks through the real pipeline on the local runtime: the API writes items, the table's
 * stream feeds the fan-out (through the stream event source emulator), deliveries go through the
 * local SQS and the delivery function to receivers that verify every delivery with the reference
 * Standard Webhooks library. Timings are compressed (global-setup: retries 1–2 s apart, 3 s per
 * attempt, endpoints disabled after 6 s of failures, 2 attempts in flight per endpoint). Endpoints
 * are seeded with the domain functions the management routes will call. Every test uses its own
 * organizations and receivers.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { closeConversation } from "#functions/domain/conversations";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  redeliverWebhookDelivery,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from "#functions/domain/webhooks";
import type { AppError } from "#functions/errors";
import { type WebhookEventType, webhookEventTypes } from "#functions/webhooks/events";
import { wooDemo } from "#test/fakes/platforms/woocommerce";
import { openStream } from "#test/support/event-stream-client";
import {
  api,
  domain,
  isLocal,
  newConversation,
  runtimeLog,
  seedTenant,
  seedTool,
  type Tenant,
} from "#test/support/harness";
import {
  bodyOf,
  eventually,
  type ReceivedDelivery,
  receiver,
  type TestReceiver,
  webhooksContext,
} from "#test/support/webhooks";

const allEvents = [...webhookEventTypes];

async function endpointFor(
  tenant: Tenant,
  hook: TestReceiver,
  events: readonly WebhookEventType[] = allEvents,
): Promise<{ endpointId: string; secret: string }> {
  const created = await createWebhookEndpoint(webhooksContext(), {
    organizationId: tenant.organizationId,
    url: hook.url,
    events: [...events],
  });
  await hook.configure({ secrets: [created.secret] });
  return { endpointId: created.endpoint.endpointId, secret: created.secret };
}

const named = (prefix: string) => receiver(`${prefix}-${randomUUID().slice(0, 8)}`);
const ids = (requests: ReceivedDelivery[]) => requests.map((request) => request.webhookId);
const allVerified = (requests: ReceivedDelivery[]) =>
  requests.every((request) => request.verified.every(Boolean));

async function sendMessage(tenant: Tenant, conversationId: string, message: string): Promise<void> {
  const response = await api.sendMessage(tenant.apiKey, { conversation_id: conversationId, message });
  expect(response.status).toBe(200);
}

describe.runIf(isLocal)("webhooks", () => {
  it("delivers conversation.created, message.created (visitor and assistant) and conversation.closed, each verified", async () => {
    // Prepare
    const tenant = await seedTenant();
    const hook = named("lifecycle");
    const { endpointId, secret } = await endpointFor(tenant, hook);
    // Act
    const conversationId = await newConversation(tenant, { external_id: "crm-7" });
    await sendMessage(tenant, conversationId, "hello");
    await closeConversation(domain(), { organizationId: tenant.organizationId, conversationId });
    // Assess
    const requests = await eventually(hook.requests, (list) => list.length >= 4);
    expect(allVerified(requests)).toBe(true);
    const bodies = requests.map(bodyOf);
    expect(bodies.map((body) => body.type).sort()).toEqual([
      "conversation.closed",
      "conversation.created",
      "message.created",
      "message.created",
    ]);
    for (const body of bodies) {
      expect(body.data).toMatchObject({
        organization_id: tenant.organizationId,
        chatbot_id: tenant.chatbotId,
        conversation_id: conversationId,
      });
      expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
    }
    const created = bodies.find((body) => body.type === "conversation.created");
    expect(created?.data).toMatchObject({ external_id: "crm-7", status: "open" });
    const messages = bodies.filter((body) => body.type === "message.created");
    expect(messages.map((body) => (body.data.message as { role: string }).role).sort()).toEqual([
      "assistant",
      "user",
    ]);
    expect(
      messages.find((body) => (body.data.message as { role: string }).role === "user")?.data.message,
    ).toMatchObject({
      content: "hello",
    });
    const closed = bodies.find((body) => body.type === "conversation.closed");
    expect(closed?.data).toMatchObject({ status: "closed", previous_status: "open" });
    // Closing again changes nothing, so no second event.
    await closeConversation(domain(), { organizationId: tenant.organizationId, conversationId });
    const page = await eventually(
      () => listWebhookDeliveries(domain(), { organizationId: tenant.organizationId, endpointId }),
      (list) => list.deliveries.every((delivery) => delivery.state === "delivered"),
    );
    expect(page.deliveries).toHaveLength(4);
    expect(page.deliveries.map((delivery) => delivery.attempts[0]?.status)).toEqual([200, 200, 200, 200]);
    // Newest first.
    const times = page.deliveries.map((delivery) => delivery.deliveryId);
    expect([...times].sort().reverse()).toEqual(times);
    // Neither the secret nor the event bodies are logged.
    const log = runtimeLog();
    expect(log).toContain(endpointId);
    expect(log).not.toContain(secret.slice("whsec_".length));
    expect(log).not.toContain('"content":"hello"');
  });

  it("sends lookup.completed with tool, platform, outcome and latency, and never the looked-up data or credentials", async () => {
    // Prepare
    const tenant = await seedTenant({ chatbot: { fallbackReply: "Sorry." } });
    await seedTool(tenant, {
      kind: "woocommerce",
      name: "order_status",
      config: { ...wooDemo.config },
      credentials: { ...wooDemo.secrets },
    });
    const hook = named("lookups");
    await endpointFor(tenant, hook, ["lookup.completed"]);
    const conversationId = await newConversation(tenant);
    // Act
    await sendMessage(tenant, conversationId, "Where is my order 1001? My e-mail is jan.jansen@example.nl");
    // Assess
    const [request] = await eventually(hook.requests, (list) => list.length >= 1);
    if (!request) throw new Error("no delivery");
    expect(request.verified).toEqual([true]);
    const body = bodyOf(request);
    expect(body.type).toBe("lookup.completed");
    expect(body.data).toMatchObject({
      organization_id: tenant.organizationId,
      chatbot_id: tenant.chatbotId,
      conversation_id: conversationId,
      tool: { name: "order_status", platform: "woocommerce" },
      outcome: "found",
      cached: false,
    });
    expect(typeof body.data.latency_ms).toBe("number");
    for (const secret of [
      "jan.jansen",
      "processing",
      "Linen",
      wooDemo.secrets.consumerKey,
      wooDemo.secrets.consumerSecret,
    ]) {
      expect(request.body).not.toContain(secret);
    }
  });

  it("delivers message.created and lookup.completed for a streamed turn, as for any other turn", async () => {
    // Prepare
    const tenant = await seedTenant({ chatbot: { fallbackReply: "Sorry." } });
    await seedTool(tenant, {
      kind: "woocommerce",
      name: "order_status",
      config: { ...wooDemo.config },
      credentials: { ...wooDemo.secrets },
    });
    const hook = named("streamed");
    await endpointFor(tenant, hook, ["message.created", "lookup.completed"]);
    const conversationId = await newConversation(tenant);
    const question = "Where is my order 1001? My e-mail is jan.jansen@example.nl";
    // Act
    const streamed = await openStream({
      key: tenant.apiKey,
      body: { conversation_id: conversationId, message: question },
    });
    expect(streamed.status).toBe(200);
    const end = (await streamed.rest()).find((event) => event.event === "message.end")?.data as
      | { message_id: string; content: string }
      | undefined;
    if (!end) throw new Error("the stream did not end with the stored reply");
    // Assess: the visitor's message, the reply as streamed and stored, and the look-up it made.
    const requests = await eventually(hook.requests, (list) => new Set(ids(list)).size >= 3);
    expect(allVerified(requests)).toBe(true);
    const bodies = [...new Map(requests.map((request) => [request.webhookId, bodyOf(request)])).values()];
    expect(bodies.map((body) => body.type).sort()).toEqual([
      "lookup.completed",
      "message.created",
      "message.created",
    ]);
    for (const body of bodies) {
      expect(body.data).toMatchObject({
        organization_id: tenant.organizationId,
        chatbot_id: tenant.chatbotId,
        conversation_id: conversationId,
      });
    }
    const message = (role: string) =>
      bodies.find(
        (body) => body.type === "message.created" && (body.data.message as { role: string }).role === role,
      )?.data.message;
    expect(message("user")).toMatchObject({ content: question });
    expect(message("assistant")).toMatchObject({ message_id: end.message_id, content: end.content });
    expect(bodies.find((body) => body.type === "lookup.completed")?.data).toMatchObject({
      tool: { name: "order_status", platform: "woocommerce" },
      outcome: "found",
    });
  });

  it("retries a failing receiver with the same webhook-id until it answers 2xx, records every attempt, and redelivers on request", async () => {
    // Prepare
    const tenant = await seedTenant();
    const hook = named("flaky");
    const { endpointId } = await endpointFor(tenant, hook, ["conversation.created"]);
    await hook.configure({
      script: [
        { kind: "status", status: 500, body: "x".repeat(3000) },
        { kind: "status", status: 503, body: "busy" },
      ],
      otherwise: { kind: "status", status: 204 },
    });
    // Act
    await newConversation(tenant);
    // Assess
    const requests = await eventually(hook.requests, (list) => list.length >= 3);
    expect(new Set(ids(requests)).size).toBe(1);
    expect(allVerified(requests)).toBe(true);
    const [delivery] = (
      await eventually(
        () => listWebhookDeliveries(domain(), { organizationId: tenant.organizationId, endpointId }),
        (page) => page.deliveries[0]?.state === "delivered",
      )
    ).deliveries;
    if (!delivery) throw new Error("no delivery");
    expect(delivery.eventId).toBe(requests[0]?.webhookId);
    expect(delivery.attempts.map((attempt) => [attempt.attempt, attempt.status, attempt.trigger])).toEqual([
      [3, 204, "retry"],
      [2, 503, "retry"],
      [1, 500, "event"],
    ]);
    expect(delivery.attempts[1]?.response).toBe("busy");
    expect(delivery.attempts[2]?.response).toHaveLength(1024);
    for (const attempt of delivery.attempts) expect(attempt.latencyMs).toBeGreaterThanOrEqual(0);

    // Act: deliver it again.
    const again = await redeliverWebhookDelivery(webhooksContext(), {
      organizationId: tenant.organizationId,
      endpointId,
      deliveryId: delivery.deliveryId,
    });
    // Assess
    expect(again.state).toBe("pending");
    const after = await eventually(hook.requests, (list) => list.length >= 4);
    expect(new Set(ids(after)).size).toBe(1);
    const redelivered = await eventually(
      () => listWebhookDeliveries(domain(), { organizationId: tenant.organizationId, endpointId }),
      (page) => page.deliveries[0]?.state === "delivered" && page.deliveries[0].attemptCount === 4,
    );
    expect(redelivered.deliveries[0]?.attempts[0]).toMatchObject({
      attempt: 4,
      trigger: "manual",
      status: 204,
    });
  });

  it("counts a receiver that does not answer in time as a failure and tries again", async () => {
    // Prepare
    const tenant = await seedTenant();
    const hook = named("slowpoke");
    const { endpointId } = await endpointFor(tenant, hook, ["conversation.created"]);
    await hook.configure({ script: [{ kind: "hang" }], otherwise: { kind: "status", status: 200 } });
    // Act
    await newConversation(tenant);
    // Assess
    const page = await eventually(
      () => listWebhookDeliveries(domain(), { organizationId: tenant.organizationId, endpointId }),
      (result) => result.deliveries[0]?.state === "delivered",
    );
    expect(page.deliveries[0]?.attempts.map((attempt) => attempt.status ?? attempt.error)).toEqual([
      200,
      "timeout",
    ]);
    expect(page.deliveries[0]?.attempts[1]?.latencyMs).toBeGreaterThanOrEqual(2_900);
    const requests = await hook.requests();
    expect(new Set(ids(requests)).size).toBe(1);
  });

  it("does not follow a redirect: the 3xx is recorded as a failed attempt and the target is never called", async () => {
    // Prepare
    const tenant = await seedTenant();
    const hook = named("redirecting");
    const target = named("redirect-target");
    const { endpointId } = await endpointFor(tenant, hook, ["conversation.created"]);
    await hook.configure({
      script: [{ kind: "redirect", location: target.url }],
      otherwise: { kind: "status", status: 200 },
    });
    // Act
    await newConversation(tenant);
    // Assess
    const page = await eventually(
      () => listWebhookDeliveries(domain(), { organizationId: tenant.organizationId, endpointId }),
      (result) => result.deliveries[0]?.state === "delivered",
    );
    expect(page.deliveries[0]?.attempts.map((attempt) => attempt.status)).toEqual([200, 302]);
    expect(await target.requests()).toEqual([]);
  });

  it("signs with both secrets while a rotated secret overlaps, then with the new one only", async () => {
    // Prepare
    const tenant = await seedTenant();
    const hook = named("rotating");
    const { endpointId, secret: first } = await endpointFor(tenant, hook, ["conversation.created"]);
    const rotated = await rotateWebhookSecret(webhooksContext({ timings: { secretOverlapSeconds: 4 } }), {
      organizationId: tenant.organizationId,
      endpointId,
    });
    await hook.configure({ secrets: [first, rotated.secret] });
    expect(rotated.secret).not.toBe(first);
    expect(rotated.endpoint.previousSecretExpiresAt).toBeDefined();
    // Act
    await newConversation(tenant);
    // Assess: two signatures, each verifying on its own.
    const [during] = await eventually(hook.requests, (list) => list.length >= 1);
    expect(during?.signatures).toHaveLength(2);
    expect(during?.verified).toEqual([true, true]);

    // Act: after the overlap
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    await newConversation(tenant);
    // Assess
    const requests = await eventually(hook.requests, (list) => list.length >= 2);
    const after = requests[1];
    expect(after?.signatures).toHaveLength(1);
    expect(after?.verified).toEqual([false, true]);
    expect(
      (await getWebhookEndpoint(domain(), { organizationId: tenant.organizationId, endpointId }))
        .previousSecretExpiresAt,
    ).toBeUndefined();
  });

  it("disables an endpoint that keeps failing for the whole window, says why, and stops delivering to it", async () => {
    // Prepare
    const tenant = await seedTenant();
    const hook = named("broken");
    const { endpointId } = await endpointFor(tenant, hook, ["conversation.created"]);
    await hook.configure({ otherwise: { kind: "status", status: 500, body: "down" } });
    // Act
    await newConversation(tenant);
    // Assess
    const endpoint = await eventually(
      () => getWebhookEndpoint(domain(), { organizationId: tenant.organizationId, endpointId }),
      (view) => !view.enabled,
    );
    expect(endpoint.disabledReason).toMatch(/failing continuously since .+; the last attempt got: HTTP 500/);
    expect(endpoint.disabledAt).toBeDefined();
    const page = await eventually(
      () => listWebhookDeliveries(domain(), { organizationId: tenant.organizationId, endpointId }),
      (result) => result.deliveries[0]?.state === "failed",
    );
    expect(page.deliveries[0]?.failedReason).toBe("endpoint_disabled");
    expect(page.deliveries[0]?.attemptCount).toBeGreaterThanOrEqual(4);
    const before = (await hook.requests()).length;
    await newConversation(tenant);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await hook.requests()).length).toBe(before);

    // Act: enabling it again clears the streak.
    await hook.configure({ otherwise: { kind: "status", status: 200 } });
    const enabled = await updateWebhookEndpoint(webhooksContext(), {
      organizationId: tenant.organizationId,
      endpointId,
      enabled: true,
    });
    // Assess
    expect(enabled).toMatchObject({ enabled: true });
    expect(enabled.disabledReason).toBeUndefined();
    expect(enabled.failingSince).toBeUndefined();
    await newConversation(tenant);
    await eventually(hook.requests, (list) => list.length === before + 1);
  });

  it("keeps a fast endpoint's deliveries flowing while a slow endpoint hangs", async () => {
    // Prepare: a slow endpoint, known to be slow (its first attempt timed out), beside a fast one.
    const tenant = await seedTenant();
    const slow = named("slow");
    const fast = named("fast");
    const { endpointId: slowId } = await endpointFor(tenant, slow, ["conversation.created"]);
    await endpointFor(tenant, fast, ["conversation.created"]);
    await slow.configure({ otherwise: { kind: "hang" } });
    await newConversation(tenant);
    const marked = await eventually(
      () => getWebhookEndpoint(domain(), { organizationId: tenant.organizationId, endpointId: slowId }),
      (view) => view.slowUntil !== undefined,
    );
    expect(marked.enabled).toBe(true);
    // Act: twelve more events for both endpoints.
    await Promise.all(Array.from({ length: 12 }, () => newConversation(tenant)));
    // Assess: the fast endpoint has every event while the slow one holds only a few at a time.
    const received = await eventually(fast.requests, (list) => new Set(ids(list)).size === 13);
    const slowSoFar = await slow.requests();
    expect(allVerified(received)).toBe(true);
    expect(new Set(ids(slowSoFar)).size).toBeLessThan(13);
    expect(await slow.open()).toBeGreaterThan(0);
    expect(await slow.open()).toBeLessThanOrEqual(2);
  });

  it("gives distinct events distinct webhook-ids, and a retried event the same one", async () => {
    // Prepare
    const tenant = await seedTenant();
    const hook = named("ids");
    await endpointFor(tenant, hook, ["conversation.created", "message.created"]);
    // Act
    const conversationId = await newConversation(tenant);
    for (const text of ["one", "two", "three"]) await sendMessage(tenant, conversationId, text);
    // Assess: 1 conversation + 3 visitor messages + 3 replies = 7 events, 7 ids.
    const requests = await eventually(hook.requests, (list) => new Set(ids(list)).size >= 7);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const all = await hook.requests();
    const events = new Map<string, string>();
    for (const request of all) {
      const body = bodyOf(request);
      const key =
        body.type === "message.created"
          ? `message:${(body.data.message as { message_id: string }).message_id}`
          : `${body.type}:${body.data.conversation_id}`;
      const seen = events.get(request.webhookId);
      expect(seen === undefined || seen === key).toBe(true);
      events.set(request.webhookId, key);
    }
    expect(events.size).toBe(7);
    expect(new Set(events.values()).size).toBe(7);
    expect(requests.length).toBeGreaterThanOrEqual(7);
  });

  it("keeps endpoints and deliveries per organization: another's are not found and never get its events", async () => {
    // Prepare
    const [mine, theirs] = await Promise.all([seedTenant(), seedTenant()]);
    const myHook = named("mine");
    const theirHook = named("theirs");
    const { endpointId } = await endpointFor(mine, myHook, ["conversation.created"]);
    await endpointFor(theirs, theirHook, ["conversation.created"]);
    // Act
    await newConversation(mine);
    const [delivery] = await eventually(
      async () =>
        (await listWebhookDeliveries(domain(), { organizationId: mine.organizationId, endpointId }))
          .deliveries,
      (list) => list[0]?.state === "delivered",
    );
    // Assess
    expect(await theirHook.requests()).toEqual([]);
    const other = { organizationId: theirs.organizationId, endpointId };
    const notFound = (code: string) => expect.objectContaining({ code }) as unknown as AppError;
    await expect(getWebhookEndpoint(domain(), other)).rejects.toEqual(notFound("webhook_endpoint_not_found"));
    await expect(listWebhookDeliveries(domain(), other)).rejects.toEqual(
      notFound("webhook_endpoint_not_found"),
    );
    await expect(updateWebhookEndpoint(webhooksContext(), { ...other, enabled: false })).rejects.toEqual(
      notFound("webhook_endpoint_not_found"),
    );
    await expect(rotateWebhookSecret(webhooksContext(), other)).rejects.toEqual(
      notFound("webhook_endpoint_not_found"),
    );
    await expect(deleteWebhookEndpoint(domain(), other)).rejects.toEqual(
      notFound("webhook_endpoint_not_found"),
    );
    await expect(
      redeliverWebhookDelivery(webhooksContext(), { ...other, deliveryId: delivery?.deliveryId ?? "" }),
    ).rejects.toEqual(notFound("webhook_endpoint_not_found"));
    expect(
      (await listWebhookEndpoints(domain(), { organizationId: theirs.organizationId })).map(
        (e) => e.endpointId,
      ),
    ).not.toContain(endpointId);
  });

  it("manages endpoints: the secret only at creation, https on public addresses only, updates and deletion", async () => {
    // Prepare
    const tenant = await seedTenant();
    const ctx = webhooksContext();
    const organizationId = tenant.organizationId;
    // Act / Assess: invalid URLs and events are refused with every failing field.
    for (const url of [
      "http://example.com/hook",
      "https://127.0.0.1/hook",
      "https://10.1.2.3/hook",
      "https://169.254.169.254/latest",
      "https://user:pass@example.com/hook",
      "not a url",
    ]) {
      await expect(
        createWebhookEndpoint(ctx, { organizationId, url, events: ["message.created"] }),
      ).rejects.toMatchObject({
        code: "invalid_argument",
      });
    }
    await expect(
      createWebhookEndpoint(ctx, { organizationId, url: "http://10.0.0.1/", events: ["message.sent"] }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      detail: [
        expect.objectContaining({ loc: ["body", "url"] }),
        expect.objectContaining({ loc: ["body", "events", 0], type: "literal_error" }),
      ],
    });
    const hook = named("managed");
    const created = await createWebhookEndpoint(ctx, {
      organizationId,
      url: hook.url,
      events: ["message.created"],
    });
    expect(created.secret).toMatch(/^whsec_/);
    const listed = await listWebhookEndpoints(domain(), { organizationId });
    expect(JSON.stringify(listed)).not.toContain(created.secret.slice(6));
    expect(JSON.stringify(listed)).not.toContain("envelope");
    const updated = await updateWebhookEndpoint(ctx, {
      organizationId,
      endpointId: created.endpoint.endpointId,
      events: ["conversation.created", "conversation.closed"],
      enabled: false,
    });
    expect(updated).toMatchObject({
      events: ["conversation.created", "conversation.closed"],
      enabled: false,
    });
    await deleteWebhookEndpoint(domain(), { organizationId, endpointId: created.endpoint.endpointId });
    await expect(
      getWebhookEndpoint(domain(), { organizationId, endpointId: created.endpoint.endpointId }),
    ).rejects.toMatchObject({ code: "webhook_endpoint_not_found" });
  });
});
