/**
 * Keeps tool requests on the public internet. Tool URLs are configured by tenants, so without this a
 * tool could read the Lambda runtime API on 127.0.0.1 or an internal service. Checks the literal host
 * and every address it resolves to (a resolver is injectable for tests). DNS rebinding between this
 * check and the connection is not covered.
 */
import { lookup } from "node:dns/promises";
import { isIPv4, isIPv6 } from "node:net";

export type ResolveHost = (hostname: string) => Promise<string[]>;

export const resolveWithDns: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

function ipv4ToInt(address: string): number {
  return address.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
}

const PRIVATE_V4: ReadonlyArray<readonly [string, number]> = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 3],
];

function isPrivateV4(address: string): boolean {
  const value = ipv4ToInt(address);
  return PRIVATE_V4.some(([base, bits]) => {
    const size = 2 ** (32 - bits);
    const start = ipv4ToInt(base);
    return value >= start && value < start + size;
  });
}

function isPrivateV6(address: string): boolean {
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped?.[1]) return isPrivateV4(mapped[1]);
  return (
    lower === "::" ||
    lower === "::1" ||
    /^f[cd][0-9a-f]{2}:/.test(lower) ||
    /^fe[89ab][0-9a-f]:/.test(lower) ||
    lower.startsWith("ff")
  );
}

/** True for loopback, private, link-local, carrier-grade NAT, multicast and metadata addresses. */
export function isPrivateAddress(address: string): boolean {
  if (isIPv4(address)) return isPrivateV4(address);
  if (isIPv6(address)) return isPrivateV6(address);
  return false;
}

export type HostVerdict = "public" | "private" | "unresolved";

/** Whether `hostname` (from a URL, IPv6 possibly in brackets) may be contacted. */
export async function classifyHost(hostname: string, resolve: ResolveHost): Promise<HostVerdict> {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".internal")) return "private";
  if (isIPv4(host) || isIPv6(host)) return isPrivateAddress(host) ? "private" : "public";
  try {
    const addresses = await resolve(host);
    if (addresses.length === 0) return "unresolved";
    return addresses.some(isPrivateAddress) ? "private" : "public";
  } catch {
    return "unresolved";
  }
}
