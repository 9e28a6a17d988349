/**
 * Which addresses the service may connect to: the one home of outbound-address safety, used by every
 * fetch the service makes (image URLs, look-up tools, webhook deliveries) through
 * net/outbound-http.ts, which applies it to the address each connection actually goes to.
 *
 * Public means globally routed unicast. Refused: every block of IANA's IPv4 and IPv6 special-purpose
 * address registries (including the few the registries call globally reachable, such as the
 * AS112 and anycast blocks: no legitimate fetch target lives there), IPv4 multicast, and every IPv6
 * address outside global unicast (2000::/3). IPv4 addresses embedded in IPv6:
 * - IPv4-mapped (::ffff:0:0/96) and NAT64 (64:ff9b::/96) addresses reach the embedded IPv4 host
 *   (a dual-stack socket, a NAT64 gateway), so they are judged by that address;
 * - IPv4-compatible (::/96), IPv4-translated (::ffff:0:0:0/96), 6to4 (2002::/16) and Teredo
 *   (2001::/32, whose client address is stored inverted) are obsolete or tunnel forms and are
 *   refused whatever they embed; the reason names the embedded address.
 * A zone index (`fe80::1%eth0`) only exists for link-scoped addresses: refused.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { type ClientRequestArgs, Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { isIP, isIPv4, isIPv6, type LookupFunction } from "node:net";
import type { Duplex } from "node:stream";

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

const PUBLIC: AddressVerdict = { allowed: true };
const refused = (reason: string): AddressVerdict => ({ allowed: false, reason });

interface Block {
  /** The prefix's value, left-aligned in a bigint of the family's width. */
  network: bigint;
  bits: number;
  cidr: string;
  name: string;
}

