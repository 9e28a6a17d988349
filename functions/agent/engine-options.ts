/**
 * What engines this stage offers its organizations, from the function's environment (set by the
 * stack from the stage configuration, or by the local runtime):
 *
 *   BEDROCK_MODEL_IDS      the Bedrock models chatbots may use (the stage's `bedrockModelIds`,
 *                          comma-separated): the list admins pick from, and the only ids a chatbot
 *                          may be given through the management API
 *   CUSTOM_MODEL_SERVERS   `allowed` (default) or `forbidden` (the stage's
 *                          `customModelServers`): whether admins may point an OpenAI-compatible
 *                          engine at a server of their choosing; when forbidden, only platform
 *                          operators set a server
 *   MODEL_KEYS_KEY_ID      the KMS key sealing the model API keys admins paste (set by the stack)
 *   MODEL_KEYS_KEY_FILE    local runtime only: a 32-byte key file instead of KMS
 */
import { type EnvelopeKey, envelopeKeyFrom } from "#functions/secrets/envelope";

export interface EngineOptions {
  bedrockModels: readonly string[];
  customModelServers: boolean;
  /** Absent: no key configured, so no model key can be stored or used. */
  modelKeys?: EnvelopeKey;
}

export function engineOptionsFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): EngineOptions {
  const modelKeys = envelopeKeyFrom(env, { kmsKeyId: "MODEL_KEYS_KEY_ID", keyFile: "MODEL_KEYS_KEY_FILE" });
  return {
    bedrockModels: (env.BEDROCK_MODEL_IDS ?? "")
      .split(",")
      .map((id) => id.trim())
      .filter(Boolean),
    customModelServers: (env.CUSTOM_MODEL_SERVERS ?? "allowed").trim() !== "forbidden",
    ...(modelKeys ? { modelKeys } : {}),
  };
}
