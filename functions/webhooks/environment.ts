/**
 * Webhook settings from the environment, shared by the functions, the operator side and tests:
 *
 *   WEBHOOK_SECRETS_KEY_ID     KMS key sealing signing secrets (set by the stack)
 *   WEBHOOK_SECRETS_KEY_FILE   local runtime only: a 32-byte key file instead (`.local/webhook-secrets.key`)
 *   OUTBOUND_ALLOW_PRIVATE     local runtime only: the shared allow list of loopback `address:port`
 *                              endpoints (net/outbound-address.ts); such an endpoint may be plain http
 *   WEBHOOK_QUEUE_URL          the delivery queue (webhooks/queue.ts)
 *   WEBHOOK_* timings          webhooks/timings.ts
 * The local-only settings are ignored wherever AWS_LAMBDA_FUNCTION_NAME is set (always, on Lambda).
 */
import {
  type EnvelopeCipher,
  type EnvelopeKey,
  envelopeCipherFor,
  envelopeKeyFrom,
} from "#functions/secrets/envelope";
import type { StoredSigningSecret, WebhookEndpointRecord } from "#functions/store/items";

export function webhookSecretsKey(
  env: Readonly<Record<string, string | undefined>> = process.env,
): EnvelopeKey | undefined {
  return envelopeKeyFrom(env, { kmsKeyId: "WEBHOOK_SECRETS_KEY_ID", keyFile: "WEBHOOK_SECRETS_KEY_FILE" });
}

export function webhookSecretsCipher(
  env: Readonly<Record<string, string | undefined>> = process.env,
): EnvelopeCipher | undefined {
  return envelopeCipherFor(webhookSecretsKey(env));
}

const OPENED_SECRET_MS = 5 * 60_000;

/**
 * Opens endpoints' sealed secrets, keeping each plaintext a few minutes per Lambda instance so an
 * attempt rarely waits on (or pays for) a KMS Decrypt.
 */
export function createSecretOpener(
  cipher: EnvelopeCipher | undefined,
  now: () => number = Date.now,
): (endpoint: WebhookEndpointRecord, secret: StoredSigningSecret) => Promise<string> {
  const cache = new Map<string, { value: Promise<string>; until: number }>();
  return (endpoint, secret) => {
    if (!cipher) return Promise.reject(new Error("no webhook-secrets key is configured"));
    const key = `${endpoint.organizationId}\n${endpoint.endpointId}\n${secret.envelope}`;
    const cached = cache.get(key);
    if (cached && cached.until > now()) return cached.value;
    for (const [entry, { until }] of cache) if (until <= now()) cache.delete(entry);
    const value = cipher.decrypt(secret.envelope, {
      organizationId: endpoint.organizationId,
      webhookEndpointId: endpoint.endpointId,
    });
    value.catch(() => cache.delete(key));
    cache.set(key, { value, until: now() + OPENED_SECRET_MS });
    return value;
  };
}
