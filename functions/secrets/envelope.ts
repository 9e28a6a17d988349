/**
 * Encryption of secrets at rest (look-up tool credentials, webhook signing secrets, the model API
 * keys admins paste for their chatbots, widget identity secrets), behind one interface with two
 * implementations:
 *
 * - KMS envelope encryption: `GenerateDataKey` (AES_256) per secret, the secret sealed locally with
 *   AES-256-GCM, the KMS-encrypted data key stored in the envelope. The KMS encryption context
 *   (`{organizationId, toolId}`, `{organizationId, webhookEndpointId}` or `{organizationId,
 *   chatbotId}` or `{organizationId, widgetChatbotId}`) binds the key to its owner (and shows up in
 *   CloudTrail), and the same ids are the GCM additional data, so an envelope copied to another tool,
 *   endpoint, chatbot, widget or tenant fails to open.
 * - A local key file (32 random bytes, base64) for the local runtime, created with mode 0600.
 *
 * Each kind of secret has its own key (the stack creates one per kind), so a function that may open
 * webhook secrets cannot open tool credentials.
 *
 * Envelopes are `kms1.<dataKey>.<iv>.<ciphertext+tag>` / `local1.<iv>.<ciphertext+tag>` (base64url).
 * Errors never carry plaintext, keys or the envelope.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { open, readFile } from "node:fs/promises";
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from "@aws-sdk/client-kms";
import { awsClientOptions } from "#functions/aws-clients";

/**
 * Whose secret an envelope holds: a look-up tool's credentials, a webhook endpoint's signing secret,
 * a chatbot's model key, or the identity secret of a chatbot's widget.
 */
export type SealContext =
  | { organizationId: string; toolId: string }
  | { organizationId: string; webhookEndpointId: string }
  | { organizationId: string; chatbotId: string }
  | { organizationId: string; widgetChatbotId: string };

export interface EnvelopeCipher {
  encrypt(plaintext: string, context: SealContext): Promise<string>;
  decrypt(envelope: string, context: SealContext): Promise<string>;
}

/** The one error decryption throws, whatever went wrong (tampering, wrong context, wrong key). */
export class EnvelopeDecryptError extends Error {
  constructor() {
    super("Envelope could not be decrypted");
    this.name = "EnvelopeDecryptError";
  }
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64url");
const unb64 = (text: string): Buffer => Buffer.from(text, "base64url");

function additionalData(context: SealContext): Buffer {
  const owner =
    "toolId" in context
      ? ["chatbot-tool-credential", context.organizationId, context.toolId]
      : "webhookEndpointId" in context
        ? ["chatbot-webhook-secret", context.organizationId, context.webhookEndpointId]
        : "widgetChatbotId" in context
          ? ["chatbot-widget-identity-secret", context.organizationId, context.widgetChatbotId]
          : ["chatbot-model-key", context.organizationId, context.chatbotId];
  return Buffer.from(JSON.stringify(owner), "utf8");
}

function seal(key: Uint8Array, plaintext: string, context: SealContext): { iv: Buffer; sealed: Buffer } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(additionalData(context));
  const sealed = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return { iv, sealed };
}

function unseal(key: Uint8Array, iv: Buffer, sealed: Buffer, context: SealContext): string {
  if (iv.length !== IV_BYTES || sealed.length < TAG_BYTES) throw new EnvelopeDecryptError();
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, iv);
    decipher.setAAD(additionalData(context));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
  } catch {
    throw new EnvelopeDecryptError();
  }
}

function kmsContext(context: SealContext): Record<string, string> {
  return "toolId" in context
    ? { organizationId: context.organizationId, toolId: context.toolId }
    : "webhookEndpointId" in context
      ? { organizationId: context.organizationId, webhookEndpointId: context.webhookEndpointId }
      : "widgetChatbotId" in context
        ? { organizationId: context.organizationId, widgetChatbotId: context.widgetChatbotId }
        : { organizationId: context.organizationId, chatbotId: context.chatbotId };
}

export function createKmsEnvelopeCipher(options: { client: KMSClient; keyId: string }): EnvelopeCipher {
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
        throw new EnvelopeDecryptError();
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
          throw new EnvelopeDecryptError();
        }
        throw new Error(`KMS Decrypt failed (${name || "unknown error"})`);
      }
      if (!key || key.length !== KEY_BYTES) throw new EnvelopeDecryptError();
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

export function createLocalEnvelopeCipher(options: { keyFile: string }): EnvelopeCipher {
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
      if (version !== "local1" || !iv || !sealed || extra !== undefined) throw new EnvelopeDecryptError();
      return unseal(await getKey(), unb64(iv), unb64(sealed), context);
    },
  };
}

/** Where an envelope key lives: a KMS key (on AWS, and the operator CLI) or a local key file. */
export type EnvelopeKey = { kind: "kms"; keyId: string } | { kind: "key-file"; path: string };

/**
 * The key named by a KMS key variable, else (never in a Lambda, whose reserved
 * AWS_LAMBDA_FUNCTION_NAME is always set) by a key-file variable; undefined when neither is set.
 */
export function envelopeKeyFrom(
  env: Readonly<Record<string, string | undefined>>,
  names: { kmsKeyId: string; keyFile: string },
): EnvelopeKey | undefined {
  const keyId = env[names.kmsKeyId]?.trim();
  if (keyId) return { kind: "kms", keyId };
  const keyFile = env[names.keyFile]?.trim();
  return env.AWS_LAMBDA_FUNCTION_NAME === undefined && keyFile
    ? { kind: "key-file", path: keyFile }
    : undefined;
}

/** One KMS client per region, per process. */
const kmsClients = new Map<string, KMSClient>();

/** The cipher for the configured key, or undefined when none is configured. */
export function envelopeCipherFor(key: EnvelopeKey | undefined): EnvelopeCipher | undefined {
  if (!key) return undefined;
  if (key.kind === "key-file") return createLocalEnvelopeCipher({ keyFile: key.path });
  // A key ARN names its region, so the operator CLI works whatever AWS_REGION says.
  const region = /^arn:[^:]+:kms:([^:]+):/.exec(key.keyId)?.[1] ?? "";
  let client = kmsClients.get(region);
  if (!client) {
    client = new KMSClient({ ...awsClientOptions("keys"), ...(region ? { region } : {}) });
    kmsClients.set(region, client);
  }
  return createKmsEnvelopeCipher({ client, keyId: key.keyId });
}
