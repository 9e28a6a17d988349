/**
 * Sendcloud API v2 parcels. `GET https://panel.sendcloud.sc/api/v2/parcels?tracking_number={code}`
 * with Basic `public_key:secret_key`. There is no postal-code filter, so a parcel is kept only if its
 * tracking number matches and its `postal_code` equals the visitor's, ignoring spaces and case.
 */
import * as z from "zod/mini";
import type { LookupResult, OrderSummary } from "#functions/tools/result";
import {
  asObject,
  asObjects,
  compact,
  isoDate,
  type JsonObject,
  shipments,
  text,
  url,
} from "#functions/tools/summary";
import { collectFirstSentence, type LookupTemplate } from "#functions/tools/template";
import { basicAuth, endpoint, secretString } from "#functions/tools/templates/request";
import { postalCodeVariable, trackingCodeVariable } from "#functions/tools/templates/variables";
import { sameValue } from "#functions/tools/variables";

export const SENDCLOUD_API = "https://panel.sendcloud.sc";

const configSchema = z.object({});
const secretSchema = z.object({ publicKey: secretString, secretKey: secretString });

export type SendcloudConfig = z.infer<typeof configSchema>;
export type SendcloudSecrets = z.infer<typeof secretSchema>;

const variables = [trackingCodeVariable, postalCodeVariable] as const;

function summarise(parcel: JsonObject): OrderSummary {
  const status = asObject(parcel.status);
  return compact({
    type: "parcel",
    reference: text(parcel.tracking_number) ?? "",
    status: text(status?.message) ?? "unknown",
    createdAt: isoDate(parcel.date_created),
    updatedAt: isoDate(parcel.date_updated),
    shippingMethod: text(asObject(parcel.shipment)?.name),
    shipments: shipments([
      compact({
        carrier: text(asObject(parcel.carrier)?.code),
        trackingNumber: text(parcel.tracking_number),
        trackingUrl: url(parcel.tracking_url),
        status: text(status?.message),
        shippedAt: isoDate(parcel.date_announced),
      }),
    ]),
  });
}

export const sendcloudTemplate: LookupTemplate<SendcloudConfig, SendcloudSecrets> = {
  kind: "sendcloud",
  displayName: "Sendcloud",
  configSchema,
  secretSchema,
  variables: () => variables,
  describe: () =>
    "Looks up one parcel shipped with Sendcloud: delivery status, carrier, shipping method and tracking link. " +
    `Use it when the visitor asks where their parcel or delivery is. ${collectFirstSentence(variables)}`,
  async lookup({ secrets, variables: values, signal, deadline, http }): Promise<LookupResult> {
    const code = values.tracking_code ?? "";
    const postalCode = values.postal_code ?? "";
    const response = await http({
      url: endpoint(SENDCLOUD_API, "/api/v2/parcels", { tracking_number: code }),
      headers: { authorization: basicAuth(secrets.publicKey, secrets.secretKey) },
      signal,
      deadline,
    });
    if (response.kind !== "ok") return response;
    const list = asObject(response.body)?.parcels;
    if (!Array.isArray(list)) return { kind: "unavailable", reason: "invalid_response" };
    const parcel = asObjects(list).find(
      (p) =>
        sameValue("tracking_code", p.tracking_number, code) &&
        sameValue("postal_code", p.postal_code, postalCode),
    );
    return parcel ? { kind: "found", record: summarise(parcel) } : { kind: "not_found" };
  },
};
