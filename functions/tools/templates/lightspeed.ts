/**
 * Lightspeed eCom (C-Series). `GET {cluster}/{lang}/orders.json?number={number}&limit=1` with Basic
 * `api_key:api_secret`; the order is kept only if its `number` equals the input. Tracking codes come
 * from `GET {cluster}/{lang}/shipments.json?order={id}`. The product rules collect only the order
 * number here; `verifyEmail` adds the e-mail as a second factor for shops that want it.
 */
import * as z from "zod/mini";
import type { LookupResult, OrderSummary, ShipmentSummary } from "#functions/tools/result";
import {
  asObject,
  asObjects,
  compact,
  isoDate,
  type JsonObject,
  money,
  shipments,
  text,
  url,
} from "#functions/tools/summary";
import { collectFirstSentence, type LookupRequest, type LookupTemplate } from "#functions/tools/template";
import { basicAuth, endpoint, httpsBaseUrl, secretString } from "#functions/tools/templates/request";
import { emailVariable, orderNumberVariable } from "#functions/tools/templates/variables";
import { sameValue, type ToolVariable } from "#functions/tools/variables";

const configSchema = z.object({
  /** https://api.webshopapp.com (eu1) or https://api.shoplightspeed.com (us1). */
  clusterUrl: httpsBaseUrl,
  /** A language active in the shop; part of every URL. */
  language: z._default(z.string().check(z.regex(/^[a-z]{2}$/)), "en"),
  verifyEmail: z._default(z.boolean(), false),
});
const secretSchema = z.object({ apiKey: secretString, apiSecret: secretString });

export type LightspeedConfig = z.infer<typeof configSchema>;
export type LightspeedSecrets = z.infer<typeof secretSchema>;
type Request = LookupRequest<LightspeedConfig, LightspeedSecrets>;

const variablesFor = (config: LightspeedConfig): readonly ToolVariable[] =>
  config.verifyEmail ? [orderNumberVariable, emailVariable] : [orderNumberVariable];

function get(request: Request, path: string, query: Record<string, string>) {
  const { config, secrets } = request;
  return request.http({
    url: endpoint(config.clusterUrl, `/${config.language}${path}`, query),
    headers: { authorization: basicAuth(secrets.apiKey, secrets.apiSecret) },
    signal: request.signal,
    deadline: request.deadline,
  });
}

async function shipmentsOf(request: Request, order: JsonObject): Promise<ShipmentSummary[] | undefined> {
  const id = Number(order.id);
  if (!Number.isInteger(id)) return undefined;
  const response = await get(request, "/shipments.json", { order: String(id) });
  // The order is already verified; missing tracking must not hide it.
  if (response.kind !== "ok") return undefined;
  return shipments(
    asObjects(asObject(response.body)?.shipments).map((s) =>
      compact({
        carrier: text(s.carrier) ?? text(order.shipmentTitle),
        trackingNumber: text(s.trackingCode),
        trackingUrl: url(s.trackingUrl),
        status: text(s.status),
        shippedAt: isoDate(s.createdAt),
      }),
    ),
  );
}

function summarise(order: JsonObject, tracking: ShipmentSummary[] | undefined): OrderSummary {
  return compact({
    type: "order",
    reference: text(order.number) ?? "",
    status: text(order.status) ?? "unknown",
    paymentStatus: text(order.paymentStatus),
    fulfillmentStatus: text(order.shipmentStatus),
    createdAt: isoDate(order.createdAt),
    updatedAt: isoDate(order.updatedAt),
    total: money(order.priceIncl),
    shippingMethod: text(order.shipmentTitle),
    shipments: tracking,
  });
}

export const lightspeedTemplate: LookupTemplate<LightspeedConfig, LightspeedSecrets> = {
  kind: "lightspeed",
  displayName: "Lightspeed eCom",
  configSchema,
  secretSchema,
  variables: variablesFor,
  describe: (config) =>
    "Looks up one order in the Lightspeed web shop: status, payment and shipment status, total and tracking. " +
    `Use it when the visitor asks where their order is or about its status. ${collectFirstSentence(variablesFor(config))}`,
  async lookup(request): Promise<LookupResult> {
    // Lightspeed numbers are upper case ("ORD00002"); visitors often type "ord00002".
    const number = (request.variables.order_number ?? "").toUpperCase();
    const response = await get(request, "/orders.json", { number, limit: "1" });
    if (response.kind !== "ok") return response;
    const list = asObject(response.body)?.orders;
    if (!Array.isArray(list)) return { kind: "unavailable", reason: "invalid_response" };
    const order = asObjects(list).find(
      (o) =>
        sameValue("order_number", o.number, number) &&
        (!request.config.verifyEmail || sameValue("email", o.email, request.variables.email ?? "")),
    );
    if (!order) return { kind: "not_found" };
    return { kind: "found", record: summarise(order, await shipmentsOf(request, order)) };
  },
};