/** IANA IPv4 Special-Purpose Address Registry, plus multicast. Sub-blocks of a listed block are covered by it. */
const ipv4Blocks = blocks(32, [
  ["0.0.0.0/8", '"this network"'],
  ["10.0.0.0/8", "private use"],
  ["100.64.0.0/10", "shared address space (carrier-grade NAT)"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link local (incl. the cloud metadata service)"],
  ["172.16.0.0/12", "private use"],
  ["192.0.0.0/24", "IETF protocol assignments"],
  ["192.0.2.0/24", "documentation (TEST-NET-1)"],
  ["192.31.196.0/24", "AS112-v4"],
  ["192.52.193.0/24", "AMT"],
  ["192.88.99.0/24", "6to4 relay anycast (deprecated)"],
  ["192.168.0.0/16", "private use"],
  ["192.175.48.0/24", "AS112 direct delegation"],
  ["198.18.0.0/15", "benchmarking"],
  ["198.51.100.0/24", "documentation (TEST-NET-2)"],
  ["203.0.113.0/24", "documentation (TEST-NET-3)"],
  ["224.0.0.0/4", "multicast"],
  ["255.255.255.255/32", "limited broadcast"],
  ["240.0.0.0/4", "reserved"],
]);

/** IANA IPv6 Special-Purpose Address Registry and the non-unicast ranges; the first match names it. */
const ipv6Blocks = blocks(128, [
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["::ffff:0:0/96", "IPv4-mapped"],
  ["::ffff:0:0:0/96", "IPv4-translated"],
  ["::/96", "IPv4-compatible (deprecated)"],
  ["64:ff9b::/96", "NAT64 translation"],
  ["64:ff9b:1::/48", "local-use IPv4/IPv6 translation"],
  ["100::/64", "discard-only"],
  ["100:0:0:1::/64", "dummy prefix"],
  ["2001::/32", "Teredo"],
  ["2001::/23", "IETF protocol assignments"],
  ["2001:db8::/32", "documentation"],
  ["2002::/16", "6to4"],
  ["2620:4f:8000::/48", "AS112 direct delegation"],
  ["3fff::/20", "documentation"],
  ["5f00::/16", "segment routing SIDs"],
  ["fc00::/7", "unique local"],
  ["fe80::/10", "link local"],
  ["fec0::/10", "site local (deprecated)"],
  ["ff00::/8", "multicast"],
]);
const globalUnicast = blocks(128, [["2000::/3", "global unicast"]])[0] as Block;

/** Whether a connection may go to `address` (an IP literal, IPv6 with or without brackets). */
export function classifyAddress(address: string): AddressVerdict {
  const text = unbracket(address);
  if (text.includes("%")) return refused("zone index: a link-scoped address");
  const v4 = parseIPv4(text);
  if (v4 !== undefined) return classifyIPv4(v4);
  const v6 = parseIPv6(text);
  if (v6 !== undefined) return classifyIPv6(v6);
  return refused("not an IP address");
}

export function isPublicAddress(address: string): boolean {
  return classifyAddress(address).allowed;
}

function classifyIPv4(value: bigint): AddressVerdict {
  const block = ipv4Blocks.find((candidate) => contains(candidate, value, 32));
  return block ? refused(`${block.cidr} ${block.name}`) : PUBLIC;
}

function classifyIPv6(value: bigint): AddressVerdict {
  const block = ipv6Blocks.find((candidate) => contains(candidate, value, 128));
  if (!block) {
    return contains(globalUnicast, value, 128)
      ? PUBLIC
      : refused("outside global unicast 2000::/3 (reserved)");
  }
  const low32 = value & 0xffffffffn;
  switch (block.cidr) {
    case "::ffff:0:0/96":
    case "64:ff9b::/96": {
      const embedded = classifyIPv4(low32);
      return embedded.allowed
        ? PUBLIC
        : refused(`${block.cidr} ${block.name} of ${formatIPv4(low32)}: ${embedded.reason}`);
    }
    case "::ffff:0:0:0/96":
    case "::/96":
      return refused(`${block.cidr} ${block.name}, embedding ${formatIPv4(low32)}`);
    case "2002::/16":
      return refused(`${block.cidr} ${block.name}, embedding ${formatIPv4((value >> 80n) & 0xffffffffn)}`);
    case "2001::/32": {
      const server = formatIPv4((value >> 64n) & 0xffffffffn);
      const client = formatIPv4(~value & 0xffffffffn);
      return refused(`${block.cidr} ${block.name}, server ${server}, client ${client}`);
    }
    default:
      return refused(`${block.cidr} ${block.name}`);
  }
}

function contains(block: Block, value: bigint, width: number): boolean {
  const shift = BigInt(width - block.bits);
  return value >> shift === block.network >> shift;
}

function blocks(width: 32 | 128, list: readonly [string, string][]): Block[] {
  return list.map(([cidr, name]) => {
    const [base = "", bits = ""] = cidr.split("/");
    const network = width === 32 ? parseIPv4(base) : parseIPv6(base);
    if (network === undefined) throw new Error(`bad block ${cidr}`);
    return { network, bits: Number(bits), cidr, name };
  });
}

/** Dotted-quad IPv4 only (as `net.isIPv4` accepts it); other spellings are host names to resolve. */
function parseIPv4(text: string): bigint | undefined {
  if (!isIPv4(text)) return undefined;
  return text.split(".").reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);
}

/** Any valid IPv6 spelling (compressed, expanded, any case, dotted tail) as a 128-bit value. */
function parseIPv6(text: string): bigint | undefined {
  if (!isIPv6(text) || text.includes("%")) return undefined;
  let groupsText = text;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (dotted) {
    const value = parseIPv4(dotted);
    if (value === undefined) return undefined;
    groupsText = `${text.slice(0, -dotted.length)}${(value >> 16n).toString(16)}:${(value & 0xffffn).toString(16)}`;
  }
  const [head = "", tail] = groupsText.split("::");
  const parse = (part: string) =>
    part ? part.split(":").map((group) => BigInt(Number.parseInt(group, 16))) : [];
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  const groups = [...front, ...new Array<bigint>(8 - front.length - back.length).fill(0n), ...back];
  return groups.reduce((value, group) => (value << 16n) | group, 0n);
}

