import { describe, expect, it } from "vitest";
import { isPublicAddress } from "#functions/agent/public-address";

describe("isPublicAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback /8"],
    ["10.1.2.3", "private 10/8"],
    ["172.16.0.1", "private 172.16/12 (low end)"],
    ["172.31.255.254", "private 172.16/12 (high end)"],
    ["192.168.1.1", "private 192.168/16"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.254", "carrier-grade NAT (high end)"],
    ["169.254.169.254", "cloud metadata (link-local)"],
    ["169.254.10.1", "link-local"],
    ["0.0.0.0", "this network"],
    ["0.1.2.3", "this network /8"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast (SSDP)"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "broadcast"],
    ["192.0.2.10", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["::1", "IPv6 loopback"],
    ["::", "IPv6 unspecified"],
    ["fc00::1", "unique local fc00::/7"],
    ["fd12:3456::1", "unique local fd00::/8"],
    ["fe80::1", "IPv6 link-local"],
    ["fe80::1%eth0", "link-local with zone"],
    ["febf::1", "IPv6 link-local (high end)"],
    ["ff02::1", "IPv6 multicast"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:7f00:1", "IPv4-mapped loopback, hex form"],
    ["::ffff:169.254.169.254", "IPv4-mapped metadata"],
    ["::10.0.0.1", "IPv4-compatible private"],
    ["::ffff:0:192.168.0.1", "IPv4-translated private"],
    ["64:ff9b::a00:1", "NAT64 of 10.0.0.1"],
    ["2002:c0a8:101::1", "6to4 of 192.168.1.1"],
    ["2001:0:4136:e378::1", "Teredo"],
    ["2001:db8::1", "IPv6 documentation"],
    ["not-an-ip", "not an address"],
  ])("refuses %s (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    "93.184.216.34",
    "8.8.8.8",
    "172.32.0.1", // just above 172.16/12
    "172.15.255.255", // just below
    "100.128.0.1", // just above 100.64/10
    "169.255.0.1",
    "223.255.255.254",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:93.184.216.34",
    "64:ff9b::5db8:d822", // NAT64 of a public address
    "2002:5db8:d822::1", // 6to4 of a public address
  ])("accepts %s", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});
