/**
 * What a look-up can end in, and what the model is shown for each ending.
 *
 * The model-facing content is deliberately small: a found record carries only the visitor-safe
 * summary below (status, dates, total, items as name × quantity, shipments), never names,
 * addresses, phone numbers or other customers' data. "Not found" and "found but the e-mail/postal
 * code does not match" are the same result kind, so they cannot be told apart downstream.
 * Failures carry closed enums only: no URLs, messages or headers that could hold credentials.
 */
import type { ToolOutcome } from "#functions/agent/engine";
import type { InvalidVariable, MissingVariable } from "#functions/tools/variables";

export interface Money {
  /** Decimal string as the platform gives it ("29.35"). */
  amount: string;
  currency?: string;
}

export interface LineItem {
  name: string;
  quantity: number;
}

export interface ShipmentSummary {
  carrier?: string;
  trackingNumber?: string;
  trackingUrl?: string;
  status?: string;
  shippedAt?: string;
}

/** A visitor's own order (shops) or parcel (Sendcloud). Dates are ISO-8601 as far as the platform allows. */
export interface OrderSummary {
  type: "order" | "parcel";
  /** Order number or tracking code, as the platform writes it. */
  reference: string;
  /** The platform's own status word (e.g. "processing", "completed_shipped", "Delivered"). */
  status: string;
  paymentStatus?: string;
  fulfillmentStatus?: string;
  createdAt?: string;
  updatedAt?: string;
  paidAt?: string;
  completedAt?: string;
  cancelledAt?: string;
  total?: Money;
  items?: LineItem[];
  shippingMethod?: string;
  shipments?: ShipmentSummary[];
}

/** The generic GET tool: only the fields the tool's configuration exposes. */
export interface FieldsSummary {
  type: "record";
  fields: Record<string, string | number | boolean | null>;
}

export type FoundRecord = OrderSummary | FieldsSummary;

export type UnavailableReason =
  | "network"
  | "server_error"
  | "unexpected_status"
  | "invalid_response"
  | "too_large"
  | "redirect"
  | "blocked_host"
  | "misconfigured"
  | "call_limit";

export type LookupFailure =
  | { kind: "not_found" }
  | { kind: "auth_failed" }
  | { kind: "rate_limited"; retryAfterSeconds?: number }
  | { kind: "timeout" }
  | { kind: "unavailable"; reason: UnavailableReason };

export type LookupResult =
  | { kind: "found"; record: FoundRecord }
  | { kind: "needs_input"; missing: MissingVariable[]; invalid: InvalidVariable[] }
  | LookupFailure;

const joinLabels = (labels: readonly string[]): string =>
  labels.length <= 1 ? (labels[0] ?? "") : `${labels.slice(0, -1).join(", ")} and ${labels.at(-1)}`;

/** The content the model sees. Never includes anything not listed in this function. */
export function toToolOutcome(result: LookupResult): ToolOutcome {
  switch (result.kind) {
    case "found":
      return {
        status: "success",
        content: {
          result: "found",
          record: result.record,
          instructions:
            "This record matches every detail the visitor gave. Answer their question from it; do not invent details that are not here.",
        },
      };
    case "not_found":
      return {
        status: "success",
        content: {
          result: "not_found",
          instructions:
            "Nothing matches the combination of details given. Ask the visitor to check them and try again. Do not say or suggest whether a record with one of these details exists.",
        },
      };
    case "needs_input": {
      const labels = [...result.invalid, ...result.missing].map((v) => v.label);
      return {
        status: "error",
        content: {
          result: "needs_input",
          missing: result.missing.map(({ name, label, reason }) => ({ name, label, reason })),
          invalid: result.invalid.map(({ name, label }) => ({ name, label })),
          instructions: `No look-up was made. Ask the visitor for their ${joinLabels(labels)}. Use only values the visitor typed in this conversation; never guess or reuse examples.`,
        },
      };
    }
    case "rate_limited":
      return {
        status: "error",
        content: {
          result: "rate_limited",
          ...(result.retryAfterSeconds === undefined
            ? {}
            : { retryAfterSeconds: Math.ceil(result.retryAfterSeconds) }),
          instructions:
            "The system is busy right now. Apologise and ask the visitor to try again in a little while.",
        },
      };
    case "timeout":
      return {
        status: "error",
        content: {
          result: "timeout",
          instructions:
            "The system did not answer in time. Apologise and ask the visitor to try again later.",
        },
      };
    case "auth_failed":
    case "unavailable":
      return {
        status: "error",
        content: {
          result: "unavailable",
          instructions:
            "The look-up is unavailable right now. Apologise, do not guess the answer, and offer other help.",
        },
      };
  }
}
