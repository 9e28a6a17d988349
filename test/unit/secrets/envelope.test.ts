import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KMSClient } from "@aws-sdk/client-kms";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createKmsEnvelopeCipher,
  createLocalEnvelopeCipher,
  type EnvelopeCipher,
  EnvelopeDecryptError,
} from "#functions/secrets/envelope";
import { type FakeKms, startFakeKms } from "#test/unit/tools/support/fake-kms";

const secret = JSON.stringify({
  consumerKey: "ck_live_abcdef0123456789",
  consumerSecret: "cs_live_9876543210fedcba",
});
const context = { organizationId: "org-1", toolId: "tool-1" };

/** Flips one bit of the base64url part `index` of an envelope. */
function tamper(envelope: string, index: number): string {
  const parts = envelope.split(".");
  const bytes = Buffer.from(parts[index] ?? "", "base64url");
  bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
  parts[index] = bytes.toString("base64url");
  return parts.join(".");
}

function behavesAsCipher(name: string, make: () => { cipher: EnvelopeCipher; other: EnvelopeCipher }) {
  describe(name, () => {
    it("round-trips a secret and never shows it in the envelope", async () => {
      // Prepare
      const { cipher } = make();
      // Act
      const envelope = await cipher.encrypt(secret, context);
      const decrypted = await cipher.decrypt(envelope, context);
      // Assess
      expect(decrypted).toBe(secret);
      expect(envelope).not.toContain("ck_live");
      expect(Buffer.from(envelope.replaceAll(".", ""), "base64url").toString("latin1")).not.toContain(
        "ck_live",
      );
    });

    it("gives a different envelope each time (fresh IV and data key)", async () => {
      const { cipher } = make();
      expect(await cipher.encrypt(secret, context)).not.toBe(await cipher.encrypt(secret, context));
    });

    it("refuses another organization's or tool's context", async () => {
      // Prepare
      const { cipher } = make();
      const envelope = await cipher.encrypt(secret, context);
      // Act / Assess
      await expect(cipher.decrypt(envelope, { ...context, organizationId: "org-2" })).rejects.toBeInstanceOf(
        EnvelopeDecryptError,
      );
      await expect(cipher.decrypt(envelope, { ...context, toolId: "tool-2" })).rejects.toBeInstanceOf(
        EnvelopeDecryptError,
      );
    });

    it("keeps a tool's credentials and a webhook endpoint's secret apart, even with equal ids", async () => {
      // Prepare
      const { cipher } = make();
      const endpoint = { organizationId: "org-1", webhookEndpointId: "tool-1" };
      // Act
      const toolEnvelope = await cipher.encrypt(secret, context);
      const endpointEnvelope = await cipher.encrypt("whsec_abc", endpoint);
      // Assess
      expect(await cipher.decrypt(endpointEnvelope, endpoint)).toBe("whsec_abc");
      await expect(cipher.decrypt(toolEnvelope, endpoint)).rejects.toBeInstanceOf(EnvelopeDecryptError);
      await expect(cipher.decrypt(endpointEnvelope, context)).rejects.toBeInstanceOf(EnvelopeDecryptError);
      await expect(
        cipher.decrypt(endpointEnvelope, { ...endpoint, organizationId: "org-2" }),
      ).rejects.toBeInstanceOf(EnvelopeDecryptError);
    });

    it("detects tampering with the ciphertext", async () => {
      const { cipher } = make();
      const envelope = await cipher.encrypt(secret, context);
      const last = envelope.split(".").length - 1;
      await expect(cipher.decrypt(tamper(envelope, last), context)).rejects.toBeInstanceOf(
        EnvelopeDecryptError,
      );
      await expect(cipher.decrypt(`${envelope}.x`, context)).rejects.toBeInstanceOf(EnvelopeDecryptError);
      await expect(cipher.decrypt("garbage", context)).rejects.toBeInstanceOf(EnvelopeDecryptError);
    });

    it("cannot be opened with another key, and the error holds no secret", async () => {
      // Prepare
      const { cipher, other } = make();
      const envelope = await cipher.encrypt(secret, context);
      // Act
      const error = await other.decrypt(envelope, context).then(
        () => undefined,
        (e: unknown) => e,
      );
      // Assess
      expect(error).toBeInstanceOf(EnvelopeDecryptError);
      expect(JSON.stringify(error) + String(error)).not.toContain("ck_live");
    });
  });
}

describe("credential ciphers", () => {
  let kms: FakeKms;
  let dir: string;

  beforeAll(async () => {
    kms = await startFakeKms(["key-a", "key-b"]);
    dir = await mkdtemp(join(tmpdir(), "tool-keys-"));
  });
  afterAll(async () => {
    await kms.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const kmsClient = () =>
    new KMSClient({
      endpoint: kms.endpoint,
      region: "eu-west-1",
      credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "test-secret" },
    });

  behavesAsCipher("KMS envelope encryption", () => ({
    cipher: createKmsEnvelopeCipher({ client: kmsClient(), keyId: kms.keyArn("key-a") }),
    other: createKmsEnvelopeCipher({ client: kmsClient(), keyId: kms.keyArn("key-b") }),
  }));

  behavesAsCipher("local key file", () => ({
    cipher: createLocalEnvelopeCipher({ keyFile: join(dir, "a.key") }),
    other: createLocalEnvelopeCipher({ keyFile: join(dir, "b.key") }),
  }));

  it("KMS: asks for an AES-256 data key bound to organization and tool, and never sends the secret", async () => {
    // Prepare
    const cipher = createKmsEnvelopeCipher({ client: kmsClient(), keyId: kms.keyArn("key-a") });
    kms.calls.length = 0;
    // Act
    const envelope = await cipher.encrypt(secret, context);
    await cipher.decrypt(envelope, context);
    // Assess
    expect(kms.calls.map((c) => c.target)).toEqual(["TrentService.GenerateDataKey", "TrentService.Decrypt"]);
    expect(kms.calls[0]?.body).toMatchObject({ KeySpec: "AES_256", EncryptionContext: context });
    expect(kms.calls[1]?.body).toMatchObject({ EncryptionContext: context });
    expect(JSON.stringify(kms.calls)).not.toContain("ck_live");
    expect(envelope.startsWith("kms1.")).toBe(true);
  });

  it("KMS: a tampered data key is refused by KMS", async () => {
    const cipher = createKmsEnvelopeCipher({ client: kmsClient(), keyId: kms.keyArn("key-a") });
    const envelope = await cipher.encrypt(secret, context);
    await expect(cipher.decrypt(tamper(envelope, 1), context)).rejects.toBeInstanceOf(EnvelopeDecryptError);
  });

  it("local: creates a 32-byte key file with mode 0600 and reuses it", async () => {
    // Prepare
    const keyFile = join(dir, "created.key");
    // Act
    const envelope = await createLocalEnvelopeCipher({ keyFile }).encrypt(secret, context);
    const again = await createLocalEnvelopeCipher({ keyFile }).decrypt(envelope, context);
    // Assess
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(keyFile, "utf8")).trim(), "base64")).toHaveLength(32);
    expect(again).toBe(secret);
  });

  it("local: refuses a key file that does not hold 32 bytes", async () => {
    const keyFile = join(dir, "short.key");
    await writeFile(keyFile, "c2hvcnQ=\n", { mode: 0o600 });
    await expect(createLocalEnvelopeCipher({ keyFile }).encrypt(secret, context)).rejects.toThrow(/32-byte/);
  });
});
