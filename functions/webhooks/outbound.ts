/**
 * The only way a webhook leaves: one POST through the service's outbound client
 * (net/outbound-http.ts), whose guard checks the address every connection actually goes to, at
 * connect time, on every attempt (an endpoint's DNS can change after it was registered). No
 * redirect is followed (a 3xx is an answer, and a failure), one time limit covers the whole
 * exchange, and the first 1 KB of the answer is kept.
 *
 * Endpoints are https on a public address. The local runtime and tests may name exact loopback
 * `address:port` pairs (OUTBOUND_ALLOW_PRIVATE, ignored in a Lambda, net/outbound-address.ts); such
 * an endpoint may also be plain http, so local receivers can get deliveries.
 */
import { isIP } from "node:net";
import {
  type AllowedEndpoint,
  allowListFromEnvironment,
  BlockedAddressError,
  checkEndpoint,
  type ResolveHost,
  systemResolve,
} from "#functions/net/outbound-address";
import { createOutboundClient, type OutboundSend } from "#functions/net/outbound-http";

export interface OutboundPolicy {
  /** Exact loopback endpoints that may be reached, and over plain http (local runtime and tests only). */
  allowPrivate: readonly AllowedEndpoint[];
  /** Resolves a host to all its addresses (tests inject one). */
  resolve?: ResolveHost;
}

export const publicOnly: OutboundPolicy = { allowPrivate: [] };

/** The shared allow list (OUTBOUND_ALLOW_PRIVATE), honoured only where no Lambda runs. */
export function outboundPolicyFromEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): OutboundPolicy {
  return { allowPrivate: allowListFromEnvironment(env) };
}

function portOf(url: URL): number {
  return Number(url.port || (url.protocol === "https:" ? 443 : 80));
}

const unbracket = (host: string) => host.replace(/^\[|\]$/g, "");

/** An IP literal the allow list names exactly (with its port): private, and allowed anyway. */
function allowListed(url: URL, policy: OutboundPolicy): boolean {
  const host = unbracket(url.hostname);
  const port = portOf(url);
  return (
    isIP(host) !== 0 &&
    !checkEndpoint(host, port).allowed &&
    checkEndpoint(host, port, policy.allowPrivate).allowed
  );
}

export type UrlProblem =
  | "invalid_url"
  | "not_https"
  | "credentials_in_url"
  | "blocked_address"
  | "unresolved";

/**
 * Whether a URL may be an endpoint: its shape (https, no user info) and, as registered now, its
 * addresses. Deliveries are checked again at connect time whatever this said.
 */
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
  const host = unbracket(url.hostname);
  const port = portOf(url);
  let addresses: readonly string[];
  if (isIP(host) !== 0) {
    addresses = [host];
  } else {
    try {
      addresses = (await (policy.resolve ?? systemResolve)(host)).map((entry) => entry.address);
    } catch {
      return "unresolved";
    }
  }
  if (addresses.length === 0) return "unresolved";
  return addresses.every((address) => checkEndpoint(address, port, policy.allowPrivate).allowed)
    ? undefined
    : "blocked_address";
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

export type PostWebhook = (request: WebhookPost) => Promise<PostOutcome>;

/** The delivery POST for a policy; one outbound client (and its connection pool) per policy. */
export function createWebhookPoster(policy: OutboundPolicy): PostWebhook {
  const send: OutboundSend = createOutboundClient({
    allowPrivate: policy.allowPrivate,
    ...(policy.resolve ? { resolve: policy.resolve } : {}),
  });
  return async (request) => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const url = new URL(request.url);
    if (url.protocol !== "https:" && !(url.protocol === "http:" && allowListed(url, policy))) {
      return { kind: "blocked_address", latencyMs: elapsed() };
    }
    const signal = AbortSignal.timeout(request.timeoutMs);
    try {
      const response = await send({
        url,
        method: "POST",
        headers: { "content-type": "application/json", ...request.headers },
        body: request.body,
        signal,
      });
      // The status decides; a body still arriving when time runs out only loses the excerpt.
      const excerpt = await response.readPrefix(RESPONSE_EXCERPT_BYTES).catch(() => new Uint8Array());
      return {
        kind: "answered",
        status: response.status,
        latencyMs: elapsed(),
        response: new TextDecoder().decode(excerpt),
      };
    } catch (error) {
      if (error instanceof BlockedAddressError || hasBlockedCause(error)) {
        return { kind: "blocked_address", latencyMs: elapsed() };
      }
      return { kind: signal.aborted ? "timeout" : "network", latencyMs: elapsed() };
    }
  };
}

function hasBlockedCause(error: unknown): boolean {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (
      cause instanceof BlockedAddressError ||
      (cause as { code?: unknown }).code === "ERR_OUTBOUND_ADDRESS_BLOCKED"
    )
      return true;
  }
  return false;
}
