/**
 * The only way a webhook leaves: one POST, no redirects followed (a 3xx is an answer, and a
 * failure), a time limit for the whole exchange, the first 1 KB of the answer kept, and the
 * outbound-address check on every attempt (an endpoint's DNS can change after it was registered).
 *
 * Endpoints are https on a public address. The local runtime and tests may name exact `host:port`
 * pairs (WEBHOOK_ALLOW_PRIVATE, ignored in a Lambda) that may be private and plain http, so local
 * receivers can get deliveries.
 *
 * The address check is `addressAllowed` below, the one place to switch to the shared outbound guard.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { isPublicAddress } from "#functions/agent/public-address";

export interface HostPort {
  host: string;
  port: number;
}

export interface OutboundPolicy {
  /** Exact host:port pairs that may be private and plain http (local runtime and tests only). */
  allowPrivate: readonly HostPort[];
  /** Resolves a host to all its addresses (tests inject one). */
  resolve?: (host: string) => Promise<string[]>;
}

export const publicOnly: OutboundPolicy = { allowPrivate: [] };

/** WEBHOOK_ALLOW_PRIVATE=`127.0.0.1:4000,…`, honoured only where no Lambda runs. */
export function outboundPolicyFromEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): OutboundPolicy {
  const list = env.AWS_LAMBDA_FUNCTION_NAME === undefined ? env.WEBHOOK_ALLOW_PRIVATE?.trim() : undefined;
  if (!list) return publicOnly;
  return {
    allowPrivate: list.split(",").map((entry) => {
      const [host = "", port = ""] = entry.trim().split(/:(?=\d+$)/);
      return { host: host.toLowerCase(), port: Number(port) };
    }),
  };
}

function portOf(url: URL): number {
  return Number(url.port || (url.protocol === "https:" ? 443 : 80));
}

function allowListed(url: URL, policy: OutboundPolicy): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return policy.allowPrivate.some((entry) => entry.host === host && entry.port === portOf(url));
}

export type UrlProblem =
  | "invalid_url"
  | "not_https"
  | "credentials_in_url"
  | "blocked_address"
  | "unresolved";

/** Whether a URL may be an endpoint: its shape (https, no user info) and its address. */
export async function checkEndpointUrl(raw: string, policy: OutboundPolicy): Promise<UrlProblem | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "invalid_url";
  }
  if (url.username !== "" || url.password !== "") return "credentials_in_url";
  const listed = allowListed(url, policy);
  if (url.protocol !== "https:" && !(listed && url.protocol === "http:")) return "not_https";
  return addressAllowed(url, policy);
}

/** The outbound-address check: every address the host has must be public, unless allow-listed. */
async function addressAllowed(url: URL, policy: OutboundPolicy): Promise<UrlProblem | undefined> {
  if (allowListed(url, policy)) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) return isPublicAddress(host) ? undefined : "blocked_address";
  let addresses: string[];
  try {
    addresses = policy.resolve
      ? await policy.resolve(host)
      : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch {
    return "unresolved";
  }
  if (addresses.length === 0) return "unresolved";
  return addresses.every(isPublicAddress) ? undefined : "blocked_address";
}

export interface WebhookPost {
  url: string;
  headers: Readonly<Record<string, string>>;
  body: string;
  timeoutMs: number;
}

export type PostOutcome =
  | { kind: "answered"; status: number; latencyMs: number; response: string }
  | { kind: "timeout" | "network" | "blocked_address"; latencyMs: number };

/** Bytes of the answer kept with the attempt. */
export const RESPONSE_EXCERPT_BYTES = 1024;

export async function postWebhook(request: WebhookPost, policy: OutboundPolicy): Promise<PostOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const url = new URL(request.url);
  const problem = await checkEndpointUrl(request.url, policy);
  if (problem === "unresolved") return { kind: "network", latencyMs: elapsed() };
  if (problem) return { kind: "blocked_address", latencyMs: elapsed() };
  const signal = AbortSignal.timeout(request.timeoutMs);
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...request.headers },
      body: request.body,
      redirect: "manual",
      signal,
    });
    const excerpt = await readExcerpt(response, signal);
    return { kind: "answered", status: response.status, latencyMs: elapsed(), response: excerpt };
  } catch {
    return { kind: signal.aborted ? "timeout" : "network", latencyMs: elapsed() };
  }
}

/**
 * The first 1 KB of the body (as UTF-8 text); the rest is not read. The status decides the
 * outcome, so a body still trickling in when time runs out only shortens the excerpt.
 */
async function readExcerpt(response: Response, signal: AbortSignal): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < RESPONSE_EXCERPT_BYTES && !signal.aborted) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
    }
  } catch {
    // Aborted or cut off mid-body: keep what arrived.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const bytes = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES);
  // A multi-byte character cut at the limit decodes as U+FFFD, which is fine for an excerpt.
  return new TextDecoder().decode(bytes);
}
