/**
 * Whether an IP address is public: the SSRF guard for image URLs. Anything not clearly a globally
 * routed unicast address is refused, including the forms that smuggle an IPv4 address inside IPv6
 * (mapped, compatible, translated, NAT64, 6to4, Teredo), whose embedded address is judged instead.
 */
import { isIP } from "node:net";

/** Special-purpose IPv4 ranges (RFC 6890 and successors) that must never be fetched. */
const blockedIPv4: readonly [string, number][] = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, incl. the 169.254.169.254 metadata service
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, incl. broadcast
];

const blockedIPv4Ranges = blockedIPv4.map(([base, bits]) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { network: (ipv4ToNumber(base) & mask) >>> 0, mask };
});

export function isPublicAddress(address: string): boolean {
  if (address.includes("%")) return false; // a zone index only exists for link-local scopes
  const version = isIP(address);
  if (version === 4) return isPublicIPv4(ipv4ToNumber(address));
  if (version === 6) return isPublicIPv6(ipv6ToHextets(address));
  return false;
}

function isPublicIPv4(value: number): boolean {
  return !blockedIPv4Ranges.some(({ network, mask }) => (value & mask) >>> 0 === network);
}

function isPublicIPv6(h: readonly number[]): boolean {
  const [h0 = 0, h1 = 0, h2 = 0, h3 = 0, h4 = 0, h5 = 0, h6 = 0, h7 = 0] = h;
  const low32 = ((h6 << 16) | h7) >>> 0;
  const upper64Zero = h0 === 0 && h1 === 0 && h2 === 0 && h3 === 0;
  // ::a.b.c.d (compatible, also :: and ::1), ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated)
  if (upper64Zero && ((h4 === 0 && (h5 === 0 || h5 === 0xffff)) || (h4 === 0xffff && h5 === 0))) {
    return isPublicIPv4(low32);
  }
  // 64:ff9b::/96 (NAT64 well-known prefix) embeds an IPv4 address; 64:ff9b:1::/48 is local-use.
  if (h0 === 0x64 && h1 === 0xff9b) {
    return h2 === 0 && h3 === 0 && h4 === 0 && h5 === 0 && isPublicIPv4(low32);
  }
  // 2002::/16 (6to4) embeds the IPv4 address in bits 16–47.
  if (h0 === 0x2002) return isPublicIPv4(((h1 << 16) | h2) >>> 0);
  // Only global unicast (2000::/3) is public; this excludes ::/8, fc00::/7, fe80::/10, fec0::/10, ff00::/8.
  if ((h0 & 0xe000) !== 0x2000) return false;
  if (h0 === 0x2001 && h1 < 0x200) return false; // 2001::/23 IETF assignments, incl. Teredo 2001::/32
  if (h0 === 0x2001 && h1 === 0xdb8) return false; // documentation
  if (h0 === 0x3fff && h1 < 0x1000) return false; // 3fff::/20 documentation
  return true;
}

function ipv4ToNumber(address: string): number {
  return address.split(".").reduce((value, part) => ((value << 8) | Number(part)) >>> 0, 0);
}

/** Eight 16-bit groups of a valid IPv6 address (as checked by `isIP`), with `::` and a dotted tail expanded. */
function ipv6ToHextets(address: string): number[] {
  let text = address;
  const dotted = text.match(/(\d+\.\d+\.\d+\.\d+)$/)?.[1];
  if (dotted) {
    const value = ipv4ToNumber(dotted);
    text = `${text.slice(0, -dotted.length)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part ? part.split(":").map((group) => Number.parseInt(group, 16)) : []);
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}
