/** The visitor details the platform templates collect, worded once. */
import type { ToolVariable } from "#functions/tools/variables";

export const orderNumberVariable: ToolVariable = {
  name: "order_number",
  label: "order number",
  description: "The order number exactly as the visitor typed it, e.g. from their order confirmation.",
  kind: "order_number",
};

export const emailVariable: ToolVariable = {
  name: "email",
  label: "e-mail address",
  description: "The e-mail address the visitor placed the order with, exactly as they typed it.",
  kind: "email",
};

export const trackingCodeVariable: ToolVariable = {
  name: "tracking_code",
  label: "tracking code",
  description: "The parcel's tracking code (track & trace code) exactly as the visitor typed it.",
  kind: "tracking_code",
};

export const postalCodeVariable: ToolVariable = {
  name: "postal_code",
  label: "postal code",
  description: "The postal code of the delivery address, exactly as the visitor typed it.",
  kind: "postal_code",
};

export const orderReferenceVariable: ToolVariable = {
  name: "order_reference",
  label: "order reference (order number)",
  description: "The order number or reference the visitor got from the shop, exactly as they typed it.",
  kind: "order_reference",
};
