/**
 * What the scripted engine says for a look-up's result, and what `tools test` shows operators as
 * its reply: plain sentences built only from the visitor-safe summary (result.ts). "Nothing
 * matches" reads the same whether the record is missing or belongs to someone else.
 */
import type { ConfiguredTool } from "#functions/tools/registry";
import type { FieldsSummary, LookupResult, OrderSummary, ShipmentSummary } from "#functions/tools/result";

/** Every question for missing details contains this (the scripted engine recognises its own question). */
export const ASKING_FOR_DETAILS = ", I need your ";

/** "your order", "your parcel", or "that" for generic tools. */
function subject(tool: ConfiguredTool): { what: string; noun: string } {
  if (tool.variables.some((v) => v.kind === "tracking_code"))
    return { what: "your parcel", noun: "a parcel" };
  if (tool.kind === "http_get") return { what: "that", noun: "a record" };
  return { what: "your order", noun: "an order" };
}

const list = (labels: readonly string[]): string =>
  labels.length <= 1 ? (labels[0] ?? "") : `${labels.slice(0, -1).join(", ")} and ${labels.at(-1)}`;

const words = (status: string): string => status.replace(/[_-]+/g, " ").trim();
const day = (iso: string | undefined): string | undefined => iso?.slice(0, 10);

function shipmentLine(shipment: ShipmentSummary): string {
  const parts = [
    shipment.carrier,
    shipment.trackingNumber ? `tracking code ${shipment.trackingNumber}` : undefined,
    shipment.status ? words(shipment.status) : undefined,
    shipment.shippedAt ? `sent ${day(shipment.shippedAt)}` : undefined,
  ].filter((part): part is string => part !== undefined && part !== "");
  const line = `Shipment: ${parts.join(", ") || "sent"}.`;
  return shipment.trackingUrl ? `${line} Track it here: ${shipment.trackingUrl}` : line;
}

function orderText(record: OrderSummary): string {
  const lines: string[] = [];
  const name = record.type === "parcel" ? "parcel" : "order";
  lines.push(
    `I found your ${name}${record.reference ? ` ${record.reference}` : ""}. Status: ${words(record.status)}.`,
  );
  const progress = [
    record.paymentStatus ? `payment ${words(record.paymentStatus)}` : undefined,
    record.fulfillmentStatus ? `fulfilment ${words(record.fulfillmentStatus)}` : undefined,
  ].filter(Boolean);
  if (progress.length > 0) lines.push(`${progress.join(", ")}.`.replace(/^./, (c) => c.toUpperCase()));
  const dates = [
    record.createdAt ? `placed on ${day(record.createdAt)}` : undefined,
    record.paidAt ? `paid on ${day(record.paidAt)}` : undefined,
    record.completedAt ? `completed on ${day(record.completedAt)}` : undefined,
    record.cancelledAt ? `cancelled on ${day(record.cancelledAt)}` : undefined,
  ].filter(Boolean);
  if (dates.length > 0) lines.push(`${dates.join(", ")}.`.replace(/^./, (c) => c.toUpperCase()));
  if (record.total)
    lines.push(`Total: ${record.total.amount}${record.total.currency ? ` ${record.total.currency}` : ""}.`);
  if (record.items) lines.push(`Items: ${record.items.map((i) => `${i.quantity} × ${i.name}`).join("; ")}.`);
  if (record.shippingMethod) lines.push(`Shipping method: ${record.shippingMethod}.`);
  for (const shipment of record.shipments ?? []) lines.push(shipmentLine(shipment));
  return lines.join("\n");
}

function fieldsText(record: FieldsSummary): string {
  const lines = Object.entries(record.fields).map(([label, value]) => `- ${words(label)}: ${String(value)}`);
  return lines.length > 0
    ? `Here is what I found:\n${lines.join("\n")}`
    : "I found a match, without details to share.";
}

export function lookupReplyText(result: LookupResult, tool: ConfiguredTool): string {
  const { what, noun } = subject(tool);
  const labels = tool.variables.map((v) => v.label);
  switch (result.kind) {
    case "found":
      return result.record.type === "record" ? fieldsText(result.record) : orderText(result.record);
    case "not_found":
      return `I couldn't find ${noun} matching the ${list(labels)} you gave. Could you check ${labels.length > 1 ? "them" : "it"} and send ${labels.length > 1 ? "them" : "it"} again?`;
    case "needs_input": {
      const wanted = [...result.invalid, ...result.missing].map((v) => v.label);
      const wrong = result.invalid.map((v) => `The ${v.label} you gave doesn't look right. `).join("");
      return `${wrong}To look up ${what}${ASKING_FOR_DETAILS}${list(wanted)}. Could you send ${wanted.length > 1 ? "them" : "it"}?`;
    }
    case "rate_limited":
      return `I can't look up ${what} right now: the system is busy. Please try again ${(result.retryAfterSeconds ?? 0) > 90 ? "later" : "in a minute"}.`;
    case "timeout":
    case "auth_failed":
    case "unavailable":
      return `I can't look up ${what} right now. Please try again later.`;
  }
}
