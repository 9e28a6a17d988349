/**
 * Fake WooCommerce REST v3: `/wp-json/wc/v3/orders` (fuzzy `search`, numeric
 * term also matching the ID, `per_page`/`page`, X-WP-Total headers), `/orders/{id}`, the Shipment
 * Tracking extension route, Basic auth or the consumer_key/consumer_secret query fallback, WP error
 * bodies, unknown parameters ignored, no rate headers (core has none).
 */
import {
  basicCredentials,
  type FakeReply,
  type LoggedRequest,
  type PlatformFake,
  startFakeServer,
} from "#test/fakes/platforms/fake-server";

export const wooDemo = {
  origin: "https://shop.demo-webshop.example",
  config: { shopUrl: "https://shop.demo-webshop.example" },
  secrets: {
    consumerKey: "ck_3f9a7c1e5b2d4f6a8c0e1b3d5f7a9c1e3b5d7f9a",
    consumerSecret: "cs_8e2c4a6f0b1d3e5f7a9c2e4b6d8f0a1c3e5b7d9f",
  },
} as const;

const order = <T extends object>(fields: T) => ({
  currency: "EUR",
  date_modified: "2024-03-02T09:00:00",
  date_completed: null,
  shipping_total: "4.95",
  total_tax: "0.00",
  discount_total: "0.00",
  payment_method_title: "iDEAL",
  customer_note: "",
  meta_data: [],
  refunds: [],
  ...fields,
});

export const wooOrders = [
  order({
    id: 1001,
    number: "1001",
    status: "processing",
    date_created: "2024-03-01T10:15:02",
    date_paid: "2024-03-01T10:16:40",
    total: "54.85",
    billing: {
      first_name: "Jan",
      last_name: "Jansen",
      email: "jan.jansen@example.nl",
      phone: "0612345678",
      address_1: "Damrak 1",
      city: "Amsterdam",
      postcode: "1012 LG",
      country: "NL",
    },
    shipping: {
      first_name: "Jan",
      last_name: "Jansen",
      address_1: "Damrak 1",
      city: "Amsterdam",
      postcode: "1012 LG",
      country: "NL",
    },
    line_items: [
      {
        id: 11,
        name: "Linen shirt - Blue, M",
        product_id: 93,
        variation_id: 94,
        quantity: 2,
        sku: "LS-BL-M",
        price: 24.95,
        total: "49.90",
      },
    ],
    shipping_lines: [{ id: 12, method_title: "PostNL", method_id: "flat_rate", total: "4.95" }],
  }),
  // A different customer whose number contains "1001": `search=1001` finds both.
  order({
    id: 10010,
    number: "10010",
    status: "on-hold",
    date_created: "2024-04-11T08:00:00",
    date_paid: null,
    total: "12.50",
    billing: {
      first_name: "Kees",
      last_name: "de Boer",
      email: "kees.deboer@example.com",
      postcode: "3511 AB",
      country: "NL",
    },
    shipping: {
      first_name: "Kees",
      last_name: "de Boer",
      address_1: "Oudegracht 5",
      city: "Utrecht",
      postcode: "3511 AB",
      country: "NL",
    },
    line_items: [
      {
        id: 21,
        name: "Gift card",
        product_id: 7,
        variation_id: 0,
        quantity: 1,
        sku: "GC",
        price: 12.5,
        total: "12.50",
      },
    ],
    shipping_lines: [],
  }),
  order({
    id: 1002,
    number: "1002",
    status: "completed",
    date_created: "2024-02-20T14:02:11",
    date_paid: "2024-02-20T14:03:00",
    date_completed: "2024-02-22T16:30:00",
    total: "89.00",
    billing: {
      first_name: "Anna",
      last_name: "de Vries",
      email: "anna.devries@example.nl",
      postcode: "5611 EM",
      country: "NL",
    },
    shipping: {
      first_name: "Anna",
      last_name: "de Vries",
      address_1: "Stadhuisplein 10",
      city: "Eindhoven",
      postcode: "5611 EM",
      country: "NL",
    },
    line_items: [
      {
        id: 31,
        name: "Rain jacket",
        product_id: 55,
        variation_id: 0,
        quantity: 1,
        sku: "RJ",
        price: 79,
        total: "79.00",
      },
      {
        id: 32,
        name: "Wool socks",
        product_id: 56,
        variation_id: 0,
        quantity: 2,
        sku: "WS",
        price: 5,
        total: "10.00",
      },
    ],
    shipping_lines: [{ id: 33, method_title: "DHL Parcel", method_id: "flat_rate", total: "0.00" }],
  }),
];

