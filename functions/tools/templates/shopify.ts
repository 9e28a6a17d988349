/**
 * Shopify Admin REST 2024-01. `GET https://{shop}.myshopify.com/admin/api/2024-01/orders.json
 * ?name=%23{number}&status=any&limit=5` with `X-Shopify-Access-Token`. `status=any` because closed
 * and cancelled orders are hidden otherwise; `email` is not a filter (Shopify ignores it and returns
 * other customers' orders), so the e-mail is compared here against `email`, `contact_email` or
 * `customer.email`, and the order `name` must equal "#{number}".
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
import { collectFirstSentence, type LookupTemplate } from "#functions/tools/template";
import { endpoint, secretString, subdomain } from "#functions/tools/templates/request";
import { emailVariable, orderNumberVariable } from "#functions/tools/templates/variables";
import { sameValue } from "#functions/tools/variables";

const configSchema = z.object({
  /** "acme" for acme.myshopify.com. */
  shop: subdomain,
  apiVersion: z._default(z.literal("2024-01"), "2024-01"),
});
const secretSchema = z.object({ accessToken: secretString });

export type ShopifyConfig = z.infer<typeof configSchema>;
export type ShopifySecrets = z.infer<typeof secretSchema>;

const variables = [orderNumberVariable, emailVariable] as const;

function ownedBy(order: JsonObject, email: string): boolean {
  return [order.email, order.contact_email, asObject(order.customer)?.email].some((candidate) =>
    sameValue("email", candidate, email),
  );
}

function summarise(order: JsonObject): OrderSummary {
  const shippingLine = asObjects(order.shipping_lines)[0];
  const cancelledAt = isoDate(order.cancelled_at);
  return compact({
    type: "order",
    reference: text(order.name) ?? text(order.order_number) ?? "",
    status: cancelledAt ? "cancelled" : text(order.closed_at) ? "closed" : "open",
    paymentStatus: text(order.financial_status),
    fulfillmentStatus: text(order.fulfillment_status) ?? "unfulfilled",
    createdAt: isoDate(order.created_at),
    updatedAt: isoDate(order.updated_at),
    completedAt: isoDate(order.closed_at),
    cancelledAt,
    total: money(order.total_price, order.currency),
    items: lineItems(asObjects(order.line_items), "name", "quantity"),
    shippingMethod: text(shippingLine?.title),
    shipments: shipments(
      asObjects(order.fulfillments).map((f) =>
        compact({
          carrier: text(f.tracking_company),
          trackingNumber: text(f.tracking_number),
          trackingUrl: url(f.tracking_url),
          status: text(f.shipment_status) ?? text(f.status),
          shippedAt: isoDate(f.created_at),
        }),
      ),
    ),
  });
}

export const shopifyTemplate: LookupTemplate<ShopifyConfig, ShopifySecrets> = {
  kind: "shopify",
  displayName: "Shopify",
  configSchema,
  secretSchema,
  variables: () => variables,
  describe: (config) =>
    `Looks up one order in the Shopify shop ${config.shop}: status, payment, fulfilment, total, items and tracking. ` +
    `Use it when the visitor asks where their order is or about its status or contents. ${collectFirstSentence(variables)}`,
  async lookup({ config, secrets, variables: values, signal, deadline, http }): Promise<LookupResult> {
    const number = values.order_number ?? "";
    const email = values.email ?? "";
    const response = await http({
      url: endpoint(`https://${config.shop}.myshopify.com`, `/admin/api/${config.apiVersion}/orders.json`, {
        name: `#${number}`,
        status: "any",
        limit: "5",
      }),
      headers: { "x-shopify-access-token": secrets.accessToken },
      signal,
      deadline,
    });
    if (response.kind !== "ok") return response;
    const list = asObject(response.body)?.orders;
    if (!Array.isArray(list)) return { kind: "unavailable", reason: "invalid_response" };
    const order = asObjects(list).find((o) => sameValue("order_number", o.name, number) && ownedBy(o, email));
    return order ? { kind: "found", record: summarise(order) } : { kind: "not_found" };
  },
};
