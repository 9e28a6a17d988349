/**
 * The generic read-only tool, pointed at the WooCommerce fake's single-order route with header
 * auth: URL template, query mapping, match (ownership) and expose (what the model may see).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { StoredTool } from "#functions/tools/registry";
import { configureTool } from "#functions/tools/registry";
import { toToolOutcome } from "#functions/tools/result";
import { type PlatformFakes, platformDemos, startPlatformFakes } from "#test/fakes/platforms/index";
import { configured, httpFor, inSeconds } from "#test/unit/tools/support/harness";

const { consumerKey, consumerSecret } = platformDemos.woocommerce.secrets;
const headerValue = Buffer.from(`${consumerKey}:${consumerSecret}`).toString("base64");

const config = {
  purpose: "Reads one order of the Acme shop. Use it when the visitor asks about an order's status.",
  urlTemplate: `${platformDemos.woocommerce.origin}/wp-json/wc/v3/orders/{order_number}`,
  query: { context: "view", lookup: "{email}" },
  variables: [
    { name: "order_number", label: "order number", description: "The order number.", kind: "order_number" },
    { name: "email", label: "e-mail address", description: "The e-mail used to order.", kind: "email" },
  ],
  auth: { headerName: "Authorization", scheme: "Basic" },
  match: { order_number: "number", email: "billing.email" },
  expose: { status: "status", total: "total", firstItem: "line_items.0.name", billing: "billing" },
};
const stored = (overrides: Record<string, unknown> = {}): StoredTool => ({
  id: "generic",
  name: "acme_order",
  kind: "http_get",
  config: { ...config, ...overrides },
});

let fakes: PlatformFakes;
beforeAll(async () => {
  fakes = await startPlatformFakes();
});
afterAll(() => fakes.stop());
beforeEach(() => fakes.reset());

const run = (variables: Record<string, string>, secrets: unknown = { headerValue }) =>
  configured(stored()).lookup({
    secrets,
    variables,
    signal: new AbortController().signal,
    deadline: inSeconds(5),
    http: httpFor(fakes),
  });

describe("generic GET tool", () => {
  it("fills the URL template and query mapping, sends the secret header, exposes only the chosen scalar fields", async () => {
    // Act
    const result = await run({ order_number: "#1001", email: "jan.jansen@example.nl" });
    // Assess
    const [request] = fakes.woocommerce.requests;
    expect(request).toMatchObject({ method: "GET", path: "/wp-json/wc/v3/orders/1001" });
    expect(Object.fromEntries(request?.query ?? [])).toEqual({
      context: "view",
      lookup: "jan.jansen@example.nl",
    });
    expect(request?.headers.authorization).toBe(`Basic ${headerValue}`);
    // `billing` is an object: never exposed, even when configured.
    expect(result).toEqual({
      kind: "found",
      record: {
        type: "record",
        fields: { status: "processing", total: "54.85", firstItem: "Linen shirt - Blue, M" },
      },
    });
  });

  it("encodes visitor values into the path so they cannot change the route", async () => {
    await run({ order_number: "1001/../../users", email: "jan.jansen@example.nl" });
    expect(fakes.woocommerce.requests).toHaveLength(0);
    await run({ order_number: "WEB/1001", email: "jan.jansen@example.nl" });
    expect(fakes.woocommerce.requests[0]?.path).toBe("/wp-json/wc/v3/orders/WEB%2F1001");
  });

  it("404 and ownership mismatch both end in the same not_found", async () => {
    const missing = await run({ order_number: "4242", email: "jan.jansen@example.nl" });
    const mismatch = await run({ order_number: "1001", email: "kees.deboer@example.com" });
    expect(missing).toEqual({ kind: "not_found" });
    expect(toToolOutcome(mismatch)).toEqual(toToolOutcome(missing));
  });

  it("without the secret it sends nothing", async () => {
    expect(await run({ order_number: "1001", email: "jan.jansen@example.nl" }, {})).toEqual({
      kind: "unavailable",
      reason: "misconfigured",
    });
    expect(fakes.woocommerce.requests).toHaveLength(0);
  });

  it.each([
    ["a placeholder in the host", { urlTemplate: "https://{order_number}.example.com/orders" }],
    ["plain http", { urlTemplate: "http://api.example.com/orders/{order_number}" }],
    [
      "a query in the template",
      { urlTemplate: "https://api.example.com/orders/{order_number}?email={email}" },
    ],
    ["credentials in the URL", { urlTemplate: "https://user:pw@api.example.com/orders/{order_number}" }],
    ["an undeclared placeholder", { urlTemplate: "https://api.example.com/orders/{order_id}" }],
    ["no ownership match", { match: {} }],
    ["credentials in a Cookie header", { auth: { headerName: "Cookie" } }],
    ["nothing exposed", { expose: {} }],
  ])("rejects a configuration with %s", (_title, overrides) => {
    expect(configureTool(stored(overrides)).ok).toBe(false);
  });
});
