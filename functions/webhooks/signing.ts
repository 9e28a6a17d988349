/**
 * Standard Webhooks signing: every delivery carries `webhook-id` (the event's id, the same on every
 * retry), `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`, a
 * space-separated list of `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, one per secret
 * that currently signs (two while a rotated secret's overlap lasts). A secret is `whsec_` followed by
 * the base64 of its random key bytes; the HMAC key is those bytes.
 */
import { createHmac, randomBytes } from "node:crypto";

const SECRET_PREFIX = "whsec_";
/** 32 random bytes: the HMAC-SHA256 block-size-safe length Standard Webhooks libraries generate. */
const SECRET_BYTES = 32;

export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString("base64")}`;
}

function keyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("a signing secret starts with whsec_");
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
  if (key.length < 24) throw new Error("a signing secret holds at least 24 bytes");
  return key;
}

/** `v1,<signature>` for one secret. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`, "utf8");
  return `v1,${mac.digest("base64")}`;
}

export interface WebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/** The three Standard Webhooks headers for one attempt, signed by every given secret (newest first). */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): WebhookHeaders {
  if (secrets.length === 0) throw new Error("no signing secret");
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": secrets.map((secret) => sign(secret, id, timestampSeconds, body)).join(" "),
  };
}
