/**
 * The address classifier behind every outbound fetch: one table of address forms, each with the
 * range that must refuse it (or none, for the public controls).
 */
import { describe, expect, it } from "vitest";
import { classifyAddress } from "#functions/net/outbound-address";

/** [address, the range named in the refusal, or "public"]. */
const table: [string, string][] = [
  // IPv4 special-purpose registry, both ends of the wide blocks
  ["0.0.0.0", "0.0.0.0/8"],
  ["0.1.2.3", "0.0.0.0/8"],
  ["10.0.0.1", "10.0.0.0/8"],
  ["10.255.255.255", "10.0.0.0/8"],
  ["100.64.0.1", "100.64.0.0/10"],
  ["100.127.255.254", "100.64.0.0/10"],
  ["127.0.0.1", "127.0.0.0/8"],
  ["127.255.255.254", "127.0.0.0/8"],
  ["169.254.169.254", "169.254.0.0/16"],
  ["169.254.0.1", "169.254.0.0/16"],
  ["172.16.0.1", "172.16.0.0/12"],
  ["172.31.255.254", "172.16.0.0/12"],
  ["192.0.0.9", "192.0.0.0/24"],
  ["192.0.0.170", "192.0.0.0/24"],
  ["192.0.2.1", "192.0.2.0/24"],
  ["192.31.196.1", "192.31.196.0/24"],
  ["192.52.193.1", "192.52.193.0/24"],
  ["192.88.99.2", "192.88.99.0/24"],
  ["192.168.1.1", "192.168.0.0/16"],
  ["192.175.48.1", "192.175.48.0/24"],
  ["198.18.0.1", "198.18.0.0/15"],
  ["198.19.255.254", "198.18.0.0/15"],
  ["198.51.100.7", "198.51.100.0/24"],
  ["203.0.113.9", "203.0.113.0/24"],
  ["224.0.0.1", "224.0.0.0/4"],
  ["239.255.255.250", "224.0.0.0/4"],
  ["240.0.0.1", "240.0.0.0/4"],
  ["255.255.255.255", "255.255.255.255/32"],
  // IPv6 special-purpose registry and non-unicast space
  ["::", "::/128"],
  ["0:0:0:0:0:0:0:0", "::/128"],
  ["::1", "::1/128"],
  ["0:0:0:0:0:0:0:1", "::1/128"],
  ["0000:0000:0000:0000:0000:0000:0000:0001", "::1/128"],
  ["[::1]", "::1/128"],
  ["64:ff9b:1::1", "64:ff9b:1::/48"],
  ["100::1", "100::/64"],
  ["100:0:0:1::1", "100:0:0:1::/64"],
  ["2001:1::1", "2001::/23"],
  ["2001:2::1", "2001::/23"],
  ["2001:3::1", "2001::/23"],
  ["2001:4:112::1", "2001::/23"],
  ["2001:20::1", "2001::/23"],
  ["2001:30::1", "2001::/23"],
  ["2001:db8::1", "2001:db8::/32"],
  ["2001:DB8:0:0:0:0:0:1", "2001:db8::/32"],
  ["2620:4f:8000::1", "2620:4f:8000::/48"],
  ["3fff::1", "3fff::/20"],
  ["5f00::1", "5f00::/16"],
  ["fc00::1", "fc00::/7"],
  ["fd12:3456:789a::1", "fc00::/7"],
  ["fe80::1", "fe80::/10"],
  ["febf:ffff::1", "fe80::/10"],
  ["fec0::1", "fec0::/10"],
  ["ff02::1", "ff00::/8"],
  ["FF05::1:3", "ff00::/8"],
  ["4000::1", "outside global unicast"],
  ["::2", "::/96"],
  // Zone indexes
  ["fe80::1%eth0", "zone index"],
  ["fe80::1%25eth0", "zone index"],
  ["::1%lo", "zone index"],
  // IPv4 embedded in IPv6: mapped (every spelling), NAT64, compatible, translated, 6to4, Teredo
  ["::ffff:127.0.0.1", "::ffff:0:0/96 IPv4-mapped of 127.0.0.1: 127.0.0.0/8"],
  ["::ffff:7f00:1", "::ffff:0:0/96 IPv4-mapped of 127.0.0.1: 127.0.0.0/8"],
  ["::FFFF:7F00:0001", "::ffff:0:0/96 IPv4-mapped of 127.0.0.1: 127.0.0.0/8"],
  ["0:0:0:0:0:ffff:7f00:1", "::ffff:0:0/96 IPv4-mapped of 127.0.0.1: 127.0.0.0/8"],
  ["0000:0000:0000:0000:0000:ffff:7f00:0001", "::ffff:0:0/96 IPv4-mapped of 127.0.0.1: 127.0.0.0/8"],
  ["0:0:0:0:0:ffff:127.0.0.1", "::ffff:0:0/96 IPv4-mapped of 127.0.0.1: 127.0.0.0/8"],
  ["[::ffff:7f00:1]", "::ffff:0:0/96 IPv4-mapped of 127.0.0.1: 127.0.0.0/8"],
  ["::ffff:a9fe:a9fe", "::ffff:0:0/96 IPv4-mapped of 169.254.169.254: 169.254.0.0/16"],
  ["::ffff:169.254.169.254", "::ffff:0:0/96 IPv4-mapped of 169.254.169.254: 169.254.0.0/16"],
  ["::ffff:a00:1", "::ffff:0:0/96 IPv4-mapped of 10.0.0.1: 10.0.0.0/8"],
  ["::ffff:c000:201", "::ffff:0:0/96 IPv4-mapped of 192.0.2.1: 192.0.2.0/24"],
  ["::ffff:0:0", "::ffff:0:0/96 IPv4-mapped of 0.0.0.0: 0.0.0.0/8"],
  ["64:ff9b::7f00:1", "64:ff9b::/96 NAT64 translation of 127.0.0.1: 127.0.0.0/8"],
  ["64:ff9b::169.254.169.254", "64:ff9b::/96 NAT64 translation of 169.254.169.254: 169.254.0.0/16"],
  ["64:ff9b::a00:1", "64:ff9b::/96 NAT64 translation of 10.0.0.1: 10.0.0.0/8"],
  ["64:ff9b::c000:201", "64:ff9b::/96 NAT64 translation of 192.0.2.1: 192.0.2.0/24"],
  ["::127.0.0.1", "::/96 IPv4-compatible (deprecated), embedding 127.0.0.1"],
  ["::7f00:1", "::/96 IPv4-compatible (deprecated), embedding 127.0.0.1"],
  ["::8.8.8.8", "::/96 IPv4-compatible (deprecated), embedding 8.8.8.8"],
  ["::ffff:0:7f00:1", "::ffff:0:0:0/96 IPv4-translated, embedding 127.0.0.1"],
  ["::ffff:0:192.168.0.1", "::ffff:0:0:0/96 IPv4-translated, embedding 192.168.0.1"],
  ["2002:7f00:1::1", "2002::/16 6to4, embedding 127.0.0.1"],
  ["2002:a9fe:a9fe::", "2002::/16 6to4, embedding 169.254.169.254"],
  ["2002:c000:201::1", "2002::/16 6to4, embedding 192.0.2.1"],
  ["2002:808:808::1", "2002::/16 6to4, embedding 8.8.8.8"],
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", "2001::/32 Teredo, server 65.54.227.120, client 127.0.0.1"],
  ["2001::a9fe:a9fe:0:0:5601:5601", "2001::/32 Teredo, server 169.254.169.254, client 169.254.169.254"],
  // Not addresses at all
  ["0x7f.1", "not an IP address"],
  ["2130706433", "not an IP address"],
  ["127.1", "not an IP address"],
  ["0177.0.0.1", "not an IP address"],
  ["localhost", "not an IP address"],
  ["", "not an IP address"],
  // Public controls
  ["8.8.8.8", "public"],
  ["93.184.216.34", "public"],
  ["1.1.1.1", "public"],
  ["172.15.255.255", "public"],
  ["172.32.0.1", "public"],
  ["100.63.255.255", "public"],
  ["100.128.0.1", "public"],
  ["169.253.255.255", "public"],
  ["169.255.0.1", "public"],
  ["192.0.1.255", "public"],
  ["192.0.3.1", "public"],
  ["198.17.255.255", "public"],
  ["198.20.0.1", "public"],
  ["223.255.255.254", "public"],
  ["2606:4700:4700::1111", "public"],
  ["2a00:1450:4001:80b::200e", "public"],
  ["2A00:1450:4001:080B:0000:0000:0000:200E", "public"],
  ["[2606:4700:4700::1111]", "public"],
  ["2001:200::1", "public"],
  ["2001:db9::1", "public"],
  ["2003::1", "public"],
  ["3fff:1000::1", "public"],
  ["::ffff:8.8.8.8", "public"],
  ["::ffff:808:808", "public"],
  ["64:ff9b::808:808", "public"],
  ["64:ff9b::93.184.216.34", "public"],
];

describe("classifyAddress", () => {
  it("has a table of at least 60 address forms", () => {
    expect(table.length).toBeGreaterThanOrEqual(60);
  });

  it.each(table)("%s → %s", (address, expected) => {
    const verdict = classifyAddress(address);
    if (expected === "public") {
      expect(verdict).toEqual({ allowed: true });
    } else {
      expect(verdict.allowed).toBe(false);
      expect(verdict.allowed ? "" : verdict.reason).toContain(expected);
    }
  });
});
