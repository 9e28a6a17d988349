/**
 * WooCommerce REST v3. `GET {shop}/wp-json/wc/v3/orders?search={number}&per_page=10` with Basic
 * auth (or the documented consumer_key/consumer_secret query fallback). `search` is a fuzzy LIKE
 * over many fields, so the order is kept only if its `number` equals the input AND its
 * `billing.email` matches. Tracking comes from the optional Shipment Tracking extension.
 */
import * as z from "zod/mini";
import type { LookupResult, OrderSummary } from "#functions/tools/result";
import {
  asObject,
  asObjects,
  compact,
  isoDate,
  type JsonObject,
  lineItems,
  money,
  shipments,
  text,
  url,
} from "#functions/tools/summary";
import { collectFirstSentence, type LookupRequest, type LookupTemplate } from "#functions/tools/template";
import { basicAuth, endpoint, httpsBaseUrl, secretString } from "#functions/tools/templates/request";
import { emailVariable, orderNumberVariable } from "#functions/tools/templates/variables";
import { sameValue } from "#functions/tools/variables";

const configSchema = z.object({
  shopUrl: httpsBaseUrl,
  /** "query" for hosts that strip the Authorization header ("Consumer key is missing"). */
  authMode: z._default(z.enum(["basic", "query"]), "basic"),
  /** The shop runs the Shipment Tracking extension (`/wp-json/wc-shipment-tracking/v3`). */
  shipmentTracking: z._default(z.boolean(), false),
});
const secretSchema = z.object({ consumerKey: secretString, consumerSecret: secretString });

export type WooCommerceConfig = z.infer<typeof configSchema>;
export type WooCommerceSecrets = z.infer<typeof secretSchema>;
type Request = LookupRequest<WooCommerceConfig, WooCommerceSecrets>;

const variables = [orderNumberVariable, emailVariable] as const;

function get(request: Request, path: string, query: Record<string, string>, notFoundOn404 = false) {
  const { config, secrets } = request;
  const credentials: Record<string, string> =
    config.authMode === "query"
      ? { consumer_key: secrets.consumerKey, consumer_secret: secrets.consumerSecret }
      : {};
  const headers: Record<string, string> =
    config.authMode === "basic"
      ? { authorization: basicAuth(secrets.consumerKey, secrets.consumerSecret) }
      : {};
  return request.http({
    url: endpoint(config.shopUrl, path, { ...query, ...credentials }),
    headers,
    signal: request.signal,
    deadline: request.deadline,
    notFoundOn404,
  });
}

async function trackingOf(request: Request, orderId: number) {
  if (!request.config.shipmentTracking) return undefined;
  const response = await get(
    request,
    `/wp-json/wc-shipment-tracking/v3/orders/${orderId}/shipment-trackings`,
    {},
    true,
  );
  // The order is already verified; missing tracking must not hide it.
  if (response.kind !== "ok") return undefined;
  return shipments(
    asObjects(response.body).map((t) =>
      compact({
        carrier: text(t.tracking_provider),
        trackingNumber: text(t.tracking_number),
        trackingUrl: url(t.tracking_link),
        shippedAt: isoDate(t.date_shipped),
      }),
    ),
  );
}

function summarise(order: JsonObject, tracking: OrderSummary["shipments"]): OrderSummary {
  const shippingLine = asObjects(order.shipping_lines)[0];
  return compact({
    type: "order",
    reference: text(order.number) ?? text(order.id) ?? "",
    status: text(order.status) ?? "unknown",
    createdAt: isoDate(order.date_created),
    updatedAt: isoDate(order.date_modified),
    paidAt: isoDate(order.date_paid),
    completedAt: isoDate(order.date_completed),
    total: money(order.total, order.currency),
    items: lineItems(asObjects(order.line_items), "name", "quantity"),
    shippingMethod: text(shippingLine?.method_title),
    shipments: tracking,
  });
}

export const woocommerceTemplate: LookupTemplate<WooCommerceConfig, WooCommerceSecrets> = {
  kind: "woocommerce",
  displayName: "WooCommerce",
  configSchema,
  secretSchema,
  variables: () => variables,
  describe: (config) =>
    `Looks up one order in the web shop ${new URL(config.shopUrl).host}: status, dates, total, items and tracking. ` +
    `Use it when the visitor asks where their order is or about its status or contents. ${collectFirstSentence(variables)}`,
  async lookup(request): Promise<LookupResult> {
    const number = request.variables.order_number ?? "";
    const email = request.variables.email ?? "";
    const response = await get(request, "/wp-json/wc/v3/orders", { search: number, per_page: "10" });
    if (response.kind !== "ok") return response;
    if (!Array.isArray(response.body)) return { kind: "unavailable", reason: "invalid_response" };
    const order = asObjects(response.body).find(
      (o) =>
        sameValue("order_number", o.number ?? o.id, number) &&
        sameValue("email", asObject(o.billing)?.email, email),
    );
    if (!order) return { kind: "not_found" };
    const id = Number(order.id);
    const tracking = Number.isInteger(id) ? await trackingOf(request, id) : undefined;
    return { kind: "found", record: summarise(order, tracking) };
  },
};
