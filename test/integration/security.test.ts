/**
 * The shared security suite (docs/api.md "Authentication"), run against every route that takes an API key:
 * no key, another scheme, a malformed, unknown, revoked or expired key, an inactive subscription.
 * Each answer must be the documented exact body, never the gateway's own.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createApiKey, generateApiKey } from "#functions/domain/api-keys";
import { updateOrganization } from "#functions/domain/organizations";
import { call, domain, newConversation, revoke, seedTenant, type Tenant } from "#test/support/harness";

interface ProtectedRoute {
  name: string;
  request(tenant: Tenant, conversationId: string): { method: string; path: string; body?: unknown };
}

const protectedRoutes: ProtectedRoute[] = [
  {
    name: "POST /api/conversation",
    request: (tenant) => ({
      method: "POST",
      path: "/api/conversation",
      body: { chatbot_id: tenant.chatbotId },
    }),
  },
  {
    name: "POST /api/message",
    request: (_tenant, conversationId) => ({
      method: "POST",
      path: "/api/message",
      body: { conversation_id: conversationId, message: "hello" },
    }),
  },
  {
    name: "GET /api/conversation/{id}/messages",
    request: (_tenant, conversationId) => ({
      method: "GET",
      path: `/api/conversation/${conversationId}/messages`,
    }),
  },
  { name: "GET /api/me", request: () => ({ method: "GET", path: "/api/me" }) },
];

const INVALID = { detail: "Invalid API key" };

let tenant: Tenant;
let conversationId: string;
let revokedKey: string;
let expiredKey: string;
let inactiveTenant: Tenant;

beforeAll(async () => {
  tenant = await seedTenant();
  conversationId = await newConversation(tenant);
  const revokedTenant = await seedTenant();
  await revoke(revokedTenant);
  revokedKey = revokedTenant.apiKey;
  const expired = await createApiKey(domain(), {
    organizationId: tenant.organizationId,
    name: "expired",
    expiresAt: Math.floor(Date.now() / 1000) - 60,
  });
  expiredKey = expired.apiKey;
  inactiveTenant = await seedTenant();
  await updateOrganization(domain(), inactiveTenant.organizationId, { subscription: "inactive" });
});

describe.each(protectedRoutes)("security of $name", (route) => {
  const send = (authorization: string | null) => {
    const { method, path, body } = route.request(tenant, conversationId);
    return call(method, path, { authorization, ...(body === undefined ? {} : { body }) });
  };

  const expectInvalidKey = (response: Awaited<ReturnType<typeof call>>) => {
    expect(response.status).toBe(401);
    expect(response.body).toEqual(INVALID);
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
    expect(response.headers.get("x-request-id")).toBeTruthy();
    // A request with no valid key is counted against no key, so it carries no rate-limit headers.
    expect(response.headers.get("x-ratelimit-limit")).toBeNull();
  };

  it("refuses a request without Authorization", async () => {
    expectInvalidKey(await send(null));
  });

  it("refuses an empty Authorization header", async () => {
    expectInvalidKey(await send(""));
  });

  it("refuses another scheme", async () => {
    expectInvalidKey(await send(`Basic ${Buffer.from(`user:${tenant.apiKey}`).toString("base64")}`));
    expectInvalidKey(await send(tenant.apiKey));
  });

  it("refuses a malformed key", async () => {
    expectInvalidKey(await send("Bearer not-a-key"));
    // The last checksum character changed (to another one: a key may end in "x" itself).
    const other = tenant.apiKey.endsWith("x") ? "y" : "x";
    expectInvalidKey(await send(`Bearer ${tenant.apiKey.slice(0, -1)}${other}`));
  });

  it("refuses a well-formed key nobody issued", async () => {
    expectInvalidKey(await send(`Bearer ${generateApiKey()}`));
  });

  it("refuses a revoked key", async () => {
    expectInvalidKey(await send(`Bearer ${revokedKey}`));
  });

  it("refuses an expired key", async () => {
    expectInvalidKey(await send(`Bearer ${expiredKey}`));
  });

  it("accepts the Bearer scheme in any case", async () => {
    const response = await send(`bEaReR ${tenant.apiKey}`);
    expect(response.status).not.toBe(401);
    expect(response.headers.get("x-ratelimit-limit")).toBe("100");
  });

  it("answers 403 with the exact body when the subscription is not active", async () => {
    const { method, path, body } = route.request(inactiveTenant, randomUUID());
    const response = await call(method, path, {
      key: inactiveTenant.apiKey,
      ...(body === undefined ? {} : { body }),
    });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ detail: "Organization subscription is not active" });
  });
});

describe("keys follow their organization at once", () => {
  it("turns a key away as soon as the subscription ends, and back when it resumes", async () => {
    const shop = await seedTenant();
    const before = await call("GET", "/api/me", { key: shop.apiKey });
    expect(before.status).toBe(200);

    await updateOrganization(domain(), shop.organizationId, { subscription: "inactive" });
    const during = await call("GET", "/api/me", { key: shop.apiKey });
    expect(during.status).toBe(403);

    await updateOrganization(domain(), shop.organizationId, { subscription: "active" });
    const after = await call("GET", "/api/me", { key: shop.apiKey });
    expect(after.status).toBe(200);
  });

  it("refuses a key on its first request after revocation", async () => {
    const shop = await seedTenant();
    expect((await call("GET", "/api/me", { key: shop.apiKey })).status).toBe(200);
    await revoke(shop);
    expect((await call("GET", "/api/me", { key: shop.apiKey })).body).toEqual(INVALID);
  });
});
