/**
 * Encryption of tool credentials at rest, behind one interface with two implementations:
 *
 * - KMS envelope encryption: `GenerateDataKey` (AES_256) per secret, the secret sealed locally with
 *   AES-256-GCM, the KMS-encrypted data key stored in the envelope. The KMS encryption context
 *   `{organizationId, toolId}` binds the key to its owner (and shows up in CloudTrail), and the same
 *   pair is the GCM additional data, so an envelope copied to another tool or tenant fails to open.
 * - A local key file (32 random bytes, base64) for the local runtime, created with mode 0600.
 *
 * Envelopes are `kms1.<dataKey>.<iv>.<ciphertext+tag>` / `local1.<iv>.<ciphertext+tag>` (base64url).
 * Errors never carry plaintext, keys or the envelope.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { open, readFile } from "node:fs/promises";
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from "@aws-sdk/client-kms";

export interface CredentialContext {
  organizationId: string;
  toolId: string;
}

export interface CredentialCipher {
  encrypt(plaintext: string, context: CredentialContext): Promise<string>;
  decrypt(envelope: string, context: CredentialContext): Promise<string>;
}

/** The one error decryption throws, whatever went wrong (tampering, wrong context, wrong key). */
export class CredentialDecryptError extends Error {
  constructor() {
    super("Credential envelope could not be decrypted");
    this.name = "CredentialDecryptError";
  }
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64url");
const unb64 = (text: string): Buffer => Buffer.from(text, "base64url");

function additionalData(context: CredentialContext): Buffer {
  return Buffer.from(
    JSON.stringify(["chatbot-tool-credential", context.organizationId, context.toolId]),
    "utf8",
  );
}

function seal(
  key: Uint8Array,
  plaintext: string,
  context: CredentialContext,
): { iv: Buffer; sealed: Buffer } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(additionalData(context));
  const sealed = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return { iv, sealed };
}

function unseal(key: Uint8Array, iv: Buffer, sealed: Buffer, context: CredentialContext): string {
  if (iv.length !== IV_BYTES || sealed.length < TAG_BYTES) throw new CredentialDecryptError();
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, iv);
    decipher.setAAD(additionalData(context));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
  } catch {
    throw new CredentialDecryptError();
  }
}

function kmsContext(context: CredentialContext): Record<string, string> {
  return { organizationId: context.organizationId, toolId: context.toolId };
}

export function createKmsCredentialCipher(options: { client: KMSClient; keyId: string }): CredentialCipher {
  const { client, keyId } = options;
  return {
    async encrypt(plaintext, context) {
      const dataKey = await client.send(
        new GenerateDataKeyCommand({
          KeyId: keyId,
          KeySpec: "AES_256",
          EncryptionContext: kmsContext(context),
        }),
      );
      if (!dataKey.Plaintext || !dataKey.CiphertextBlob || dataKey.Plaintext.length !== KEY_BYTES) {
        throw new Error("KMS returned no usable data key");
      }
      try {
        const { iv, sealed } = seal(dataKey.Plaintext, plaintext, context);
        return `kms1.${b64(dataKey.CiphertextBlob)}.${b64(iv)}.${b64(sealed)}`;
      } finally {
        dataKey.Plaintext.fill(0);
      }
    },
    async decrypt(envelope, context) {
      const [version, wrappedKey, iv, sealed, extra] = envelope.split(".");
      if (version !== "kms1" || !wrappedKey || !iv || !sealed || extra !== undefined)
        throw new CredentialDecryptError();
      let key: Uint8Array | undefined;
      try {
        const result = await client.send(
          new DecryptCommand({
            CiphertextBlob: unb64(wrappedKey),
            KeyId: keyId,
            EncryptionContext: kmsContext(context),
          }),
        );
        key = result.Plaintext;
      } catch (error) {
        // Wrong context, wrong key or a tampered data key all surface as one error; outages stay distinct.
        const name = error instanceof Error ? error.name : "";
        if (["InvalidCiphertextException", "IncorrectKeyException", "NotFoundException"].includes(name)) {
          throw new CredentialDecryptError();
        }
        throw new Error(`KMS Decrypt failed (${name || "unknown error"})`);
      }
      if (!key || key.length !== KEY_BYTES) throw new CredentialDecryptError();
      try {
        return unseal(key, unb64(iv), unb64(sealed), context);
      } finally {
        key.fill(0);
      }
    },
  };
}

/** Reads the 32-byte key (base64 text, or 32 raw bytes); creates it with mode 0600 when absent. */
export async function loadOrCreateKeyFile(path: string): Promise<Buffer> {
  try {
    const handle = await open(path, "wx", 0o600);
    try {
      await handle.writeFile(`${randomBytes(KEY_BYTES).toString("base64")}\n`, "utf8");
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const raw = await readFile(path);
  if (raw.length === KEY_BYTES) return raw;
  const decoded = Buffer.from(raw.toString("utf8").trim(), "base64");
  if (decoded.length !== KEY_BYTES) throw new Error(`Key file ${path} does not hold a 32-byte key`);
  return decoded;
}

export function createLocalCredentialCipher(options: { keyFile: string }): CredentialCipher {
  let key: Promise<Buffer> | undefined;
  const getKey = () => {
    key ??= loadOrCreateKeyFile(options.keyFile);
    return key;
  };
  return {
    async encrypt(plaintext, context) {
      const { iv, sealed } = seal(await getKey(), plaintext, context);
      return `local1.${b64(iv)}.${b64(sealed)}`;
    },
    async decrypt(envelope, context) {
      const [version, iv, sealed, extra] = envelope.split(".");
      if (version !== "local1" || !iv || !sealed || extra !== undefined) throw new CredentialDecryptError();
      return unseal(await getKey(), unb64(iv), unb64(sealed), context);
    },
  };
}
