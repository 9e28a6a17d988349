/**
 * Reads the rate-limit signals the platforms send, so a look-up can report how long to wait instead
 * of hammering a shop: `Retry-After` (seconds, possibly fractional, or an HTTP date), Shopify's
 * `X-Shopify-Shop-Api-Call-Limit: used/bucket`, Lightspeed's slash-separated `X-RateLimit-*`
 * windows (5 min / hour / day) and Picqer's single-valued `X-RateLimit-*`.
 */

export interface RateLimitWindow {
  limit: number;
  remaining: number;
  /** Seconds until this window resets, when the platform says. */
  resetSeconds?: number;
}

export interface RateLimitInfo {
  windows: RateLimitWindow[];
}

const numbers = (value: string | null): number[] | undefined => {
  if (value === null) return undefined;
  const parts = value.split("/").map((part) => Number(part.trim()));
  return parts.length > 0 && parts.every((n) => Number.isFinite(n) && n >= 0) ? parts : undefined;
};

export function parseRateLimit(headers: Headers): RateLimitInfo | undefined {
  const shopify = numbers(headers.get("x-shopify-shop-api-call-limit"));
  if (shopify && shopify.length === 2) {
    const [used = 0, bucket = 0] = shopify;
    return { windows: [{ limit: bucket, remaining: Math.max(0, bucket - used) }] };
  }
  const limits = numbers(headers.get("x-ratelimit-limit"));
  const remaining = numbers(headers.get("x-ratelimit-remaining"));
  if (!limits || !remaining || limits.length !== remaining.length) return undefined;
  const resets = numbers(headers.get("x-ratelimit-reset"));
  return {
    windows: limits.map((limit, i) => {
      const reset = resets && resets.length === limits.length ? resets[i] : undefined;
      return { limit, remaining: remaining[i] ?? 0, ...(reset === undefined ? {} : { resetSeconds: reset }) };
    }),
  };
}

/** `Retry-After` as seconds from `now` (epoch ms); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

/** Seconds until an exhausted window reopens (the longest one), when the headers say. */
export function secondsUntilAvailable(info: RateLimitInfo | undefined): number | undefined {
  const exhausted = info?.windows.filter((w) => w.remaining === 0 && w.resetSeconds !== undefined) ?? [];
  if (exhausted.length === 0) return undefined;
  return Math.max(...exhausted.map((w) => w.resetSeconds ?? 0));
}
