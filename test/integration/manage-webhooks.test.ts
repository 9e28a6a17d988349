/**
 * Webhook endpoints through the management API: register (the secret shown once), receive a
 * turn's events signed with it, the delivery log, redelivery, rotation (both secrets sign during
 * the overlap), change and delete; another organization's endpoints are not found.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { api, isLocal, newConversation } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  seedManagedTenant,
} from "#test/support/management";
import { bodyOf, eventually, receiver } from "#test/support/webhooks";

interface Endpoint {
  endpoint_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  previous_secret_expires_at: string | null;
  secret?: string;
}

interface Delivery {
  delivery_id: string;
  event_id: string;
  event_type: string;
  state: string;
  attempt_count: number;
  attempts: { trigger: string; status: number | null }[];
}

let home: ManagedTenant;
let other: ManagedTenant;
const as = (tenant: ManagedTenant) => ({ as: tenant.admin.token, organization: tenant.organizationId });

describe.runIf(hasIdentity && isLocal)("webhook endpoints", () => {
  beforeAll(async () => {
    [home, other] = await Promise.all([seedManagedTenant(), seedManagedTenant()]);
  });

  it("registers an endpoint whose secret signs the deliveries, shows the log, and redelivers", async () => {
    const hook = receiver(`manage-${randomUUID().slice(0, 8)}`);
    const created = await manage<Endpoint>("POST", "/manage/webhook-endpoints", {
      ...as(home),
      body: { url: hook.url, events: ["message.created"] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: hook.url, events: ["message.created"], enabled: true });
    expect(created.body.secret).toMatch(/^whsec_/);
    await hook.configure({ secrets: [created.body.secret ?? ""] });
    const listed = await manage("GET", "/manage/webhook-endpoints", {
      as: home.viewer.token,
      organization: home.organizationId,
    });
    expect(listed.text).not.toContain(created.body.secret ?? "none");

    const conversationId = await newConversation(home);
    await api.sendMessage(home.apiKey, { conversation_id: conversationId, message: "hello" });
    const received = await eventually(hook.requests, (requests) => requests.length >= 2);
    expect(received.every((request) => request.verified.every(Boolean))).toBe(true);
    expect(received.map((request) => bodyOf(request).type)).toEqual(["message.created", "message.created"]);

    const path = `/manage/webhook-endpoints/${created.body.endpoint_id}/deliveries`;
    const log = await eventually(
      async () =>
        (
          await manage<{ deliveries: Delivery[] }>("GET", path, {
            as: home.viewer.token,
            organization: home.organizationId,
          })
        ).body,
      (page) =>
        page.deliveries.length === 2 && page.deliveries.every((delivery) => delivery.state === "delivered"),
    );
    const [newest] = log.deliveries;
    expect(newest?.attempts[0]).toMatchObject({ trigger: "event", status: 200 });

    const redelivered = await manage<Delivery>("POST", `${path}/${newest?.delivery_id}/redeliver`, as(home));
    expect([redelivered.status, redelivered.body.state]).toEqual([202, "pending"]);
    const again = await eventually(hook.requests, (requests) => requests.length >= 3);
    expect(again.at(-1)?.webhookId).toBe(newest?.event_id);
    const byViewer = await manage("POST", `${path}/${newest?.delivery_id}/redeliver`, {
      as: home.viewer.token,
      organization: home.organizationId,
    });
    expect([byViewer.status, errorCode(byViewer)]).toEqual([403, "forbidden"]);
  });

  it("rotates the secret (both sign during the overlap), changes and deletes an endpoint", async () => {
    const hook = receiver(`rotate-${randomUUID().slice(0, 8)}`);
    const created = await manage<Endpoint>("POST", "/manage/webhook-endpoints", {
      ...as(home),
      body: { url: hook.url, events: ["conversation.created"] },
    });
    const id = created.body.endpoint_id;
    const rotated = await manage<Endpoint>("POST", `/manage/webhook-endpoints/${id}/rotate-secret`, as(home));
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect(rotated.body.previous_secret_expires_at).not.toBeNull();
    await hook.configure({ secrets: [created.body.secret ?? "", rotated.body.secret ?? ""] });
    await newConversation(home);
    const [delivery] = await eventually(hook.requests, (requests) => requests.length >= 1);
    expect(delivery?.verified).toEqual([true, true]);

    const disabled = await manage<Endpoint>("PATCH", `/manage/webhook-endpoints/${id}`, {
      ...as(home),
      body: { enabled: false, events: ["conversation.closed", "message.created"] },
    });
    expect(disabled.body).toMatchObject({
      enabled: false,
      events: ["conversation.closed", "message.created"],
    });
    const bad = await manage("PATCH", `/manage/webhook-endpoints/${id}`, {
      ...as(home),
      body: { url: "http://10.0.0.1/hook", events: ["message.sent"] },
    });
    expect([bad.status, errorCode(bad)]).toEqual([422, "invalid_argument"]);
    const deleted = await manage("DELETE", `/manage/webhook-endpoints/${id}`, as(home));
    expect(deleted.status).toBe(204);
    const gone = await manage("GET", `/manage/webhook-endpoints/${id}`, as(home));
    expect([gone.status, errorCode(gone)]).toEqual([404, "webhook_endpoint_not_found"]);
  });

  it("finds no endpoint of another organization", async () => {
    const theirs = await manage<Endpoint>("POST", "/manage/webhook-endpoints", {
      ...as(other),
      body: { url: receiver(`theirs-${randomUUID().slice(0, 8)}`).url, events: ["message.created"] },
    });
    const id = theirs.body.endpoint_id;
    for (const [method, suffix] of [
      ["GET", ""],
      ["PATCH", ""],
      ["DELETE", ""],
      ["POST", "/rotate-secret"],
      ["GET", "/deliveries"],
    ] as const) {
      const answer = await manage(method, `/manage/webhook-endpoints/${id}${suffix}`, {
        ...as(home),
        ...(method === "PATCH" ? { body: { enabled: false } } : {}),
      });
      expect([method, suffix, answer.status, errorCode(answer)]).toEqual([
        method,
        suffix,
        404,
        "webhook_endpoint_not_found",
      ]);
    }
    const listed = await manage<{ webhook_endpoints: Endpoint[] }>(
      "GET",
      "/manage/webhook-endpoints",
      as(home),
    );
    expect(listed.body.webhook_endpoints.map((endpoint) => endpoint.endpoint_id)).not.toContain(id);
  });
});