function formatIPv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join(".");
}

// ---------- the connect-time check ----------

/** An address and port that may be reached although not public: the local runtime's fakes only. */
export interface AllowedEndpoint {
  address: string;
  port: number;
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** All addresses of a host name (the system resolver by default; tests inject one). */
export type ResolveHost = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export interface ConnectGuardOptions {
  /**
   * Local runtime and tests only: loopback endpoints that may be reached (allowListFromEnvironment).
   * An endpoint matches only its exact address and port: another port, or another spelling of the
   * address (`::ffff:7f00:1` for `127.0.0.1`), is judged like any other address.
   */
  allowPrivate?: readonly AllowedEndpoint[];
  resolve?: ResolveHost;
}

/** A connection was refused before it was opened, because of the address it would go to. */
export class BlockedAddressError extends Error {
  override readonly name = "BlockedAddressError";
  readonly code = "ERR_OUTBOUND_ADDRESS_BLOCKED";
  readonly address: string;
  readonly reason: string;

  constructor(address: string, reason: string) {
    super(`refused to connect to ${address}: ${reason}`);
    this.address = address;
    this.reason = reason;
  }
}

export const systemResolve: ResolveHost = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** The verdict for a connection to `address`:`port`. */
export function checkEndpoint(
  address: string,
  port: number,
  allowPrivate: readonly AllowedEndpoint[] = [],
): AddressVerdict {
  const verdict = classifyAddress(address);
  if (verdict.allowed) return verdict;
  const allowed = allowPrivate.some((entry) => entry.port === port && sameAddress(entry.address, address));
  return allowed ? PUBLIC : verdict;
}

/**
 * Makes one connection safe, given the options Node's agents pass to `net`/`tls.connect`. An IP
 * literal is judged here (Node connects to a literal without a lookup); a host name gets a lookup
 * that resolves it and hands Node only addresses that were judged, refusing the connection if any
 * address of the name is refused. So the decision is made on the addresses the socket connects to,
 * at the moment it connects: no second DNS answer can slip in between check and use.
 */
export function guardConnection(
  options: { host?: string | null; port?: number | string | null; socketPath?: string; lookup?: unknown },
  guard: ConnectGuardOptions,
): BlockedAddressError | undefined {
  if (options.socketPath !== undefined)
    return new BlockedAddressError(options.socketPath, "not an IP connection");
  const host = unbracket(options.host ?? "localhost");
  const port = Number(options.port);
  if (isIP(host) !== 0 || host.includes("%")) {
    const verdict = checkEndpoint(host, port, guard.allowPrivate);
    return verdict.allowed ? undefined : new BlockedAddressError(host, verdict.reason);
  }
  options.lookup = guardedLookup(port, guard);
  return undefined;
}

function guardedLookup(port: number, guard: ConnectGuardOptions): LookupFunction {
  const resolve = guard.resolve ?? systemResolve;
  return (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (all) => {
        const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : 0;
        const addresses = all.filter((entry) => wanted === 0 || entry.family === wanted);
        const first = addresses[0];
        if (!first) {
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "");
          return;
        }
        for (const { address } of addresses) {
          const verdict = checkEndpoint(address, port, guard.allowPrivate);
          if (!verdict.allowed) {
            callback(new BlockedAddressError(address, verdict.reason), "");
            return;
          }
        }
        if (lookupOptions.all)
          callback(
            null,
            addresses.map(({ address, family }) => ({ address, family })),
          );
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };
}

/** An http(s) agent whose every new connection passes `guardConnection` (refusals fail the request). */
/**
 * Idle kept-alive connections are closed after this long (Node's own default agent uses 5 s too):
 * shorter than most servers' idle limits, so a pooled connection is rarely one the server dropped.
 */
const KEEP_ALIVE_IDLE_MS = 5_000;

/**
 * An agent whose every new connection is checked by the guard, at connect time, on the address
 * connected to. With `keepAlive`, a connection is reused only for the same host and port (and TLS
 * settings): it stays connected to the address the guard accepted when it was opened, so reuse
 * cannot reach an address the guard would refuse, whatever DNS says meanwhile.
 */
export function createGuardedAgent(
  protocol: "http:" | "https:",
  guard: ConnectGuardOptions,
  tls: { ca?: string } = {},
  pooling: { keepAlive?: boolean } = {},
): HttpAgent {
  const connections = pooling.keepAlive
    ? { keepAlive: true, scheduling: "lifo" as const, timeout: KEEP_ALIVE_IDLE_MS }
    : { keepAlive: false };
  type Callback = (error: Error | null, stream: Duplex) => void;
  const refuse = (error: BlockedAddressError, callback: Callback | undefined) => {
    // The agent turns a callback error into the request's 'error' event.
    callback?.(error, undefined as unknown as Duplex);
    return undefined;
  };
  if (protocol === "https:") {
    return new (class extends HttpsAgent {
      override createConnection(options: ClientRequestArgs, callback?: Callback) {
        const refusal = guardConnection(options, guard);
        return refusal ? refuse(refusal, callback) : super.createConnection(options, callback);
      }
    })({ ...connections, ...(tls.ca ? { ca: tls.ca } : {}) });
  }
  return new (class extends HttpAgent {
    override createConnection(options: ClientRequestArgs, callback?: Callback) {
      const refusal = guardConnection(options, guard);
      return refusal ? refuse(refusal, callback) : super.createConnection(options, callback);
    }
  })(connections);
}

// ---------- the local escape hatch ----------

/**
 * The allow list of the local runtime and the tests: `OUTBOUND_ALLOW_PRIVATE=127.0.0.1:4443,[::1]:5000`,
 * exact loopback endpoints of local fakes. It cannot be switched on in a Lambda, twice over: it is
 * ignored wherever `AWS_LAMBDA_FUNCTION_NAME` is set (Lambda always sets it, a reserved variable no
 * configuration can remove), and it can only ever name loopback addresses, never a private network
 * or the metadata service. The stack sets no such variable (its tests check).
 */
export function allowListFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): AllowedEndpoint[] {
  if (env.AWS_LAMBDA_FUNCTION_NAME !== undefined) return [];
  const raw = env.OUTBOUND_ALLOW_PRIVATE?.trim();
  if (!raw) return [];
  return raw.split(",").map((entry) => parseAllowedEndpoint(entry.trim()));
}

