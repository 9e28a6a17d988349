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
import { KMSClient } from "@aws-sdk/client-kms";
import { awsClientOptions } from "#functions/aws-clients";
import { allowListFromEnvironment } from "#functions/net/outbound-address";
import {
  type CredentialCipher,
  createKmsCredentialCipher,
  createLocalCredentialCipher,
} from "#functions/tools/credentials";
import type { HttpGetOptions } from "#functions/tools/http-get";

export type CredentialKey = { kind: "kms"; keyId: string } | { kind: "key-file"; path: string };

export interface ToolEnvironment {
  /** Absent: tools cannot be given credentials or use them. */
  credentialKey?: CredentialKey;
  http: Pick<HttpGetOptions, "allowPrivate" | "originOverrides">;
}

export function toolEnvironment(env: Readonly<Record<string, string | undefined>>): ToolEnvironment {
  const local = env.AWS_LAMBDA_FUNCTION_NAME === undefined;
  const keyId = env.TOOL_CREDENTIALS_KEY_ID?.trim();
  const keyFile = env.TOOL_CREDENTIALS_KEY_FILE?.trim();
  const credentialKey: CredentialKey | undefined = keyId
    ? { kind: "kms", keyId }
    : local && keyFile
      ? { kind: "key-file", path: keyFile }
      : undefined;
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

/** One KMS client per region, per process. */
const kmsClients = new Map<string, KMSClient>();

/** The cipher for the configured key, or undefined when none is configured. */
export function credentialCipherFor(key: CredentialKey | undefined): CredentialCipher | undefined {
  if (!key) return undefined;
  if (key.kind === "key-file") return createLocalCredentialCipher({ keyFile: key.path });
  // A key ARN names its region, so the operator CLI works whatever AWS_REGION says.
  const region = /^arn:[^:]+:kms:([^:]+):/.exec(key.keyId)?.[1] ?? "";
  let client = kmsClients.get(region);
  if (!client) {
    client = new KMSClient({ ...awsClientOptions("keys"), ...(region ? { region } : {}) });
    kmsClients.set(region, client);
  }
  return createKmsCredentialCipher({ client, keyId: key.keyId });
}
