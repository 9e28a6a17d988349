/**
 * Picqer API v1. `GET https://{sub}.picqer.com/api/v1/orders?reference={ref}&emailaddress={email}`,
 * then (nothing matched, e.g. the shop stored "#1001" and the visitor typed "1001") the fuzzy
 * `?search={ref}`; Basic auth with the API key as user name (password ignored) and the required
 * User-Agent. Reference/orderid and e-mail are re-checked here. Tracking: `GET
 * /api/v1/picklists/{idpicklist}/shipments` for the order's first few picklists.
 */
import * as z from "zod/mini";
import type { LookupResult, OrderSummary, ShipmentSummary } from "#functions/tools/result";
import {
  asObjects,
  compact,
  isoDate,
  type JsonObject,
  lineItems,
  shipments,
  text,
  url,
} from "#functions/tools/summary";
import { collectFirstSentence, type LookupRequest, type LookupTemplate } from "#functions/tools/template";
import { basicAuth, endpoint, secretString, subdomain } from "#functions/tools/templates/request";
import { emailVariable, orderReferenceVariable } from "#functions/tools/templates/variables";
import { sameValue } from "#functions/tools/variables";

/**
 * Picqer requires an identifying User-Agent: the app's name plus a URL or e-mail to reach its
 * operator. The operator gives theirs as `contact`; without it the product name alone is sent.
 */
export const PICQER_USER_AGENT = "ChatbotConversationAPI/1.0 (order look-up tool)";
export const picqerUserAgent = (contact: string | undefined): string =>
  contact ? `ChatbotConversationAPI/1.0 (order look-up tool; ${contact})` : PICQER_USER_AGENT;
const MAX_PICKLISTS = 3;

const configSchema = z.object({
  subdomain,
  // An e-mail address or URL; no parentheses or control characters, which would break the header.
  contact: z.optional(z.string().check(z.minLength(3), z.maxLength(100), z.regex(/^[^\s()\\;]+$/))),
});
const secretSchema = z.object({ apiKey: secretString });

export type PicqerConfig = z.infer<typeof configSchema>;
export type PicqerSecrets = z.infer<typeof secretSchema>;
type Request = LookupRequest<PicqerConfig, PicqerSecrets>;

const variables = [orderReferenceVariable, emailVariable] as const;

function get(request: Request, path: string, query: Record<string, string> = {}) {
  return request.http({
    url: endpoint(`https://${request.config.subdomain}.picqer.com`, `/api/v1${path}`, query),
    headers: {
      authorization: basicAuth(request.secrets.apiKey, "X"),
      "user-agent": picqerUserAgent(request.config.contact),
    },
    signal: request.signal,
    deadline: request.deadline,
  });
}

async function shipmentsOf(request: Request, order: JsonObject): Promise<ShipmentSummary[] | undefined> {
  const ids = asObjects(order.picklists)
    .map((p) => Number(p.idpicklist))
    .filter(Number.isInteger)
    .slice(0, MAX_PICKLISTS);
  const found: ShipmentSummary[] = [];
  for (const id of ids) {
    const response = await get(request, `/picklists/${id}/shipments`);
    // The order is already verified; missing tracking must not hide it.
    if (response.kind !== "ok") break;
    for (const shipment of asObjects(response.body)) {
      if (shipment.cancelled === true) continue;
      const parcels = asObjects(shipment.parcels);
      const carrier = text(shipment.public_providername) ?? text(shipment.providername);
      const trackings = parcels.length > 0 ? parcels : [shipment];
      for (const parcel of trackings) {
        found.push(
          compact({
            carrier,
            trackingNumber:
              text(parcel.tracking_code) ?? text(parcel.trackingcode) ?? text(shipment.trackingcode),
            trackingUrl: url(parcel.tracking_url) ?? url(shipment.trackingurl) ?? url(shipment.tracktraceurl),
            shippedAt: isoDate(shipment.created),
          }),
        );
      }
    }
  }
  return shipments(found);
}

function summarise(order: JsonObject, tracking: ShipmentSummary[] | undefined): OrderSummary {
  return compact({
    type: "order",
    reference: text(order.reference) ?? text(order.orderid) ?? "",
    status: text(order.status) ?? "unknown",
    createdAt: isoDate(order.created),
    updatedAt: isoDate(order.updated),
    items: lineItems(asObjects(order.products), "name", "amount"),
    shipments: tracking,
  });
}

export const picqerTemplate: LookupTemplate<PicqerConfig, PicqerSecrets> = {
  kind: "picqer",
  displayName: "Picqer",
  configSchema,
  secretSchema,
  variables: () => variables,
  describe: () =>
    "Looks up one order in the Picqer order management system: status, dates, items and tracking. " +
    `Use it when the visitor asks where their order is or about its status or contents. ${collectFirstSentence(variables)}`,
  async lookup(request): Promise<LookupResult> {
    const reference = request.variables.order_reference ?? "";
    const email = request.variables.email ?? "";
    const matches = (o: JsonObject) =>
      (sameValue("order_reference", o.reference, reference) ||
        sameValue("order_reference", o.orderid, reference)) &&
      sameValue("email", o.emailaddress, email);
    let order: JsonObject | undefined;
    const queries: Record<string, string>[] = [{ reference, emailaddress: email }, { search: reference }];
    for (const query of queries) {
      const response = await get(request, "/orders", query);
      if (response.kind !== "ok") return response;
      if (!Array.isArray(response.body)) return { kind: "unavailable", reason: "invalid_response" };
      order = asObjects(response.body).find(matches);
      if (order) break;
    }
    if (!order) return { kind: "not_found" };
    return { kind: "found", record: summarise(order, await shipmentsOf(request, order)) };
  },
};
