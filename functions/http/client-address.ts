/**
 * The address a request came from, for the session route's per-address bucket.
 *
 * On AWS the widget reaches the API through the console's CloudFront distribution (the API is on
 * the widget's own origin), so API Gateway's `sourceIp` is a CloudFront edge shared by many
 * visitors. The distribution's viewer-request function writes the viewer's own address into
 * `X-Viewer-Address` (replacing whatever the viewer sent), and its origins prove the request came
 * through it with `X-Origin-Verify`, a secret the stack gives the distribution's origins and the
 * functions alike (`ORIGIN_VERIFY_SECRET`). Without that proof the header is ignored: anyone calling
 * the API's own URL could send it.
 *
 * IPv6 addresses count by their /64 (one host holds a whole /64); IPv4 addresses by themselves.
 */
import { timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";

export function clientAddress(
  headers: Readonly<Record<string, string | undefined>>,
  sourceIp: string,
  originSecret: string | undefined = process.env.ORIGIN_VERIFY_SECRET,
): string {
  const viewer = headers["x-viewer-address"];
  const proof = headers["x-origin-verify"];
  if (viewer && proof && originSecret && sameSecret(proof, originSecret) && isIP(viewer)) {
    return addressKey(viewer);
  }
  return addressKey(sourceIp);
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The bucket key of an address: IPv4 as is, IPv6 as its /64 (`2001:db8:1:2::/64`). */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return mapped;
  const [head = "", tail = ""] = address.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = address.includes("::")
    ? [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}
