/**
 * Rate limits apply to management calls too: a bucket per API key (the organization's limit), per
 * person per organization and per operator (300 a minute), with the X-RateLimit-* headers on every
 * answer and a Format A 429 with Retry-After over the limit.
 */
import { describe, expect, it } from "vitest";
import { MANAGEMENT_RATE_LIMIT } from "#functions/domain/manage-access";
import { updateOrganization } from "#functions/domain/organizations";
import { domain } from "#test/support/harness";
import {
  addMembership,
  errorCode,
  hasIdentity,
  manage,
  seedKey,
  seedManagedTenant,
} from "#test/support/management";

describe.runIf(hasIdentity)("rate limits of the management API", () => {
  it("holds a manage key to its organization's limit: the request over it is a Format A 429", async () => {
    const tenant = await seedManagedTenant({ rateLimit: 5 });
    const { key } = await seedKey(tenant.organizationId, "manage");
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await manage("GET", "/manage/organization", { as: key }));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(answers.map((answer) => answer.headers.get("x-ratelimit-remaining"))).toEqual([
      "4",
      "3",
      "2",
      "1",
      "0",
      "0",
    ]);
    const refused = answers[5];
    expect(refused?.headers.get("x-ratelimit-limit")).toBe("5");
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused?.body).toMatchObject({
      error: { code: "rate_limited", details: { limit: 5, remaining: 0, retry_after: expect.any(Number) } },
    });
    await updateOrganization(domain(), tenant.organizationId, { rateLimit: 100 });
  });

  it("meters a 404 organization_not_found like any request: it takes a token and carries the headers", async () => {
    const [tenant, other] = await Promise.all([seedManagedTenant({ rateLimit: 5 }), seedManagedTenant()]);
    const { key } = await seedKey(tenant.organizationId, "manage");
    const answers = [];
    for (let i = 0; i < 6; i++) {
      answers.push(await manage("GET", "/manage/chatbots", { as: key, organization: other.organizationId }));
    }
    expect(answers.map((answer) => [answer.status, errorCode(answer)])).toEqual([
      ...Array.from({ length: 5 }, () => [404, "organization_not_found"]),
      [429, "rate_limited"],
    ]);
    expect(answers.map((answer) => answer.headers.get("x-ratelimit-remaining"))).toEqual([
      "4",
      "3",
      "2",
      "1",
      "0",
      "0",
    ]);
    for (const answer of answers) {
      expect(answer.headers.get("x-ratelimit-limit")).toBe("5");
      expect(Number(answer.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000 - 1);
    }

    // A person naming an organization they are not in, or none when they have several: the token
    // comes from their own bucket, and the refusal says so.
    const person = tenant.viewer;
    await addMembership(person, other.organizationId, "viewer");
    const stranger = await seedManagedTenant();
    const refusals = [
      await manage("GET", "/manage/chatbots", { as: person.token, organization: stranger.organizationId }),
      await manage("GET", "/manage/chatbots", { as: person.token }),
      await manage("GET", "/manage/organizations", { as: person.token }),
      await manage("GET", "/manage/chatbots", { as: person.token, organization: stranger.organizationId }),
    ];
    expect(refusals.map((answer) => [answer.status, errorCode(answer)])).toEqual([
      [404, "organization_not_found"],
      [422, "invalid_argument"],
      [403, "forbidden"],
      [404, "organization_not_found"],
    ]);
    const remaining = refusals.map((answer) => Number(answer.headers.get("x-ratelimit-remaining")));
    for (const answer of refusals) {
      expect(answer.headers.get("x-ratelimit-limit")).toBe(String(MANAGEMENT_RATE_LIMIT));
    }
    expect(remaining[3]).toBeLessThan(remaining[0] ?? 0);
  });

  it("gives each person a bucket per organization: a burst over it is refused, the other organization still answers", async () => {
    const [home, other] = await Promise.all([seedManagedTenant(), seedManagedTenant()]);
    await addMembership(home.admin, other.organizationId, "viewer");
    const started = Date.now();
    const statuses: number[] = [];
    const codes = new Set<string | undefined>();
    // More than the bucket holds plus what refills meanwhile (limit per minute), in bursts of 40.
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 40 }, () =>
          manage("GET", "/manage/tool-templates", {
            as: home.admin.token,
            organization: home.organizationId,
          }),
        ),
      );
      for (const answer of answers) {
        statuses.push(answer.status);
        if (answer.status !== 200) codes.add(errorCode(answer));
        expect(answer.headers.get("x-ratelimit-limit")).toBe(String(MANAGEMENT_RATE_LIMIT));
      }
    }
    const elapsedSeconds = (Date.now() - started) / 1000;
    const admitted = statuses.filter((status) => status === 200).length;
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
    expect([...codes]).toEqual(["rate_limited"]);
    expect(admitted).toBeLessThanOrEqual(
      MANAGEMENT_RATE_LIMIT + Math.ceil((elapsedSeconds * MANAGEMENT_RATE_LIMIT) / 60) + 1,
    );
    const elsewhere = await manage("GET", "/manage/tool-templates", {
      as: home.admin.token,
      organization: other.organizationId,
    });
    expect(elsewhere.status).toBe(200);
  });
});
