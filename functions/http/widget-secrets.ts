/**
 * Where widgets' identity secrets are sealed, from the environment:
 *
 *   WIDGET_SECRETS_KEY_ID     KMS key (set by the stack)
 *   WIDGET_SECRETS_KEY_FILE   local runtime only: a 32-byte key file instead (`.local/widget-secrets.key`)
 *
 * Their own key, as every kind of secret has: a function that may open identity secrets opens
 * nothing else.
 */
import { type EnvelopeCipher, envelopeCipherFor, envelopeKeyFrom } from "#functions/secrets/envelope";

export function widgetSecretsCipher(
  env: Readonly<Record<string, string | undefined>> = process.env,
): EnvelopeCipher | undefined {
  return envelopeCipherFor(
    envelopeKeyFrom(env, { kmsKeyId: "WIDGET_SECRETS_KEY_ID", keyFile: "WIDGET_SECRETS_KEY_FILE" }),
  );
}
