/**
 * Small readers that turn untrusted platform JSON into the bounded, visitor-safe values of
 * `OrderSummary`: strings are trimmed and capped, lists are capped, dates become ISO-8601.
 */
import type { LineItem, Money, ShipmentSummary } from "#functions/tools/result";

export type JsonObject = Record<string, unknown>;

export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined;
}

export function asObjects(value: unknown): JsonObject[] {
  return Array.isArray(value)
    ? value.flatMap((item): JsonObject[] => {
        const object = asObject(item);
        return object ? [object] : [];
      })
    : [];
}

const MAX_TEXT = 200;
const MAX_ITEMS = 25;
const MAX_SHIPMENTS = 5;

/** A non-empty string (numbers become strings), capped; undefined otherwise. */
export function text(value: unknown, max = MAX_TEXT): string | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed.slice(0, max);
}

/** An http(s) URL, or undefined. */
export function url(value: unknown): string | undefined {
  const candidate = text(value, 2000);
  if (!candidate) return undefined;
  try {
    const parsed = new URL(candidate);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * ISO-8601 from the platforms' formats: ISO already (Woo, Shopify, Lightspeed), `YYYY-MM-DD HH:MM:SS`
 * (Picqer) and `DD-MM-YYYY HH:MM:SS` (Sendcloud). Zone-less inputs stay zone-less (shop-local time).
 */
export function isoDate(value: unknown): string | undefined {
  const raw = text(value, 40);
  if (!raw) return undefined;
  const dayFirst = /^(\d{2})-(\d{2})-(\d{4})[ T](\d{2}:\d{2}(?::\d{2})?)$/.exec(raw);
  if (dayFirst) return `${dayFirst[3]}-${dayFirst[2]}-${dayFirst[1]}T${dayFirst[4]}`;
  const spaced = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}(?::\d{2})?)$/.exec(raw);
  if (spaced) return `${spaced[1]}T${spaced[2]}`;
  return /^\d{4}-\d{2}-\d{2}/.test(raw) ? raw : undefined;
}

export function money(amount: unknown, currency?: unknown): Money | undefined {
  const value = typeof amount === "number" && Number.isFinite(amount) ? amount.toFixed(2) : text(amount, 32);
  if (!value || !/^-?\d+(?:\.\d+)?$/.test(value)) return undefined;
  const code = text(currency, 3);
  return code ? { amount: value, currency: code } : { amount: value };
}

export function lineItems(
  items: readonly JsonObject[],
  name: string,
  quantity: string,
): LineItem[] | undefined {
  const out = items.slice(0, MAX_ITEMS).flatMap((item) => {
    const label = text(item[name]);
    const count = Number(item[quantity]);
    return label && Number.isFinite(count) ? [{ name: label, quantity: count }] : [];
  });
  return out.length > 0 ? out : undefined;
}

export function shipments(list: readonly (ShipmentSummary | undefined)[]): ShipmentSummary[] | undefined {
  const out = list
    .filter((s): s is ShipmentSummary => s !== undefined && Object.keys(s).length > 0)
    .slice(0, MAX_SHIPMENTS);
  return out.length > 0 ? out : undefined;
}

/** Drops undefined properties so the model sees no empty keys. */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
