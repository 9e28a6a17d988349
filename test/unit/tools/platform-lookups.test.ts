/**
 * The same six endings for every platform, against its fake: found (right fields read), not found,
 * second factor mismatch (indistinguishable from not found), bad credentials, 429 with
 * Retry-After, time-out; plus 5xx. Also: no credential or personal data in anything produced.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHttpGet } from "#functions/tools/http-get";
import { type OrderSummary, toToolOutcome } from "#functions/tools/result";
import {
  type PlatformFakes,
  type PlatformName,
  platformDemos,
  startPlatformFakes,
} from "#test/fakes/platforms/index";
import { allDemoSecrets, demoTool, httpFor, lookup } from "#test/unit/tools/support/harness";

interface PlatformCase {
  platform: PlatformName;
  config?: Record<string, unknown>;
  found: { variables: Record<string, string>; record: Partial<OrderSummary> };
  unknown: Record<string, string>;
  mismatch: Record<string, string>;
  badSecrets: Record<string, string>;
  /** Personal data of the seeded records that must never reach the model. */
  personal: string[];
}

const cases: PlatformCase[] = [
  {
    platform: "woocommerce",
    found: {
      variables: { order_number: "1001", email: "JAN.JANSEN@example.nl" },
      record: {
        type: "order",
        reference: "1001",
        status: "processing",
        createdAt: "2024-03-01T10:15:02",
        paidAt: "2024-03-01T10:16:40",
        total: { amount: "54.85", currency: "EUR" },
        items: [{ name: "Linen shirt - Blue, M", quantity: 2 }],
        shippingMethod: "PostNL",
      },
    },
    unknown: { order_number: "4242", email: "jan.jansen@example.nl" },
    mismatch: { order_number: "1001", email: "kees.deboer@example.com" },
    badSecrets: { ...platformDemos.woocommerce.secrets, consumerSecret: "cs_wrong" },
    personal: ["Jansen", "Damrak", "0612345678", "1012 LG", "jan.jansen"],
  },
  {
    platform: "shopify",
    found: {
      variables: { order_number: "1001", email: "Bob.Norman@mail.example.com" },
      record: {
        type: "order",
        reference: "#1001",
        status: "open",
        paymentStatus: "paid",
        fulfillmentStatus: "fulfilled",
        createdAt: "2024-01-01T11:00:00-05:00",
        total: { amount: "409.94", currency: "USD" },
        items: [
          { name: "IPod Nano - 8gb - green", quantity: 1 },
          { name: "IPod Nano - 8gb - red", quantity: 1 },
        ],
        shippingMethod: "Standard Shipping",
        shipments: [
          {
            carrier: "USPS",
            trackingNumber: "9400111899223344556677",
            trackingUrl:
              "https://tools.usps.com/go/TrackConfirmAction_input?qtc_tLabels1=9400111899223344556677",
            status: "in_transit",
            shippedAt: "2024-01-02T08:59:11-05:00",
          },
        ],
      },
    },
    unknown: { order_number: "9999", email: "bob.norman@mail.example.com" },
    mismatch: { order_number: "1001", email: "dave.jones@mail.example.com" },
    badSecrets: { accessToken: "shpat_00000000000000000000000000000000" },
    personal: ["Norman", "Louisville", "+15555550100", "bob.norman", "authenticate?key"],
  },
  {
    platform: "lightspeed",
    config: { verifyEmail: true },
    found: {
      variables: { order_number: "ord00002", email: "sanne.bakker@example.nl" },
      record: {
        type: "order",
        reference: "ORD00002",
        status: "completed_shipped",
        paymentStatus: "paid",
        fulfillmentStatus: "shipped",
        createdAt: "2025-09-17T19:12:38+00:00",
        total: { amount: "59.95" },
        shippingMethod: "PostNL",
        shipments: [
          {
            carrier: "PostNL",
            trackingNumber: "3SABCD0123456789",
            status: "shipped",
            shippedAt: "2025-09-18T08:00:00+00:00",
          },
        ],
      },
    },
    unknown: { order_number: "ORD09999", email: "sanne.bakker@example.nl" },
    mismatch: { order_number: "ORD00002", email: "tom.peeters@example.be" },
    badSecrets: { ...platformDemos.lightspeed.secrets, apiSecret: "wrong" },
    personal: ["Bakker", "Prinsengracht", "0201234567", "1016 GV", "sanne.bakker"],
  },
  {
    platform: "sendcloud",
    found: {
      variables: { tracking_code: "3SYZXG192847563", postal_code: "5611em" },
      record: {
        type: "parcel",
        reference: "3SYZXG192847563",
        status: "Delivered",
        createdAt: "2024-03-01T21:45:30",
        updatedAt: "2024-03-03T10:12:00",
        shippingMethod: "PostNL Standard 0-23kg",
        shipments: [
          {
            carrier: "postnl",
            trackingNumber: "3SYZXG192847563",
            trackingUrl:
              "https://tracking.sendcloud.sc/forward?carrier=postnl&code=3SYZXG192847563&destination=NL&lang=nl&source=NL&type=parcel&verification=5611EM",
            status: "Delivered",
            shippedAt: "2024-03-01T21:47:13",
          },
        ],
      },
    },
    unknown: { tracking_code: "3SXXXX000000000", postal_code: "5611 EM" },
    mismatch: { tracking_code: "3SYZXG192847563", postal_code: "1012 AB" },
    badSecrets: { ...platformDemos.sendcloud.secrets, secretKey: "wrong" },
    personal: ["de Vries", "Stadhuisplein", "+31612345678", "anna.devries"],
  },
  {
    platform: "picqer",
    found: {
      variables: { order_reference: "1001", email: "Jan@Example.com" },
      record: {
        type: "order",
        reference: "#1001",
        status: "completed",
        createdAt: "2024-03-01T10:15:02",
        updatedAt: "2024-03-02T16:40:11",
        items: [
          { name: "T-shirt", quantity: 2 },
          { name: "Cap", quantity: 1 },
        ],
        shipments: [
          {
            carrier: "PostNL",
            trackingNumber: "3SPICQ000111222",
            trackingUrl: "https://jouw.postnl.nl/track-and-trace/3SPICQ000111222-NL-1012AB",
            shippedAt: "2024-03-02T16:40:00",
          },
        ],
      },
    },
    unknown: { order_reference: "7777", email: "jan@example.com" },
    mismatch: { order_reference: "WEB-2002", email: "jan@example.com" },
    badSecrets: { apiKey: "pq_wrong" },
    personal: ["Jansen", "Stationsstraat", "0612345678", "Please ring twice", "jan@example.com"],
  },
];