/** `127.0.0.1:4443` or `[::1]:5000`: a loopback IP literal and a port. */
export function parseAllowedEndpoint(text: string): AllowedEndpoint {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const address = match?.[1] ?? match?.[2] ?? "";
  const port = Number(match?.[3]);
  if (!match || isIP(address) === 0 || !(port > 0 && port < 65_536)) {
    throw new Error(
      `OUTBOUND_ALLOW_PRIVATE: "${text}" is not an IP address and port (127.0.0.1:4443, [::1]:5000)`,
    );
  }
  if (!isLoopback(address)) {
    throw new Error(
      `OUTBOUND_ALLOW_PRIVATE: "${text}" is not a loopback address; only local fakes may be allowed`,
    );
  }
  return { address, port };
}

function isLoopback(address: string): boolean {
  const v4 = parseIPv4(address);
  if (v4 !== undefined) return v4 >> 24n === 127n;
  return parseIPv6(address) === 1n;
}

function sameAddress(a: string, b: string): boolean {
  const [a4, b4] = [parseIPv4(unbracket(a)), parseIPv4(unbracket(b))];
  if (a4 !== undefined || b4 !== undefined) return a4 === b4;
  const [a6, b6] = [parseIPv6(unbracket(a)), parseIPv6(unbracket(b))];
  return a6 !== undefined && a6 === b6;
}

function unbracket(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}
