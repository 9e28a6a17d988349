/**
 * The only outbound HTTP client of the tools. It can only send GET: the request type has no method
 * or body, and a request that smuggles one in at runtime is refused before anything leaves.
 *
 * Each request gets a timeout bounded by the turn's deadline, a response size cap and JSON parsing,
 * and ends in a closed set of outcomes: 401/403 → auth_failed, 404 → not_found (only where the caller
 * says a 404 means "no such record"), 429 → rate_limited (waiting once if Retry-After is short and
 * fits before the deadline), 5xx and network → unavailable, time-out → timeout. Nothing from the
 * request (URL, headers: they may hold credentials) is ever put into a result.
 *
 * Requests go through the outbound client (net/outbound-http.ts), so every connection reaches only
 * addresses the outbound-address guard accepts (refusals are `blocked_host`); redirects are never
 * followed.
 */
import { type AllowedEndpoint, BlockedAddressError, type ResolveHost } from "#functions/net/outbound-address";
import { createOutboundClient, ResponseTooLargeError } from "#functions/net/outbound-http";
import {
  parseRateLimit,
  parseRetryAfter,
  type RateLimitInfo,
  secondsUntilAvailable,
} from "#functions/tools/rate-limit";
import type { LookupFailure } from "#functions/tools/result";

export interface HttpGetRequest {
  readonly url: URL;
  readonly headers?: Readonly<Record<string, string>>;
  /** Aborts with the turn. */
  readonly signal: AbortSignal;
  /** Epoch ms by which the turn must answer; no request or retry wait runs past it. */
  readonly deadline: number;
  /** The URL names one record (`…/orders/42`), so 404 means "no such record" rather than a broken setup. */
  readonly notFoundOn404?: boolean;
  /** GET only: there is deliberately no way to choose a method or send a body. */
  readonly method?: never;
  readonly body?: never;
}

export interface HttpGetSuccess {
  kind: "ok";
  status: number;
  /** Parsed JSON, or null for an empty body. */
  body: unknown;
  rate?: RateLimitInfo;
}

export type HttpGetResult = HttpGetSuccess | LookupFailure;

export type HttpGet = (request: HttpGetRequest) => Promise<HttpGetResult>;

export interface HttpGetOptions {
  now?: () => number;
  /** Upper bound for one request, before the deadline shortens it. */
  requestTimeoutMs?: number;
  /** Time kept free before the deadline for the model to answer. */
  deadlineMarginMs?: number;
  maxResponseBytes?: number;
  /** Longest Retry-After worth waiting for once inside a turn. */
  maxRetryWaitMs?: number;
  /** Local fakes and demos only: the loopback endpoints of the fakes (see ConnectGuardOptions). */
  allowPrivate?: readonly AllowedEndpoint[];
  /** Resolves host names (tests; default: the system resolver). */
  resolve?: ResolveHost;
  /** Local fakes and demos only: send requests for an origin to another one ("https://x.example" → "http://127.0.0.1:5000"). */
  originOverrides?: Readonly<Record<string, string>>;
}

const DEFAULTS = {
  requestTimeoutMs: 5_000,
  deadlineMarginMs: 250,
  maxResponseBytes: 1_048_576,
  maxRetryWaitMs: 2_000,
};

function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export function createHttpGet(options: HttpGetOptions = {}): HttpGet {
  // Kept for the life of the instance (agent/services.ts): a turn's look-ups, and the next turns',
  // mostly call the same shop, so its connections are reused (each still guarded when it opens).
  const send = createOutboundClient({
    ...(options.allowPrivate ? { allowPrivate: options.allowPrivate } : {}),
    ...(options.resolve ? { resolve: options.resolve } : {}),
    keepAlive: true,
  });
  const now = options.now ?? Date.now;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
  const margin = options.deadlineMarginMs ?? DEFAULTS.deadlineMarginMs;
  const maxBytes = options.maxResponseBytes ?? DEFAULTS.maxResponseBytes;
  const maxRetryWaitMs = options.maxRetryWaitMs ?? DEFAULTS.maxRetryWaitMs;
  const overrides = options.originOverrides ?? {};

  function target(url: URL): URL {
    const replacement = overrides[url.origin];
    return replacement ? new URL(`${url.pathname}${url.search}`, replacement) : url;
  }

  async function once(request: HttpGetRequest, url: URL): Promise<HttpGetResult> {
    // Whole milliseconds: AbortSignal.timeout refuses fractions.
    const budget = Math.floor(Math.min(requestTimeoutMs, request.deadline - margin - now()));
    if (budget <= 0 || request.signal.aborted) return { kind: "timeout" };
    const signal = AbortSignal.any([request.signal, AbortSignal.timeout(budget)]);
    try {
      const response = await send({
        url,
        headers: { accept: "application/json", ...request.headers },
        signal,
      });
      const rate = parseRateLimit(response.headers);
      const withRate = rate ? { rate } : {};
      const { status } = response;
      if (status >= 200 && status < 300) {
        const bytes = await response.read(maxBytes);
        const body = new TextDecoder().decode(bytes).trim();
        if (body === "") return { kind: "ok", status, body: null, ...withRate };
        try {
          return { kind: "ok", status, body: JSON.parse(body) as unknown, ...withRate };
        } catch {
          return { kind: "unavailable", reason: "invalid_response" };
        }
      }
      response.discard();
      if (status === 401 || status === 403) return { kind: "auth_failed" };
      if (status === 404 && request.notFoundOn404) return { kind: "not_found" };
      if (status === 429) {
        const retryAfter =
          parseRetryAfter(response.headers.get("retry-after"), now()) ?? secondsUntilAvailable(rate);
        return retryAfter === undefined
          ? { kind: "rate_limited" }
          : { kind: "rate_limited", retryAfterSeconds: retryAfter };
      }
      if (status >= 300 && status < 400) return { kind: "unavailable", reason: "redirect" };
      if (status >= 500) return { kind: "unavailable", reason: "server_error" };
      return { kind: "unavailable", reason: "unexpected_status" };
    } catch (error) {
      if (error instanceof ResponseTooLargeError) return { kind: "unavailable", reason: "too_large" };
      if (error instanceof BlockedAddressError) return { kind: "unavailable", reason: "blocked_host" };
      if (signal.aborted) return { kind: "timeout" };
      return { kind: "unavailable", reason: "network" };
    }
  }

  return async function httpGet(request: HttpGetRequest): Promise<HttpGetResult> {
    // Runtime half of "GET only", for callers that get around the types.
    const loose = request as unknown as Record<string, unknown>;
    if ((loose.method !== undefined && loose.method !== "GET") || loose.body !== undefined) {
      throw new TypeError("http-get sends GET requests only");
    }
    if (
      !(request.url instanceof URL) ||
      (request.url.protocol !== "https:" && request.url.protocol !== "http:")
    ) {
      throw new TypeError("http-get needs an http(s) URL");
    }
    if (request.url.username !== "" || request.url.password !== "") {
      throw new TypeError("http-get takes credentials in headers, never in the URL");
    }
    const url = target(request.url);
    const first = await once(request, url);
    if (first.kind !== "rate_limited" || first.retryAfterSeconds === undefined) return first;
    const waitMs = Math.ceil(first.retryAfterSeconds * 1000);
    // One retry, only if the wait is short and a whole request still fits before the deadline.
    const fits = now() + waitMs + Math.min(requestTimeoutMs, 1_000) <= request.deadline - margin;
    if (waitMs > maxRetryWaitMs || !fits) return first;
    if (!(await sleep(waitMs, request.signal))) return { kind: "timeout" };
    return once(request, url);
  };
}