describe.each(cases)("$platform look-up", (c) => {
  let fakes: PlatformFakes;
  const produced: unknown[] = [];

  beforeAll(async () => {
    fakes = await startPlatformFakes();
  });
  afterAll(async () => {
    await fakes.stop();
    // Credentials never appear in anything a look-up produced, whatever the ending.
    const everything = JSON.stringify(produced);
    for (const secret of allDemoSecrets) expect(everything).not.toContain(secret);
  });
  beforeEach(() => fakes.reset());

  const run = async (
    variables: Record<string, string>,
    options: { secrets?: unknown; timeoutMs?: number } = {},
  ) => {
    const http = options.timeoutMs
      ? httpFor(fakes, { requestTimeoutMs: options.timeoutMs, maxRetryWaitMs: 0 })
      : httpFor(fakes, { maxRetryWaitMs: 0 });
    const result = await lookup({
      tool: demoTool(c.platform, c.config),
      variables,
      http,
      secrets: options.secrets,
    });
    produced.push(result, toToolOutcome(result));
    return result;
  };

  it("found: reads the documented fields into the visitor-safe summary", async () => {
    // Act
    const result = await run(c.found.variables);
    // Assess
    expect(result).toEqual({ kind: "found", record: expect.objectContaining(c.found.record) });
    const shown = JSON.stringify(toToolOutcome(result));
    for (const fragment of c.personal) expect(shown).not.toContain(fragment);
  });

  it("not found: an unknown number gives not_found", async () => {
    expect(await run(c.unknown)).toEqual({ kind: "not_found" });
    expect(fakes[c.platform].requests.length).toBeGreaterThan(0);
  });

  it("ownership: an existing record with someone else's second factor is indistinguishable from not found", async () => {
    // Act
    const mismatch = await run(c.mismatch);
    const unknown = await run(c.unknown);
    // Assess
    expect(mismatch).toEqual({ kind: "not_found" });
    expect(toToolOutcome(mismatch)).toEqual(toToolOutcome(unknown));
  });

  it("bad credentials: auth_failed, and the model is not told why", async () => {
    const result = await run(c.found.variables, { secrets: c.badSecrets });
    expect(result).toEqual({ kind: "auth_failed" });
    expect(toToolOutcome(result).content.result).toBe("unavailable");
  });

  it("429 with Retry-After: rate_limited with the wait, no retry past the limit", async () => {
    // Prepare
    fakes[c.platform].script({ kind: "rate_limited", retryAfter: "7" });
    // Act
    const result = await run(c.found.variables);
    // Assess
    expect(result).toEqual({ kind: "rate_limited", retryAfterSeconds: 7 });
    expect(fakes[c.platform].requests).toHaveLength(1);
  });

  it("time-out: a slow platform ends in timeout", async () => {
    // Prepare
    fakes[c.platform].script({ kind: "slow", delayMs: 2_000 });
    const started = Date.now();
    // Act
    const result = await run(c.found.variables, { timeoutMs: 150 });
    // Assess
    expect(result).toEqual({ kind: "timeout" });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("5xx: unavailable", async () => {
    fakes[c.platform].script({ kind: "server_error", status: 503 });
    expect(await run(c.found.variables)).toEqual({ kind: "unavailable", reason: "server_error" });
  });

  it("secrets that do not fit the template: misconfigured, nothing sent", async () => {
    expect(await run(c.found.variables, { secrets: { unexpected: true } })).toEqual({
      kind: "unavailable",
      reason: "misconfigured",
    });
    expect(fakes[c.platform].requests).toHaveLength(0);
  });
});

describe("platform fakes as configured in production", () => {
  it("are refused by the default client (private addresses), so tests cannot reach them by accident", async () => {
    // Prepare
    const fakes = await startPlatformFakes();
    const http = createHttpGet({ originOverrides: fakes.originOverrides });
    // Act
    const result = await lookup({
      tool: demoTool("shopify"),
      variables: cases[1]?.found.variables ?? {},
      http,
    });
    await fakes.stop();
    // Assess
    expect(result).toEqual({ kind: "unavailable", reason: "blocked_host" });
    expect(fakes.shopify.requests).toHaveLength(0);
  });
});
