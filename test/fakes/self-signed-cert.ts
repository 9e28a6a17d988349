/**
 * A self-signed TLS certificate made at test time with node:crypto alone (no openssl, no package):
 * a P-256 key and a minimal X.509 v3 certificate, DER-encoded by hand, for the host names and IP
 * addresses given. Tests trust it explicitly, which is how the https-only image fetch is exercised.
 */
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { isIP } from "node:net";

export interface TestCertificate {
  /** PEM certificate; also the CA a client must trust. */
  cert: string;
  /** PEM PKCS#8 private key. */
  key: string;
}

export function createSelfSignedCertificate(names: readonly string[]): TestCertificate {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const ecdsaWithSha256 = sequence(oid("1.2.840.10045.4.3.2"));
  const name = sequence(set(sequence(oid("2.5.4.3"), tlv(0x0c, Buffer.from("chatbot test image server")))));
  const now = Date.now();
  const subjectAltNames = sequence(
    ...names.map((entry) =>
      isIP(entry) === 4
        ? tlv(0x87, Buffer.from(entry.split(".").map(Number)))
        : tlv(0x82, Buffer.from(entry, "ascii")),
    ),
  );
  const extensions = tlv(
    0xa3,
    sequence(
      sequence(oid("2.5.29.17"), tlv(0x04, subjectAltNames)),
      sequence(
        oid("2.5.29.19"),
        tlv(0x01, Buffer.from([0xff])),
        tlv(0x04, sequence(tlv(0x01, Buffer.from([0xff])))),
      ),
    ),
  );
  const serial = randomBytes(8);
  serial[0] = (serial[0] ?? 0) & 0x7f; // a positive INTEGER
  const tbs = sequence(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))), // version 3
    tlv(0x02, serial),
    ecdsaWithSha256,
    name,
    sequence(utcTime(new Date(now - 86_400_000)), utcTime(new Date(now + 86_400_000))),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    extensions,
  );
  const signature = sign("sha256", tbs, privateKey);
  const der = sequence(tbs, ecdsaWithSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const base64 = der.toString("base64").replace(/.{64}/g, "$&\n");
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${base64.trimEnd()}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length;
  const header =
    length < 0x80
      ? Buffer.from([tag, length])
      : (() => {
          const bytes: number[] = [];
          for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
          return Buffer.from([tag, 0x80 | bytes.length, ...bytes]);
        })();
  return Buffer.concat([header, content]);
}

function sequence(...items: Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(items));
}

function set(...items: Buffer[]): Buffer {
  return tlv(0x31, Buffer.concat(items));
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [40 * first + second];
  for (const arc of rest) {
    const groups: number[] = [];
    for (let value = arc; ; value = Math.floor(value / 128)) {
      groups.unshift((value % 128) | (groups.length ? 0x80 : 0));
      if (value < 128) break;
    }
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, "").slice(2, 14);
  return tlv(0x17, Buffer.from(`${text}Z`, "ascii"));
}
