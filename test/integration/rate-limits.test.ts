/** Rate limiting (docs/api.md "Rate limits"): a token bucket per API key, exact under concurrency. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { updateOrganization } from "#functions/domain/organizations";
import { api, call, domain, revoke, seedTenant } from "#test/support/harness";

const headersOf = (response: { headers: Headers }) => ({
  limit: response.headers.get("x-ratelimit-limit"),
  remaining: response.headers.get("x-ratelimit-remaining"),
  reset: response.headers.get("x-ratelimit-reset"),
});

describe("rate-limit headers", () => {
  it("are on every response to a valid key, errors included", async () => {
    const shop = await seedTenant({ rateLimit: 50 });
    const before = Math.floor(Date.now() / 1000);

    const responses = [
      await call("GET", "/api/me", { key: shop.apiKey }),
      await api.startConversation(shop.apiKey, { chatbot_id: randomUUID() }),
      await api.startConversation(shop.apiKey, {}),
      await api.sendMessage(shop.apiKey, { conversation_id: randomUUID(), message: "hi" }),
    ];

    expect(responses.map((response) => response.status)).toEqual([200, 404, 422, 404]);
    responses.forEach((response, index) => {
      const headers = headersOf(response);
      expect(headers.limit).toBe("50");
      expect(Number(headers.remaining)).toBe(49 - index);
      // Full again one interval (60 s / 50) per token used, from about now.
      expect(Number(headers.reset)).toBeGreaterThanOrEqual(before);
      expect(Number(headers.reset)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 10);
    });
  });

  it("follow a limit the operator changes", async () => {
    const shop = await seedTenant({ rateLimit: 30 });
    expect(headersOf(await call("GET", "/api/me", { key: shop.apiKey })).limit).toBe("30");

    await updateOrganization(domain(), shop.organizationId, { rateLimit: 70 });
    const after = await call("GET", "/api/me", { key: shop.apiKey });

    expect(headersOf(after).limit).toBe("70");
    expect((after.body as { rate_limit: { limit: number } }).rate_limit.limit).toBe(70);
  });
});

describe("over the limit", () => {
  it("answers 429 with the contract's body and headers", async () => {
    const shop = await seedTenant({ rateLimit: 3 });
    for (let i = 0; i < 3; i++) expect((await call("GET", "/api/me", { key: shop.apiKey })).status).toBe(200);

    const refused = await call("GET", "/api/me", { key: shop.apiKey });

    expect(refused.status).toBe(429);
    const detail = (refused.body as { detail: Record<string, unknown> }).detail;
    expect(Object.keys(detail).sort()).toEqual([
      "error",
      "limit",
      "message",
      "remaining",
      "reset",
      "retry_after",
    ]);
    expect(detail).toMatchObject({ error: "Rate limit exceeded", limit: 3, remaining: 0 });
    const wait = Number(detail.retry_after);
    expect(detail.message).toBe(
      `Too many requests: this API key allows 3 requests per minute. Retry in ${wait} ${wait === 1 ? "second" : "seconds"}.`,
    );
    // One token comes back every 20 s (60 s / 3).
    expect(detail.retry_after).toBeGreaterThanOrEqual(1);
    expect(detail.retry_after).toBeLessThanOrEqual(20);
    expect(Number.isInteger(detail.retry_after)).toBe(true);
    expect(detail.reset).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(refused.headers.get("retry-after")).toBe(String(detail.retry_after));
    expect(headersOf(refused)).toEqual({
      limit: "3",
      remaining: "0",
      reset: String(Date.parse(String(detail.reset)) / 1000),
    });
  });

  it("counts requests per key: another key of the same organization is not affected", async () => {
    const shop = await seedTenant({ rateLimit: 2 });
    const { createApiKey } = await import("#functions/domain/api-keys");
    const second = await createApiKey(domain(), { organizationId: shop.organizationId, name: "second" });
    await call("GET", "/api/me", { key: shop.apiKey });
    await call("GET", "/api/me", { key: shop.apiKey });

    expect((await call("GET", "/api/me", { key: shop.apiKey })).status).toBe(429);
    expect((await call("GET", "/api/me", { key: second.apiKey })).status).toBe(200);
  });

  it("does not charge a key for requests refused as unauthenticated", async () => {
    const shop = await seedTenant({ rateLimit: 2 });
    for (let i = 0; i < 5; i++) {
      expect((await call("GET", "/api/me", { authorization: `Bearer ${shop.apiKey}x` })).status).toBe(401);
    }
    expect(headersOf(await call("GET", "/api/me", { key: shop.apiKey })).remaining).toBe("1");
  });

  it("admits exactly the limit out of a concurrent burst against a full bucket", async () => {
    // 10 per minute: a token returns every 6 s, far longer than the burst takes.
    const limit = 10;
    const shop = await seedTenant({ rateLimit: limit });
    const started = Date.now();

    const statuses = await Promise.all(
      Array.from({ length: 40 }, () =>
        call("GET", "/api/me", { key: shop.apiKey }).then((response) => response.status),
      ),
    );

    // Exactly the limit, plus one per token refilled while the burst lasted (none locally: it
    // takes well under the 6 s a token needs; on a deployed stage cold starts may stretch it).
    const refilled = Math.floor((Date.now() - started) / 6_000);
    const admitted = statuses.filter((status) => status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(limit);
    expect(admitted).toBeLessThanOrEqual(limit + refilled);
    expect(statuses.filter((status) => status !== 200).every((status) => status === 429)).toBe(true);
  });
});

describe("rate-limit headers beyond the routes' own answers", () => {
  it("are on a 403 for an inactive organization, which takes no token", async () => {
    const shop = await seedTenant({ rateLimit: 5, subscription: "inactive" });
    const before = Math.floor(Date.now() / 1000);

    const refused = [
      await call("GET", "/api/me", { key: shop.apiKey }),
      await call("POST", "/api/conversation", { key: shop.apiKey, body: { chatbot_id: shop.chatbotId } }),
      await call("GET", "/api/nope", { key: shop.apiKey }),
    ];
    await updateOrganization(domain(), shop.organizationId, { subscription: "active" });
    const resumed = await call("GET", "/api/me", { key: shop.apiKey });

    for (const response of refused) {
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ detail: "Organization subscription is not active" });
      expect(headersOf(response).limit).toBe("5");
      expect(headersOf(response).remaining).toBe("5");
      expect(Number(headersOf(response).reset)).toBeGreaterThanOrEqual(before);
      expect(Number(headersOf(response).reset)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    }
    expect(resumed.status).toBe(200);
    expect(headersOf(resumed).remaining).toBe("4");
  });

  it("are on 404 and 405 for a valid key, which take a token like any request", async () => {
    const shop = await seedTenant({ rateLimit: 10 });

    const unknown = await call("GET", "/api/nope", { key: shop.apiKey });
    const wrongMethod = await call("POST", "/api/me", { key: shop.apiKey, body: {} });
    const outsideApi = await call("GET", "/", { key: shop.apiKey });

    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: "Not Found" });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body).toEqual({ detail: "Method Not Allowed" });
    expect(wrongMethod.headers.get("allow")).toBe("GET");
    expect(outsideApi.status).toBe(404);
    expect([unknown, wrongMethod, outsideApi].map((response) => headersOf(response))).toEqual([
      { limit: "10", remaining: "9", reset: expect.stringMatching(/^\d+$/) },
      { limit: "10", remaining: "8", reset: expect.stringMatching(/^\d+$/) },
      { limit: "10", remaining: "7", reset: expect.stringMatching(/^\d+$/) },
    ]);
  });

  it("are absent from 404 and 405 without a valid key, which keep their answers", async () => {
    const shop = await seedTenant({ rateLimit: 10 });
    await revoke(shop);
    const probes: [string, string, string | null][] = [
      ["GET", "/api/nope", null],
      ["GET", "/api/nope", "Bearer not-a-key"],
      ["GET", "/api/nope", `Bearer ${shop.apiKey}`],
      ["DELETE", "/api/message", null],
      ["DELETE", "/api/message", `Bearer ${shop.apiKey}`],
    ];

    for (const [method, path, authorization] of probes) {
      const response = await call(method, path, { authorization });
      expect(response.status).toBe(method === "GET" ? 404 : 405);
      expect(response.headers.get("x-ratelimit-limit")).toBeNull();
      expect(response.headers.get("www-authenticate")).toBeNull();
    }
  });

  it("are on /ping and /openapi.json for a valid key, which take a token but are never refused", async () => {
    const shop = await seedTenant({ rateLimit: 3 });
    const inactive = await seedTenant({ rateLimit: 4, subscription: "inactive" });

    const counted = [
      await call("GET", "/ping", { key: shop.apiKey }),
      await call("GET", "/openapi.json", { key: shop.apiKey }),
      await call("GET", "/api/me", { key: shop.apiKey }),
      // The bucket is empty now: a route would answer 429; these still answer.
      await call("GET", "/ping", { key: shop.apiKey }),
      await call("GET", "/openapi.json", { key: shop.apiKey }),
    ];
    const ofInactive = await call("GET", "/ping", { key: inactive.apiKey });

    expect(counted.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
    expect(counted.map((response) => headersOf(response))).toEqual(
      ["2", "1", "0", "0", "0"].map((remaining) => ({
        limit: "3",
        remaining,
        reset: expect.stringMatching(/^\d+$/),
      })),
    );
    expect(counted[3]?.body).toEqual({ message: "pong" });
    expect(counted[3]?.headers.get("retry-after")).toBeNull();
    expect(ofInactive.status).toBe(200);
    expect(headersOf(ofInactive)).toMatchObject({ limit: "4", remaining: "4" });
  });

  it("are absent from /ping and /openapi.json without a valid key, which are served all the same", async () => {
    const shop = await seedTenant({ rateLimit: 10 });
    await revoke(shop);

    for (const path of ["/ping", "/openapi.json"]) {
      for (const authorization of [null, "Bearer not-a-key", `Bearer ${shop.apiKey}`, "Basic abc"]) {
        const response = await call("GET", path, { authorization });
        expect(response.status).toBe(200);
        expect(response.headers.get("x-ratelimit-limit")).toBeNull();
        expect(response.headers.get("www-authenticate")).toBeNull();
        expect(response.headers.get("x-request-id")).toBeTruthy();
      }
    }
  });

  it("answers 429 on an unknown path once the key's bucket is empty", async () => {
    const shop = await seedTenant({ rateLimit: 2 });
    expect((await call("GET", "/api/nope", { key: shop.apiKey })).status).toBe(404);
    expect((await call("GET", "/api/me", { key: shop.apiKey })).status).toBe(200);

    const refused = await call("GET", "/api/nope", { key: shop.apiKey });

    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(headersOf(refused)).toMatchObject({ limit: "2", remaining: "0" });
  });
});
