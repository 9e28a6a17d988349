/**
 * CORS for the routes the website widget calls from visitors' browsers (lib/routes.ts `widget`), and
 * for no other route: a preflight (`OPTIONS`) is answered 204, and an answer to a request that
 * carries `Origin` echoes it, exposes the rate and request-id headers, and never allows credentials
 * (the widget sends its token in `Authorization`, never a cookie).
 *
 * An answer to a request authenticated with an API key carries no CORS headers even on these routes:
 * an API key is a server's credential, and a browser on another origin is not to read what it gets.
 * Which origins may start a visitor session is decided by the session route itself, where a browser
 * cannot lie about its origin; the preflight cannot know the chatbot, so it echoes any origin.
 */

export const corsAllowedHeaders = "authorization, content-type, idempotency-key";
export const corsExposedHeaders =
  "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-Id";
/** How long a browser may keep a preflight's answer. */
export const corsMaxAgeSeconds = 600;

/** The headers of an answer to a cross-origin request on a widget route (none without `Origin`). */
export function corsHeaders(origin: string | undefined): Record<string, string> {
  if (!origin) return {};
  return {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": corsExposedHeaders,
    vary: "Origin",
  };
}

/** The answer to a preflight of a widget path that takes `methods`. */
export function preflightResponse(
  origin: string | undefined,
  methods: readonly string[],
): { statusCode: 204; headers: Record<string, string>; body: "" } {
  return {
    statusCode: 204,
    headers: {
      ...(origin ? { "access-control-allow-origin": origin, vary: "Origin" } : {}),
      "access-control-allow-methods": [...methods, "OPTIONS"].join(", "),
      "access-control-allow-headers": corsAllowedHeaders,
      "access-control-max-age": String(corsMaxAgeSeconds),
      "cache-control": "no-store",
    },
    body: "",
  };
}
