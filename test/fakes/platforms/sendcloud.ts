/**
 * Fake Sendcloud API v2: `/api/v2/parcels` (`tracking_number`,
 * `order_number`, `external_reference`, `ids` equality filters; `{next, previous, parcels}`),
 * `/api/v2/parcels/{id}`, Basic `public_key:secret_key`, the `{"error":{code,request,message}}`
 * envelope, and a bare 429 (Sendcloud documents no rate headers).
 */
import type { FakeReply, LoggedRequest, PlatformFake } from "#test/fakes/platforms/fake-server";
import { basicCredentials, startFakeServer } from "#test/fakes/platforms/fake-server";

export const sendcloudDemo = {
  origin: "https://panel.sendcloud.sc",
  config: {},
  secrets: {
    publicKey: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
    secretKey: "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
  },
} as const;

const parcel = <T extends object>(fields: T) => ({
  reference: "0",
  external_reference: null,
  company_name: "",
  telephone: "+31612345678",
  country: { iso_2: "NL", iso_3: "NLD", name: "Netherlands" },
  weight: "2.000",
  is_return: false,
  collo_nr: 0,
  collo_count: 1,
  label: {},
  documents: [],
  total_order_value: "89.00",
  total_order_value_currency: "EUR",
  parcel_items: [],
  ...fields,
});

export const sendcloudParcels = [
  parcel({
    id: 3172,
    tracking_number: "3SYZXG192847563",
    status: { id: 11, message: "Delivered" },
    tracking_url:
      "https://tracking.sendcloud.sc/forward?carrier=postnl&code=3SYZXG192847563&destination=NL&lang=nl&source=NL&type=parcel&verification=5611EM",
    carrier: { code: "postnl" },
    shipment: { id: 8, name: "PostNL Standard 0-23kg" },
    date_created: "01-03-2024 21:45:30",
    date_updated: "03-03-2024 10:12:00",
    date_announced: "01-03-2024 21:47:13",
    order_number: "1002",
    name: "Anna de Vries",
    email: "anna.devries@example.nl",
    address: "Stadhuisplein 10",
    address_divided: { street: "Stadhuisplein", house_number: "10" },
    city: "Eindhoven",
    postal_code: "5611 EM",
  }),
  parcel({
    id: 3190,
    tracking_number: "JVGL0612345678901234",
    status: { id: 91, message: "Parcel en route" },
    tracking_url:
      "https://tracking.sendcloud.sc/forward?carrier=dhl&code=JVGL0612345678901234&verification=1012AB",
    carrier: { code: "dhl" },
    shipment: { id: 1305, name: "DHL Parcel Connect 0-31.5kg" },
    date_created: "10-03-2024 09:00:00",
    date_updated: "10-03-2024 17:30:00",
    date_announced: "10-03-2024 09:01:00",
    order_number: "1010",
    name: "Piet Visser",
    email: "piet.visser@example.nl",
    address: "Damstraat 2",
    address_divided: { street: "Damstraat", house_number: "2" },
    city: "Amsterdam",
    postal_code: "1012 AB",
  }),
];

const error = (status: number, request: string, message: string): FakeReply => ({
  status,
  body: { error: { code: status, request, message } },
});

function handle(request: LoggedRequest): FakeReply {
  const requestName = request.path.replace(/^\//, "");
  const single = /^\/api\/v2\/parcels\/(\d+)$/.exec(request.path);
  if (request.method !== "GET" || (request.path !== "/api/v2/parcels" && !single))
    return error(404, requestName, "Not found.");
  const basic = basicCredentials(request.headers);
  if (basic?.user !== sendcloudDemo.secrets.publicKey || basic.password !== sendcloudDemo.secrets.secretKey) {
    return error(401, "api/v2/user", "Invalid username/password.");
  }
  if (single) {
    const found = sendcloudParcels.find((p) => p.id === Number(single[1]));
    return found
      ? { status: 200, body: { parcel: found } }
      : error(404, requestName, "No Parcel matches the given query.");
  }
  const { query } = request;
  const equals = (param: string, value: unknown) => {
    const wanted = query.get(param);
    return wanted === null || String(value) === wanted;
  };
  const ids = query.get("ids")?.split(",");
  const parcels = sendcloudParcels.filter(
    (p) =>
      equals("tracking_number", p.tracking_number) &&
      equals("order_number", p.order_number) &&
      equals("external_reference", p.external_reference) &&
      (!ids || ids.includes(String(p.id))),
  );
  return { status: 200, body: { next: null, previous: null, parcels } };
}

export function startSendcloudFake(port?: number): Promise<PlatformFake> {
  return startFakeServer(
    {
      handle,
      tooManyRequests: (retryAfter) => ({
        ...error(429, "api/v2/parcels", "Request was throttled."),
        headers: retryAfter ? { "retry-after": retryAfter } : undefined,
      }),
      serverError: (status) => error(status, "api/v2/parcels", "Internal server error."),
    },
    port,
  );
}
