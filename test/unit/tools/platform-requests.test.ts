/**
 * The requests each template actually sends (method, path, query, auth), as each platform's
 * API documentation describes them, and the platform quirks the templates must handle.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { HttpGet, HttpGetRequest } from "#functions/tools/http-get";
import { PICQER_USER_AGENT } from "#functions/tools/templates/picqer";
import type { LoggedRequest } from "#test/fakes/platforms/index";
import { type PlatformFakes, platformDemos, startPlatformFakes } from "#test/fakes/platforms/index";
import { demoTool, httpFor, lookup } from "#test/unit/tools/support/harness";

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const query = (request: LoggedRequest | undefined) => Object.fromEntries(request?.query ?? []);

let fakes: PlatformFakes;
let http: HttpGet;
/** The URLs templates asked for, before the fakes' origin override. */
let asked: URL[];

beforeAll(async () => {
  fakes = await startPlatformFakes();
  const inner = httpFor(fakes);
  http = (request: HttpGetRequest) => {
    asked.push(new URL(request.url));
    return inner(request);
  };
});
afterAll(() => fakes.stop());
beforeEach(() => {
  fakes.reset();
  asked = [];
});

describe("WooCommerce", () => {
  const { consumerKey, consumerSecret } = platformDemos.woocommerce.secrets;

  it("GET {shop}/wp-json/wc/v3/orders?search={number}&per_page=10 with Basic consumer key:secret", async () => {
    // Act
    await lookup({
      tool: demoTool("woocommerce"),
      variables: { order_number: "1001", email: "jan.jansen@example.nl" },
      http,
    });
    // Assess
    const [request] = fakes.woocommerce.requests;
    expect(asked[0]?.origin).toBe("https://shop.demo-webshop.example");
    expect(request).toMatchObject({ method: "GET", path: "/wp-json/wc/v3/orders" });
    expect(query(request)).toEqual({ search: "1001", per_page: "10" });
    expect(request?.headers.authorization).toBe(basic(consumerKey, consumerSecret));
  });

  it("keeps the shop's sub-folder in the URL", async () => {
    const tool = demoTool("woocommerce", { shopUrl: "https://shop.demo-webshop.example/winkel/" });
    await lookup({ tool, variables: { order_number: "1001", email: "jan.jansen@example.nl" }, http });
    expect(asked[0]?.pathname).toBe("/winkel/wp-json/wc/v3/orders");
  });

  it("uses the query-parameter fallback when configured, without an Authorization header", async () => {
    // Act
    const result = await lookup({
      tool: demoTool("woocommerce", { authMode: "query" }),
      variables: { order_number: "1001", email: "jan.jansen@example.nl" },
      http,
    });
    // Assess
    const [request] = fakes.woocommerce.requests;
    expect(result.kind).toBe("found");
    expect(request?.headers.authorization).toBeUndefined();
    expect(query(request)).toMatchObject({ consumer_key: consumerKey, consumer_secret: consumerSecret });
  });

  it("never trusts the fuzzy search: 10010 is not 1001, whoever owns it", async () => {
    // Act: search=1001 returns orders 1001 and 10010; the e-mail belongs to 10010's customer.
    const result = await lookup({
      tool: demoTool("woocommerce"),
      variables: { order_number: "1001", email: "kees.deboer@example.com" },
      http,
    });
    // Assess
    expect(result).toEqual({ kind: "not_found" });
  });

  it("reads tracking from the Shipment Tracking extension when the shop has it", async () => {
    // Act
    const result = await lookup({
      tool: demoTool("woocommerce", { shipmentTracking: true }),
      variables: { order_number: "1002", email: "anna.devries@example.nl" },
      http,
    });
    // Assess
    expect(fakes.woocommerce.requests.map((r) => r.path)).toEqual([
      "/wp-json/wc/v3/orders",
      "/wp-json/wc-shipment-tracking/v3/orders/1002/shipment-trackings",
    ]);
    expect(result).toMatchObject({
      kind: "found",
      record: {
        status: "completed",
        completedAt: "2024-02-22T16:30:00",
        shipments: [
          { carrier: "DHL Parcel", trackingNumber: "JVGL0612345678901234", shippedAt: "2024-02-21" },
        ],
      },
    });
  });
});

