/**
 * Fake Picqer API v1: `/api/v1/orders` (`reference`, `orderid`,
 * `emailaddress` exact, fuzzy `search`, `offset` in steps of 100; bare array), `/orders/{idorder}`,
 * `/api/v1/picklists/{id}/shipments`, Basic auth with the API key as user name (password ignored),
 * a required User-Agent, the `{"error":true,"error_code","error_message"}` body, and
 * `X-RateLimit-Limit/Remaining`.
 */
import type { FakeReply, LoggedRequest, PlatformFake } from "#test/fakes/platforms/fake-server";
import { basicCredentials, startFakeServer } from "#test/fakes/platforms/fake-server";

export const picqerDemo = {
  origin: "https://demo-webshop.picqer.com",
  config: { subdomain: "demo-webshop" },
  secrets: { apiKey: "pq_1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b" },
} as const;

const LIMIT = 500;
const PAGE = 100;

export const picqerOrders = [
  {
    idorder: 2509975,
    orderid: "20240123",
    reference: "#1001",
    status: "completed",
    created: "2024-03-01 10:15:02",
    updated: "2024-03-02 16:40:11",
    emailaddress: "jan@example.com",
    telephone: "0612345678",
    deliveryname: "Jan Jansen",
    deliverycontactname: "",
    deliveryaddress: "Stationsstraat 1",
    deliveryzipcode: "1012 AB",
    deliverycity: "Amsterdam",
    deliverycountry: "NL",
    invoicename: "Jan Jansen",
    customer_remarks: "",
    preferred_delivery_date: null,
    products: [
      {
        idorder_product: 1,
        idproduct: 42,
        productcode: "SKU-42",
        name: "T-shirt",
        amount: 2,
        amount_cancelled: 0,
        price: 19.95,
        weight: 200,
      },
      {
        idorder_product: 2,
        idproduct: 43,
        productcode: "SKU-43",
        name: "Cap",
        amount: 1,
        amount_cancelled: 0,
        price: 12.5,
        weight: 100,
      },
    ],
    picklists: [
      {
        idpicklist: 1896306,
        picklistid: "P2024-0456",
        status: "closed",
        totalproducts: 3,
        totalpicked: 3,
        closed_at: "2024-03-02 16:39:50",
        created: "2024-03-01 11:00:00",
        updated: "2024-03-02 16:39:50",
      },
    ],
    tags: {},
  },
  {
    idorder: 2509981,
    orderid: "20240131",
    reference: "WEB-2002",
    status: "processing",
    created: "2024-03-05 09:00:00",
    updated: "2024-03-05 09:10:00",
    emailaddress: "Lotte.Smit@Example.nl",
    telephone: "0687654321",
    deliveryname: "Lotte Smit",
    deliverycontactname: "",
    deliveryaddress: "Kerkstraat 12",
    deliveryzipcode: "3511 LK",
    deliverycity: "Utrecht",
    deliverycountry: "NL",
    invoicename: "Lotte Smit",
    customer_remarks: "Please ring twice",
    preferred_delivery_date: null,
    products: [
      {
        idorder_product: 3,
        idproduct: 44,
        productcode: "SKU-44",
        name: "Hoodie",
        amount: 1,
        amount_cancelled: 0,
        price: 49.95,
        weight: 600,
      },
    ],
    picklists: [],
    tags: {},
  },
];

const picklistShipments: Record<string, unknown[]> = {
  "1896306": [
    {
      idshipment: 889101,
      idpicklist: 1896306,
      idorder: 2509975,
      provider: "postnl",
      providername: "PostNL",
      public_providername: "PostNL",
      carrier_key: "postnl",
      trackingcode: "3SPICQ000111222",
      tracktraceurl: "https://jouw.postnl.nl/track-and-trace/3SPICQ000111222-NL-1012AB",
      trackingurl: "https://jouw.postnl.nl/track-and-trace/3SPICQ000111222-NL-1012AB",
      cancelled: false,
      created: "2024-03-02 16:40:00",
      updated: "2024-03-02 16:40:00",
      parcels: [
        {
          idparcel: 1,
          tracking_code: "3SPICQ000111222",
          tracking_url: "https://jouw.postnl.nl/track-and-trace/3SPICQ000111222-NL-1012AB",
          weight: 300,
        },
      ],
    },
  ],
};

const error = (status: number, code: number, message: string): FakeReply => ({
  status,
  body: { error: true, error_code: code, error_message: message },
});

function listOrders(query: URLSearchParams): FakeReply {
  const search = query.get("search")?.toLowerCase();
  const equals = (param: string, value: string) => {
    const wanted = query.get(param);
    return wanted === null || value === wanted;
  };
  const email = query.get("emailaddress")?.toLowerCase();
  const offset = Number(query.get("offset") ?? "0");
  const orders = picqerOrders.filter(
    (o) =>
      equals("reference", o.reference) &&
      equals("orderid", o.orderid) &&
      (email === undefined || o.emailaddress.toLowerCase() === email) &&
      (search === undefined ||
        [o.orderid, o.reference, o.deliveryname, o.invoicename].some((f) =>
          f.toLowerCase().includes(search),
        )),
  );
  return { status: 200, body: orders.slice(offset, offset + PAGE) };
}

function handle(request: LoggedRequest): FakeReply {
  if (!request.headers["user-agent"]) return error(400, 0, "A User-Agent header is required.");
  const single = /^\/api\/v1\/orders\/(\d+)$/.exec(request.path);
  const shipments = /^\/api\/v1\/picklists\/(\d+)\/shipments$/.exec(request.path);
  if (request.method !== "GET" || (request.path !== "/api/v1/orders" && !single && !shipments)) {
    return error(404, 20, "Item not found");
  }
  if (basicCredentials(request.headers)?.user !== picqerDemo.secrets.apiKey)
    return error(401, 1, "Unauthorized");
  if (single) {
    const found = picqerOrders.find((o) => o.idorder === Number(single[1]));
    return found ? { status: 200, body: found } : error(404, 20, "Item not found");
  }
  if (shipments?.[1]) {
    const list = picklistShipments[shipments[1]];
    return list ? { status: 200, body: list } : error(404, 20, "Item not found");
  }
  return listOrders(request.query);
}

export function startPicqerFake(port?: number): Promise<PlatformFake> {
  return startFakeServer(
    {
      handle,
      rateHeaders: (served) => ({
        "x-ratelimit-limit": String(LIMIT),
        "x-ratelimit-remaining": String(Math.max(0, LIMIT - served)),
      }),
      tooManyRequests: (retryAfter) => ({
        ...error(429, 28, "Rate limit exceeded"),
        headers: {
          "x-ratelimit-limit": String(LIMIT),
          "x-ratelimit-remaining": "0",
          ...(retryAfter ? { "retry-after": retryAfter } : {}),
        },
      }),
      serverError: (status) => error(status, 0, "Internal server error"),
    },
    port,
  );
}
