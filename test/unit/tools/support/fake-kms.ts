/**
 * A small local KMS speaking the real JSON 1.1 protocol (`X-Amz-Target: TrentService.*`,
 * `application/x-amz-json-1.1`) for `GenerateDataKey` and `Decrypt`, so the real
 * `@aws-sdk/client-kms` can be pointed at it. Its ciphertext blobs are AES-GCM seals of the data key
 * under a per-key master key, with the key id and encryption context as additional data, so a wrong
 * context, another key or a tampered blob fail the way KMS does (InvalidCiphertextException).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeKms {
  endpoint: string;
  keyArn(alias: string): string;
  calls: { target: string; body: Record<string, unknown> }[];
  stop(): Promise<void>;
}

const REGION = "eu-west-1";
const ACCOUNT = "111122223333";

export async function startFakeKms(keyAliases: readonly string[]): Promise<FakeKms> {
  const keys = new Map(
    keyAliases.map((alias) => [`arn:aws:kms:${REGION}:${ACCOUNT}:key/${alias}`, randomBytes(32)]),
  );
  const calls: FakeKms["calls"] = [];
  const aad = (keyId: string, context: unknown) =>
    Buffer.from(JSON.stringify([keyId, Object.entries((context ?? {}) as Record<string, string>).sort()]));

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/x-amz-json-1.1" });
        res.end(JSON.stringify(body));
      };
      const fail = (type: string, message: string) => reply(400, { __type: type, message });
      const target = String(req.headers["x-amz-target"] ?? "");
      if (
        req.method !== "POST" ||
        !String(req.headers["content-type"]).startsWith("application/x-amz-json-1.1")
      ) {
        return fail("UnsupportedOperation", "JSON 1.1 POST expected");
      }
      if (!String(req.headers.authorization ?? "").startsWith("AWS4-HMAC-SHA256")) {
        return fail("MissingAuthenticationTokenException", "Request is missing Authentication Token");
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
      calls.push({ target, body });
      if (target === "TrentService.GenerateDataKey") {
        const keyId = String(body.KeyId);
        const master = keys.get(keyId);
        if (!master) return fail("NotFoundException", `Key '${keyId}' does not exist`);
        if (body.KeySpec !== "AES_256") return fail("ValidationException", "KeySpec must be AES_256");
        const plaintext = randomBytes(32);
        const iv = randomBytes(12);
        const cipher = createCipheriv("aes-256-gcm", master, iv);
        cipher.setAAD(aad(keyId, body.EncryptionContext));
        const sealed = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
        const idBytes = Buffer.from(keyId);
        const blob = Buffer.concat([Buffer.from([idBytes.length]), idBytes, iv, sealed]);
        return reply(200, {
          CiphertextBlob: blob.toString("base64"),
          Plaintext: plaintext.toString("base64"),
          KeyId: keyId,
        });
      }
      if (target === "TrentService.Decrypt") {
        const blob = Buffer.from(String(body.CiphertextBlob), "base64");
        const idLength = blob[0] ?? 0;
        const keyId = blob.subarray(1, 1 + idLength).toString();
        const master = keys.get(keyId);
        if (!master) return fail("InvalidCiphertextException", "");
        if (body.KeyId !== undefined && body.KeyId !== keyId) return fail("IncorrectKeyException", "");
        try {
          const iv = blob.subarray(1 + idLength, 13 + idLength);
          const sealed = blob.subarray(13 + idLength);
          const decipher = createDecipheriv("aes-256-gcm", master, iv);
          decipher.setAAD(aad(keyId, body.EncryptionContext));
          decipher.setAuthTag(sealed.subarray(sealed.length - 16));
          const plaintext = Buffer.concat([
            decipher.update(sealed.subarray(0, sealed.length - 16)),
            decipher.final(),
          ]);
          return reply(200, {
            KeyId: keyId,
            Plaintext: plaintext.toString("base64"),
            EncryptionAlgorithm: "SYMMETRIC_DEFAULT",
          });
        } catch {
          return fail("InvalidCiphertextException", "");
        }
      }
      return fail("UnknownOperationException", "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    keyArn: (alias) => `arn:aws:kms:${REGION}:${ACCOUNT}:key/${alias}`,
    calls,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
