/**
 * Look-up settings read from the environment, shared by the message Lambda and the operator CLI:
 *
 *   TOOL_CREDENTIALS_KEY_ID      KMS key (id or ARN) sealing tool credentials; set by the stack
 *   TOOL_CREDENTIALS_KEY_FILE    local runtime only: a 32-byte key file (`.local/tool-credentials.key`)
 *   TOOL_HTTP_ORIGIN_OVERRIDES   local runtime only: JSON {"https://real.origin": "http://127.0.0.1:port"}
 *                                sending a platform's requests to a local fake (the sample shop)
 *   OUTBOUND_ALLOW_PRIVATE       local runtime only: the loopback `address:port` list of local fakes
 *                                any outbound fetch may reach (net/outbound-address.ts); the fakes
 *                                of TOOL_HTTP_ORIGIN_OVERRIDES must be on it
 *
 * The local settings are ignored wherever `AWS_LAMBDA_FUNCTION_NAME` is set: Lambda always sets it
 * (a reserved variable no configuration can remove), so a deployed function can never be pointed
 * at a loopback address or another origin, nor decrypt with a key file.
 */
import { allowListFromEnvironment } from "#functions/net/outbound-address";
import { type EnvelopeKey, envelopeKeyFrom } from "#functions/secrets/envelope";
import type { HttpGetOptions } from "#functions/tools/http-get";

export interface ToolEnvironment {
  /** Absent: tools cannot be given credentials or use them. */
  credentialKey?: EnvelopeKey;
  http: Pick<HttpGetOptions, "allowPrivate" | "originOverrides">;
}

export function toolEnvironment(env: Readonly<Record<string, string | undefined>>): ToolEnvironment {
  const local = env.AWS_LAMBDA_FUNCTION_NAME === undefined;
  const credentialKey = envelopeKeyFrom(env, {
    kmsKeyId: "TOOL_CREDENTIALS_KEY_ID",
    keyFile: "TOOL_CREDENTIALS_KEY_FILE",
  });
  const http: ToolEnvironment["http"] = {};
  const allowPrivate = allowListFromEnvironment(env);
  if (allowPrivate.length > 0) http.allowPrivate = allowPrivate;
  if (local && env.TOOL_HTTP_ORIGIN_OVERRIDES)
    http.originOverrides = parseOverrides(env.TOOL_HTTP_ORIGIN_OVERRIDES);
  return { ...(credentialKey ? { credentialKey } : {}), http };
}

function parseOverrides(json: string): Record<string, string> {
  const parsed: unknown = JSON.parse(json);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error("TOOL_HTTP_ORIGIN_OVERRIDES must be a JSON object of origin → base URL");
  const overrides: Record<string, string> = {};
  for (const [origin, target] of Object.entries(parsed)) {
    if (typeof target !== "string") throw new Error("TOOL_HTTP_ORIGIN_OVERRIDES values must be URLs");
    overrides[new URL(origin).origin] = new URL(target).origin;
  }
  return overrides;
}