const trackings: Record<string, unknown[]> = {
  "1002": [
    {
      tracking_id: "a8c2f0",
      tracking_provider: "DHL Parcel",
      tracking_link: "https://www.dhlparcel.nl/nl/volg-uw-zending?tc=JVGL0612345678901234&pc=5611EM",
      tracking_number: "JVGL0612345678901234",
      date_shipped: "2024-02-21",
    },
  ],
};

const error = (status: number, code: string, message: string): FakeReply => ({
  status,
  body: { code, message, data: { status } },
});

function authenticate(request: LoggedRequest): FakeReply | undefined {
  const basic = basicCredentials(request.headers);
  const key = basic?.user ?? request.query.get("consumer_key");
  const secret = basic?.password ?? request.query.get("consumer_secret");
  if (!key) return error(401, "woocommerce_rest_cannot_view", "Sorry, you cannot list resources.");
  if (key !== wooDemo.secrets.consumerKey)
    return error(401, "woocommerce_rest_authentication_error", "Consumer key is invalid.");
  if (secret !== wooDemo.secrets.consumerSecret) {
    return error(401, "woocommerce_rest_authentication_error", "Consumer secret is invalid.");
  }
  return undefined;
}

function searchable(o: (typeof wooOrders)[number]): string[] {
  const billing = o.billing as Record<string, unknown>;
  const shipping = o.shipping as Record<string, unknown>;
  const items = (o.line_items as { name: string }[]).map((i) => i.name);
  return [
    String(o.id),
    String(o.number),
    ...Object.values(billing),
    ...Object.values(shipping),
    ...items,
  ].map((v) => String(v).toLowerCase());
}

function listOrders(query: URLSearchParams): FakeReply {
  const perPage = Number(query.get("per_page") ?? "10");
  const page = Number(query.get("page") ?? "1");
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100) {
    return {
      status: 400,
      body: {
        code: "rest_invalid_param",
        message: "Invalid parameter(s): per_page",
        data: {
          status: 400,
          params: { per_page: "per_page must be between 1 (inclusive) and 100 (inclusive)" },
        },
      },
    };
  }
  const term = (query.get("search") ?? "").toLowerCase();
  const statuses = query.getAll("status").flatMap((s) => s.split(","));
  const matches = wooOrders.filter(
    (o) =>
      (term === "" ||
        (/^\d+$/.test(term) && o.id === Number(term)) ||
        searchable(o).some((field) => field.includes(term))) &&
      (statuses.length === 0 || statuses.includes("any") || statuses.includes(String(o.status))),
  );
  const pages = Math.max(1, Math.ceil(matches.length / perPage));
  return {
    status: 200,
    body: matches.slice((page - 1) * perPage, page * perPage),
    headers: { "x-wp-total": String(matches.length), "x-wp-totalpages": String(pages) },
  };
}

function handle(request: LoggedRequest): FakeReply {
  const noRoute = error(404, "rest_no_route", "No route was found matching the URL and request method.");
  if (request.method !== "GET") return noRoute;
  if (request.path === "/wp-json/wc/v3/orders") return authenticate(request) ?? listOrders(request.query);
  const single = /^\/wp-json\/wc\/v3\/orders\/(\d+)$/.exec(request.path);
  if (single) {
    const denied = authenticate(request);
    if (denied) return denied;
    const found = wooOrders.find((o) => o.id === Number(single[1]));
    return found
      ? { status: 200, body: found }
      : error(404, "woocommerce_rest_shop_order_invalid_id", "Invalid ID.");
  }
  const tracking = /^\/wp-json\/wc-shipment-tracking\/v3\/orders\/(\d+)\/shipment-trackings$/.exec(
    request.path,
  );
  if (tracking?.[1]) {
    const denied = authenticate(request);
    if (denied) return denied;
    if (!wooOrders.some((o) => o.id === Number(tracking[1]))) {
      return error(404, "woocommerce_rest_order_invalid_id", "Order ID is invalid.");
    }
    return { status: 200, body: trackings[tracking[1]] ?? [] };
  }
  return noRoute;
}

export function startWooCommerceFake(port?: number): Promise<PlatformFake> {
  return startFakeServer(
    {
      handle,
      // Core has no limiter; a host or WAF may still answer 429.
      tooManyRequests: (retryAfter) => ({
        status: 429,
        body: { code: "rest_too_many_requests", message: "Too many requests.", data: { status: 429 } },
        headers: retryAfter ? { "retry-after": retryAfter } : undefined,
      }),
      serverError: (status) =>
        error(status, "internal_server_error", "There has been a critical error on this website."),
    },
    port,
  );
}