describe("Shopify", () => {
  const variables = { order_number: "1001", email: "bob.norman@mail.example.com" };

  it("GET https://{shop}.myshopify.com/admin/api/2024-01/orders.json?name=%231001&status=any&limit=5 with the token header", async () => {
    // Act
    await lookup({ tool: demoTool("shopify"), variables, http });
    // Assess
    const [request] = fakes.shopify.requests;
    expect(asked[0]?.origin).toBe("https://demo-webshop.myshopify.com");
    expect(asked[0]?.search).toBe("?name=%231001&status=any&limit=5");
    expect(request).toMatchObject({ method: "GET", path: "/admin/api/2024-01/orders.json" });
    expect(query(request)).toEqual({ name: "#1001", status: "any", limit: "5" });
    expect(request?.headers["x-shopify-access-token"]).toBe(platformDemos.shopify.secrets.accessToken);
    expect(request?.headers.authorization).toBeUndefined();
  });

  it("finds closed and cancelled orders (status=any), checking the customer's e-mail", async () => {
    // Act
    const closed = await lookup({
      tool: demoTool("shopify"),
      variables: { order_number: "#1002", email: "carol.smith@mail.example.com" },
      http,
    });
    const cancelled = await lookup({
      tool: demoTool("shopify"),
      variables: { order_number: "1003", email: "dave.jones@mail.example.com" },
      http,
    });
    // Assess
    expect(closed).toMatchObject({ kind: "found", record: { reference: "#1002", status: "closed" } });
    expect(cancelled).toMatchObject({
      kind: "found",
      record: {
        reference: "#1003",
        status: "cancelled",
        cancelledAt: "2024-01-05T12:00:00-05:00",
        paymentStatus: "refunded",
      },
    });
  });

  it("the fake, like Shopify, ignores email= and hides closed orders without status=any", async () => {
    // Prepare
    const url = new URL("/admin/api/2024-01/orders.json?email=nobody@example.com", fakes.shopify.baseUrl);
    const headers = { "x-shopify-access-token": platformDemos.shopify.secrets.accessToken };
    // Act
    const response = await fetch(url, { headers });
    const body = (await response.json()) as { orders: { name: string }[] };
    // Assess
    expect(body.orders.map((o) => o.name)).toEqual(["#1001"]);
    expect(response.headers.get("x-shopify-shop-api-call-limit")).toBe("1/40");
    expect(response.headers.get("x-shopify-api-version")).toBe("2024-01");
  });

  it("answers 429 with Shopify's Retry-After: 2.0 and a full call bucket, read as rate_limited", async () => {
    // Prepare
    fakes.shopify.script({ kind: "rate_limited" });
    // Act
    const result = await lookup({
      tool: demoTool("shopify"),
      variables,
      http: httpFor(fakes, { maxRetryWaitMs: 0 }),
    });
    // Assess
    expect(result).toEqual({ kind: "rate_limited", retryAfterSeconds: 2 });
  });

  it("waits once for a short Retry-After that fits in the turn, then answers", async () => {
    // Prepare
    fakes.shopify.script({ kind: "rate_limited", retryAfter: "0.3" });
    // Act
    const started = Date.now();
    const result = await lookup({ tool: demoTool("shopify"), variables, http });
    // Assess
    expect(result.kind).toBe("found");
    expect(fakes.shopify.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });
});

describe("Lightspeed eCom", () => {
  const { apiKey, apiSecret } = platformDemos.lightspeed.secrets;

  it("GET {cluster}/{lang}/orders.json?number={n}&limit=1 with Basic key:secret, then shipments.json?order={id}", async () => {
    // Act
    const result = await lookup({
      tool: demoTool("lightspeed"),
      variables: { order_number: "ORD00002" },
      http,
    });
    // Assess
    const [orders, shipments] = fakes.lightspeed.requests;
    expect(asked[0]?.origin).toBe("https://api.webshopapp.com");
    expect(orders).toMatchObject({ method: "GET", path: "/nl/orders.json" });
    expect(query(orders)).toEqual({ number: "ORD00002", limit: "1" });
    expect(orders?.headers.authorization).toBe(basic(apiKey, apiSecret));
    expect(shipments).toMatchObject({ method: "GET", path: "/nl/shipments.json" });
    expect(query(shipments)).toEqual({ order: "123" });
    expect(result.kind).toBe("found");
  });

  it("collects only the order number unless the shop asks for e-mail verification", () => {
    expect(demoTool("lightspeed").variables.map((v) => v.name)).toEqual(["order_number"]);
    expect(demoTool("lightspeed", { verifyEmail: true }).variables.map((v) => v.name)).toEqual([
      "order_number",
      "email",
    ]);
  });

  it("still answers with the order when the shipments call is rate limited", async () => {
    fakes.lightspeed.script({ kind: "slow", delayMs: 0 }, { kind: "rate_limited", retryAfter: "60" });
    const result = await lookup({
      tool: demoTool("lightspeed"),
      variables: { order_number: "ORD00002" },
      http,
    });
    expect(result).toMatchObject({ kind: "found", record: { reference: "ORD00002" } });
    expect(result.kind === "found" && "shipments" in result.record).toBe(false);
  });

  it("a language the shop does not serve is a broken setup, not 'not found'", async () => {
    const result = await lookup({
      tool: demoTool("lightspeed", { language: "fr" }),
      variables: { order_number: "ORD00002" },
      http,
    });
    expect(result).toEqual({ kind: "unavailable", reason: "unexpected_status" });
  });
});

describe("Sendcloud", () => {
  it("GET https://panel.sendcloud.sc/api/v2/parcels?tracking_number={code} with Basic public:secret", async () => {
    // Act
    await lookup({
      tool: demoTool("sendcloud"),
      variables: { tracking_code: "3SYZXG192847563", postal_code: "5611 EM" },
      http,
    });
    // Assess
    const [request] = fakes.sendcloud.requests;
    const { publicKey, secretKey } = platformDemos.sendcloud.secrets;
    expect(asked[0]?.origin).toBe("https://panel.sendcloud.sc");
    expect(request).toMatchObject({ method: "GET", path: "/api/v2/parcels" });
    expect(query(request)).toEqual({ tracking_number: "3SYZXG192847563" });
    expect(request?.headers.authorization).toBe(basic(publicKey, secretKey));
  });
});

describe("Picqer", () => {
  it("GET /api/v1/orders?reference=&emailaddress=, falls back to ?search=, then reads picklist shipments", async () => {
    // Act
    const result = await lookup({
      tool: demoTool("picqer"),
      variables: { order_reference: "1001", email: "jan@example.com" },
      http,
    });
    // Assess
    const requests = fakes.picqer.requests;
    expect(asked[0]?.origin).toBe("https://demo-webshop.picqer.com");
    expect(requests.map((r) => [r.method, r.path, query(r)])).toEqual([
      ["GET", "/api/v1/orders", { reference: "1001", emailaddress: "jan@example.com" }],
      ["GET", "/api/v1/orders", { search: "1001" }],
      ["GET", "/api/v1/picklists/1896306/shipments", {}],
    ]);
    for (const request of requests) {
      expect(request.headers.authorization).toBe(basic(platformDemos.picqer.secrets.apiKey, "X"));
      expect(request.headers["user-agent"]).toBe(PICQER_USER_AGENT);
    }
    expect(result.kind).toBe("found");
  });

  it("names the operator's contact in the User-Agent when one is configured", async () => {
    await lookup({
      tool: demoTool("picqer", { contact: "support@demo-webshop.example" }),
      variables: { order_reference: "WEB-2002", email: "lotte.smit@example.nl" },
      http,
    });
    const agents = fakes.picqer.requests.map((request) => request.headers["user-agent"]);
    expect(agents.length).toBeGreaterThan(0);
    for (const agent of agents)
      expect(agent).toBe("ChatbotConversationAPI/1.0 (order look-up tool; support@demo-webshop.example)");
  });

  it("stops after the first request when reference and e-mail match directly (e-mail case-insensitive)", async () => {
    const result = await lookup({
      tool: demoTool("picqer"),
      variables: { order_reference: "WEB-2002", email: "lotte.smit@example.nl" },
      http,
    });
    expect(result).toMatchObject({
      kind: "found",
      record: { reference: "WEB-2002", status: "processing", items: [{ name: "Hoodie", quantity: 1 }] },
    });
    expect(fakes.picqer.requests).toHaveLength(1);
  });

  it("the fuzzy fallback cannot reveal another customer's order", async () => {
    // search=20240 would match both orders' orderid; neither reference nor e-mail fit.
    const result = await lookup({
      tool: demoTool("picqer"),
      variables: { order_reference: "20240", email: "jan@example.com" },
      http,
    });
    expect(result).toEqual({ kind: "not_found" });
  });
});
