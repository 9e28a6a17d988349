/**
 * Fake Shopify Admin REST 2024-01: only `/admin/api/2024-01/orders.json` and
 * `/orders/{id}.json`, `X-Shopify-Access-Token`, `name` filter ("#1001" or "1001"), `status`
 * (default open: closed and cancelled orders hidden unless `status=any`), `limit` ≤ 250, unknown
 * parameters such as `email` ignored, `X-Shopify-Shop-Api-Call-Limit` and `X-Shopify-API-Version`
 * on every answer, 429 with `Retry-After: 2.0`.
 */
import type { FakeReply, LoggedRequest, PlatformFake } from "#test/fakes/platforms/fake-server";
import { startFakeServer } from "#test/fakes/platforms/fake-server";

export const shopifyDemo = {
  origin: "https://demo-webshop.myshopify.com",
  config: { shop: "demo-webshop" },
  secrets: { accessToken: "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" },
} as const;

const BUCKET = 40;

const address = (name: string, city: string, zip: string) => ({
  name,
  address1: "Main Street 1",
  city,
  zip,
  country: "United States",
  country_code: "US",
});

const order = <T extends object>(fields: T) => ({
  currency: "USD",
  phone: "+15555550100",
  cancel_reason: null,
  cancelled_at: null,
  closed_at: null,
  updated_at: "2024-01-03T09:00:00-05:00",
  shipping_lines: [{ title: "Standard Shipping", code: "standard", price: "10.00" }],
  fulfillments: [],
  refunds: [],
  ...fields,
});

export const shopifyOrders = [
  order({
    id: 450789469,
    name: "#1001",
    order_number: 1001,
    number: 1,
    email: "bob.norman@mail.example.com",
    contact_email: "bob.norman@mail.example.com",
    created_at: "2024-01-01T11:00:00-05:00",
    processed_at: "2024-01-01T11:00:00-05:00",
    financial_status: "paid",
    fulfillment_status: "fulfilled",
    total_price: "409.94",
    subtotal_price: "398.00",
    total_tax: "11.94",
    order_status_url:
      "https://demo-webshop.myshopify.com/548380009/orders/b1946ac92492d2347c6235b4d2611184/authenticate?key=imasecretipod",
    customer: { id: 207119551, email: "bob.norman@mail.example.com", first_name: "Bob", last_name: "Norman" },
    shipping_address: address("Bob Norman", "Louisville", "40202"),
    billing_address: address("Bob Norman", "Louisville", "40202"),
    line_items: [
      {
        id: 466157049,
        title: "IPod Nano - 8gb",
        variant_title: "green",
        name: "IPod Nano - 8gb - green",
        sku: "IPOD2008GREEN",
        quantity: 1,
        price: "199.00",
        fulfillment_status: "fulfilled",
      },
      {
        id: 518995019,
        title: "IPod Nano - 8gb",
        variant_title: "red",
        name: "IPod Nano - 8gb - red",
        sku: "IPOD2008RED",
        quantity: 1,
        price: "199.00",
        fulfillment_status: "fulfilled",
      },
    ],
    fulfillments: [
      {
        id: 255858046,
        name: "#1001.1",
        status: "success",
        shipment_status: "in_transit",
        created_at: "2024-01-02T08:59:11-05:00",
        updated_at: "2024-01-02T08:59:11-05:00",
        tracking_company: "USPS",
        tracking_number: "9400111899223344556677",
        tracking_numbers: ["9400111899223344556677"],
        tracking_url:
          "https://tools.usps.com/go/TrackConfirmAction_input?qtc_tLabels1=9400111899223344556677",
        tracking_urls: [
          "https://tools.usps.com/go/TrackConfirmAction_input?qtc_tLabels1=9400111899223344556677",
        ],
      },
    ],
  }),
  // Closed (archived): only visible with status=any or status=closed.
  order({
    id: 450789470,
    name: "#1002",
    order_number: 1002,
    number: 2,
    email: "",
    contact_email: null,
    created_at: "2023-12-12T10:00:00-05:00",
    processed_at: "2023-12-12T10:00:00-05:00",
    closed_at: "2023-12-20T10:00:00-05:00",
    financial_status: "paid",
    fulfillment_status: "fulfilled",
    total_price: "25.00",
    customer: {
      id: 207119552,
      email: "carol.smith@mail.example.com",
      first_name: "Carol",
      last_name: "Smith",
    },
    shipping_address: address("Carol Smith", "Boston", "02108"),
    line_items: [
      {
        id: 466157050,
        title: "Gift wrap",
        variant_title: null,
        name: "Gift wrap",
        sku: "WRAP",
        quantity: 1,
        price: "15.00",
      },
    ],
  }),
  // Cancelled: only visible with status=any or status=cancelled.
  order({
    id: 450789471,
    name: "#1003",
    order_number: 1003,
    number: 3,
    email: "dave.jones@mail.example.com",
    contact_email: "dave.jones@mail.example.com",
    created_at: "2024-01-05T10:00:00-05:00",
    processed_at: "2024-01-05T10:00:00-05:00",
    cancelled_at: "2024-01-05T12:00:00-05:00",
    cancel_reason: "customer",
    financial_status: "refunded",
    fulfillment_status: null,
    total_price: "199.00",
    customer: { id: 207119553, email: "dave.jones@mail.example.com", first_name: "Dave", last_name: "Jones" },
    shipping_address: address("Dave Jones", "Denver", "80202"),
    line_items: [
      {
        id: 466157051,
        title: "IPod Nano - 8gb",
        variant_title: "black",
        name: "IPod Nano - 8gb - black",
        sku: "IPOD2008BLACK",
        quantity: 1,
        price: "199.00",
      },
    ],
  }),
];

