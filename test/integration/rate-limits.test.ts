/** Rate limiting (SPEC.md §8, CONTRACT.md §5): a token bucket per API key, exact under concurrency. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { updateOrganization } from "#functions/domain/organizations";
import { api, call, domain, seedTenant } from "#test/support/harness";

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
    expect(typeof detail.message).toBe("string");
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
