/**
 * Fake Lightspeed eCom C-Series: `/{lang}/orders.json` (`number`, `limit` ≤
 * 250, `page`), `/{lang}/orders/{id}.json`, `/{lang}/shipments.json?order={id}`, Basic
 * `api_key:api_secret`, the `{"error":{code,method,request,message}}` envelope, and the
 * three-window `X-RateLimit-*` headers (5 min / hour / day).
 */
import type { FakeReply, LoggedRequest, PlatformFake } from "#test/fakes/platforms/fake-server";
import { basicCredentials, startFakeServer } from "#test/fakes/platforms/fake-server";

export const lightspeedDemo = {
  origin: "https://api.webshopapp.com",
  config: { clusterUrl: "https://api.webshopapp.com", language: "nl" },
  secrets: { apiKey: "7f3e1a9c5b2d8e4f6a0c1b3d5e7f9a2c", apiSecret: "d4b6f8a0c2e4b6d8f0a2c4e6b8d0f2a4" },
} as const;

const LANGUAGES = new Set(["nl", "en"]);
const LIMITS = [300, 3000, 12000] as const;
const RESETS = [300, 3600, 86400] as const;

const resource = (url: string) => ({
  resource: { id: false, url, link: `https://api.webshopapp.com/nl/${url}` },
});

export const lightspeedOrders = [
  {
    id: 123,
    number: "ORD00002",
    createdAt: "2025-09-17T19:12:38+00:00",
    updatedAt: "2025-09-18T08:01:00+00:00",
    status: "completed_shipped",
    paymentStatus: "paid",
    shipmentStatus: "shipped",
    priceIncl: 59.95,
    priceExcl: 49.55,
    email: "sanne.bakker@example.nl",
    firstname: "Sanne",
    lastname: "Bakker",
    phone: "0201234567",
    addressShippingName: "Sanne Bakker",
    addressShippingStreet: "Prinsengracht",
    addressShippingNumber: "263",
    addressShippingZipcode: "1016 GV",
    addressShippingCity: "Amsterdam",
    addressShippingCountry: { id: 150, code: "nl", code3: "nld", title: "Netherlands" },
    shipmentTitle: "PostNL",
    shipmentPriceIncl: 4.95,
    paymentTitle: "iDEAL",
    shippingDate: null,
    deliveryDate: null,
    language: { code: "nl", locale: "nl_NL" },
    shipments: resource("shipments?order=123"),
    products: resource("orders/123/products"),
  },
  {
    id: 124,
    number: "ORD00003",
    createdAt: "2025-09-20T10:00:00+00:00",
    updatedAt: "2025-09-20T10:05:00+00:00",
    status: "processing_awaiting_shipment",
    paymentStatus: "paid",
    shipmentStatus: "not_shipped",
    priceIncl: 24.5,
    priceExcl: 20.25,
    email: "tom.peeters@example.be",
    firstname: "Tom",
    lastname: "Peeters",
    addressShippingZipcode: "2000",
    addressShippingCity: "Antwerpen",
    addressShippingCountry: { id: 21, code: "be", code3: "bel", title: "Belgium" },
    shipmentTitle: "bpost",
    shippingDate: null,
    deliveryDate: null,
    language: { code: "nl", locale: "nl_BE" },
    shipments: resource("shipments?order=124"),
    products: resource("orders/124/products"),
  },
];

const lightspeedShipments = [
  {
    id: 901,
    number: "SHIP00002",
    status: "shipped",
    trackingCode: "3SABCD0123456789",
    order: 123,
    createdAt: "2025-09-18T08:00:00+00:00",
  },
];

const error = (status: number, request: LoggedRequest, message: string): FakeReply => ({
  status,
  body: { error: { code: status, method: request.method, request: request.path, message } },
});

function handle(request: LoggedRequest): FakeReply {
  const route = /^\/([a-z]{2})\/(orders|shipments)(?:\/(\d+))?\.json$/.exec(request.path);
  if (request.method !== "GET" || !route || !LANGUAGES.has(route[1] ?? ""))
    return error(404, request, "Not found.");
  const basic = basicCredentials(request.headers);
  if (basic?.user !== lightspeedDemo.secrets.apiKey || basic.password !== lightspeedDemo.secrets.apiSecret) {
    return error(401, request, "Could not authenticate you.");
  }
  const { query } = request;
  const limit = Number(query.get("limit") ?? "50");
  const page = Number(query.get("page") ?? "1");
  if (!Number.isInteger(limit) || limit < 1 || limit > 250) return error(400, request, "Invalid limit.");
  const pageOf = <T>(items: T[]) => items.slice((page - 1) * limit, page * limit);
  const id = route[3];
  if (route[2] === "orders") {
    if (id) {
      const found = lightspeedOrders.find((o) => o.id === Number(id));
      return found ? { status: 200, body: { order: found } } : error(404, request, "Not found.");
    }
    const number = query.get("number");
    return {
      status: 200,
      body: { orders: pageOf(lightspeedOrders.filter((o) => number === null || o.number === number)) },
    };
  }
  const orderId = query.get("order");
  return {
    status: 200,
    body: {
      shipments: pageOf(lightspeedShipments.filter((s) => orderId === null || s.order === Number(orderId))),
    },
  };
}

export function startLightspeedFake(port?: number): Promise<PlatformFake> {
  return startFakeServer(
    {
      handle,
      rateHeaders: (served) => ({
        "x-ratelimit-limit": LIMITS.join("/"),
        "x-ratelimit-remaining": LIMITS.map((l) => Math.max(0, l - served)).join("/"),
        "x-ratelimit-reset": RESETS.join("/"),
      }),
      tooManyRequests: (retryAfter) => ({
        status: 429,
        body: {
          error: { code: 429, method: "GET", request: "/nl/orders.json", message: "Too many requests." },
        },
        headers: {
          "x-ratelimit-limit": LIMITS.join("/"),
          "x-ratelimit-remaining": "0/2950/11950",
          "x-ratelimit-reset": "42/1800/50000",
          ...(retryAfter ? { "retry-after": retryAfter } : {}),
        },
      }),
      serverError: (status) => ({
        status,
        body: {
          error: {
            code: status,
            method: "GET",
            request: "/nl/orders.json",
            message: "Internal server error.",
          },
        },
      }),
    },
    port,
  );
}