const errors = (status: number, message: string): FakeReply => ({ status, body: { errors: message } });

function visible(o: (typeof shopifyOrders)[number], status: string): boolean {
  if (status === "any") return true;
  if (status === "cancelled") return o.cancelled_at !== null;
  if (status === "closed") return o.closed_at !== null;
  return o.cancelled_at === null && o.closed_at === null;
}

function handle(request: LoggedRequest): FakeReply {
  if (request.method !== "GET") return errors(404, "Not Found");
  const list = request.path === "/admin/api/2024-01/orders.json";
  const single = /^\/admin\/api\/2024-01\/orders\/(\d+)\.json$/.exec(request.path);
  if (!list && !single) return errors(404, "Not Found");
  if (request.headers["x-shopify-access-token"] !== shopifyDemo.secrets.accessToken) {
    return errors(401, "[API] Invalid API key or access token (unrecognized login or wrong password)");
  }
  if (single) {
    const found = shopifyOrders.find((o) => o.id === Number(single[1]));
    return found ? { status: 200, body: { order: found } } : errors(404, "Not Found");
  }
  const { query } = request;
  const limit = Number(query.get("limit") ?? "50");
  if (!Number.isInteger(limit) || limit < 1 || limit > 250)
    return { status: 400, body: { errors: { limit: ["must be between 1 and 250"] } } };
  const status = query.get("status") ?? "open";
  const name = query.get("name");
  const wanted = name === null ? undefined : name.startsWith("#") ? name : `#${name}`;
  const orders = shopifyOrders.filter(
    (o) => visible(o, status) && (wanted === undefined || o.name === wanted),
  );
  return { status: 200, body: { orders: orders.slice(0, limit) } };
}

export function startShopifyFake(port?: number): Promise<PlatformFake> {
  return startFakeServer(
    {
      handle,
      rateHeaders: (served) => ({
        "x-shopify-shop-api-call-limit": `${Math.min(served, BUCKET)}/${BUCKET}`,
        "x-shopify-api-version": "2024-01",
      }),
      tooManyRequests: (retryAfter) => ({
        status: 429,
        body: {
          errors:
            "Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service.",
        },
        headers: {
          "retry-after": retryAfter ?? "2.0",
          "x-shopify-shop-api-call-limit": `${BUCKET}/${BUCKET}`,
        },
      }),
      serverError: (status) => errors(status, "Internal Server Error"),
    },
    port,
  );
}
