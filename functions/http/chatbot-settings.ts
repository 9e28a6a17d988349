/**
 * A chatbot's settings as the management API takes them (snake_case) → the domain's settings.
 *
 * The engine's rules live here, because they depend on who is asking and on the stage:
 * - A Bedrock model is one of the stage's models (`BEDROCK_MODEL_IDS`, listed by GET
 *   /manage/engine-options); any other id is a 422 naming the field.
 * - An `openai` engine's server (`base_url`) is the admin's to choose unless the stage forbids
 *   custom model servers (`CUSTOM_MODEL_SERVERS=forbidden`): then only a platform operator sets
 *   it (a 403 otherwise). Either way every model call passes the outbound-address guard.
 * - Its key: `api_key` is a key an admin pastes (write-only: sealed, never shown again, only a
 *   masked hint); `api_key_secret` names a secret of the stage, which only operators may name (a
 *   tenant naming one could send another tenant's key to a server of its choosing). A key belongs
 *   to its server: a change of server drops the stored key unless a new one comes with it.
 */

import { isIP } from "node:net";
import { type EngineOptions, engineOptionsFromEnvironment } from "#functions/agent/engine-options";
import { handoffDefaults } from "#functions/agent/handoff";
import type { ChatbotSettings, ChatbotsContext } from "#functions/domain/chatbots";
import type { DomainContext } from "#functions/domain/context";
import { AppError } from "#functions/errors";
import type { OrganizationCaller } from "#functions/http/api-handler";
import {
  type AllowedEndpoint,
  allowListFromEnvironment,
  checkEndpoint,
} from "#functions/net/outbound-address";
import { envelopeCipherFor } from "#functions/secrets/envelope";
import type { EngineConfig, HandoffSettings } from "#functions/store/items";

export interface ChatbotSettingsBody {
  engine?: EngineBody;
  instructions?: string | undefined;
  welcome_message?: string | undefined;
  fallback_reply?: string | undefined;
  temperature?: number | undefined;
  max_output_tokens?: number | undefined;
  history_window?: number | undefined;
  handoff?:
    | { allowed?: boolean | undefined; message?: string | undefined; phrases?: string[] | undefined }
    | undefined;
  inactivity_timeout_minutes?: number | null | undefined;
}

export type EngineBody =
  | { kind: "scripted" }
  | { kind: "bedrock"; model_id: string }
  | {
      kind: "openai";
      base_url?: string | undefined;
      model: string;
      api_key?: string | null | undefined;
      api_key_secret?: string | null | undefined;
    };

/** The stage's engine rules the settings are checked against (agent/engine-options.ts). */
export type EnginePolicy = Pick<EngineOptions, "bedrockModels" | "customModelServers"> & {
  /** Local runtime and tests only: loopback fakes a model server may be (net/outbound-address.ts). */
  allowPrivate?: readonly AllowedEndpoint[];
};

/** The stage's engine options (and the local allow list the guard uses too), read once per instance. */
export const stageEngineOptions = (() => {
  let options: (EngineOptions & EnginePolicy) | undefined;
  return (): EngineOptions & EnginePolicy => {
    options ??= {
      ...engineOptionsFromEnvironment(process.env),
      allowPrivate: allowListFromEnvironment(process.env),
    };
    return options;
  };
})();

/**
 * A server given as an IP address must be a public one: refused when saved, rather than only when
 * every call to it is (the guard still judges each connection, whatever a host name resolves to).
 */
function serverAddressProblem(baseUrl: string, policy: EnginePolicy): string | undefined {
  const url = new URL(baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0) return undefined;
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const verdict = checkEndpoint(host, port, policy.allowPrivate ?? []);
  return verdict.allowed ? undefined : verdict.reason;
}

/** The handler's context with the cipher that seals model keys, made on first use. */
export function lazyChatbotsContext(ctx: DomainContext): () => ChatbotsContext {
  let made: ChatbotsContext | undefined;
  return () => {
    if (!made) {
      const cipher = envelopeCipherFor(stageEngineOptions().modelKeys);
      made = {
        get db() {
          return ctx.db;
        },
        clock: ctx.clock,
        ...(cipher ? { modelKeys: cipher } : {}),
      };
    }
    return made;
  };
}

/** An engine as the body asks for it: the engine to store, and a pasted key to seal with it (plaintext). */
export interface EngineChoice {
  engine: EngineConfig;
  modelKey?: string;
}

const refused = (detail: string) => new AppError("forbidden", { detail });

const fieldProblem = (field: string, type: string, msg: string) =>
  new AppError("invalid_argument", {
    detail: [{ type, loc: ["body", "engine", field], msg, input: null }],
  });

export function engineFrom(
  engine: EngineBody,
  caller: OrganizationCaller,
  current: EngineConfig | undefined,
  policy: EnginePolicy,
): EngineChoice {
  switch (engine.kind) {
    case "scripted":
      return { engine: { kind: "scripted" } };
    case "bedrock":
      // Unchanged is always fine (the operator may have set it, or taken it off the list since).
      if (!(current?.kind === "bedrock" && current.modelId === engine.model_id)) {
        if (!policy.bedrockModels.includes(engine.model_id)) {
          throw fieldProblem(
            "model_id",
            "literal_error",
            policy.bedrockModels.length === 0
              ? "This stage offers no Bedrock models"
              : `Input should be one of the stage's Bedrock models (GET /manage/engine-options): ${policy.bedrockModels.join(", ")}`,
          );
        }
      }
      return { engine: { kind: "bedrock", modelId: engine.model_id } };
    case "openai": {
      const operator = caller.role === "operator" || caller.actingOperator;
      const previous = current?.kind === "openai" ? current : undefined;
      const baseUrl = engine.base_url ?? previous?.baseUrl;
      if (baseUrl === undefined) {
        throw fieldProblem("base_url", "missing", "Field required (an openai engine needs its server)");
      }
      const sameServer = previous?.baseUrl === baseUrl;
      const addressProblem = sameServer ? undefined : serverAddressProblem(baseUrl, policy);
      if (addressProblem) {
        throw fieldProblem(
          "base_url",
          "value_error",
          `Value error, the server's address is not a public one (${addressProblem}): only public addresses are reached`,
        );
      }
      if (!sameServer && !operator && !policy.customModelServers) {
        throw refused(
          "This stage's operator sets the model servers of openai engines; an admin may change the model or the key",
        );
      }
      if (typeof engine.api_key === "string" && typeof engine.api_key_secret === "string") {
        throw fieldProblem("api_key", "value_error", "Value error, give a key or a key secret, not both");
      }
      // An operator's secret: named by operators only; kept while the server stays and no key replaces it.
      const secret =
        engine.api_key_secret === null || typeof engine.api_key === "string"
          ? undefined
          : (engine.api_key_secret ?? (sameServer ? previous?.apiKeySecret : undefined));
      const namesAnotherSecret =
        typeof engine.api_key_secret === "string" &&
        !(sameServer && engine.api_key_secret === previous?.apiKeySecret);
      if (!operator && namesAnotherSecret) {
        throw refused("A key secret of the stage is named by platform operators; paste the key as api_key");
      }
      // A pasted key: kept while the server stays and nothing replaces it.
      const kept =
        engine.api_key === undefined && engine.api_key_secret === undefined && sameServer && previous?.apiKey
          ? { apiKey: previous.apiKey, ...(previous.apiKeyHint ? { apiKeyHint: previous.apiKeyHint } : {}) }
          : {};
      return {
        engine: {
          kind: "openai",
          baseUrl,
          model: engine.model,
          ...(secret ? { apiKeySecret: secret } : {}),
          ...kept,
        },
        ...(typeof engine.api_key === "string" ? { modelKey: engine.api_key } : {}),
      };
    }
  }
}

export function chatbotSettingsFrom(
  body: ChatbotSettingsBody,
  caller: OrganizationCaller,
  current: { engine: EngineConfig; handoff?: HandoffSettings | undefined } | undefined,
  policy: EnginePolicy,
): { settings: Partial<ChatbotSettings>; modelKey?: string } {
  const choice =
    body.engine === undefined ? undefined : engineFrom(body.engine, caller, current?.engine, policy);
  const currentHandoff = current?.handoff;
  const handoff = body.handoff;
  const settings: Partial<ChatbotSettings> = {
    ...(choice ? { engine: choice.engine } : {}),
    ...(body.instructions === undefined ? {} : { instructions: body.instructions }),
    ...(body.welcome_message === undefined ? {} : { welcomeMessage: body.welcome_message }),
    ...(body.fallback_reply === undefined ? {} : { fallbackReply: body.fallback_reply }),
    ...(body.temperature === undefined ? {} : { temperature: body.temperature }),
    ...(body.max_output_tokens === undefined ? {} : { maxOutputTokens: body.max_output_tokens }),
    ...(body.history_window === undefined ? {} : { historyWindow: body.history_window }),
    ...(handoff === undefined
      ? {}
      : {
          handoff: {
            ...(currentHandoff ?? handoffDefaults),
            ...(handoff.allowed === undefined ? {} : { allowed: handoff.allowed }),
            ...(handoff.message === undefined ? {} : { message: handoff.message }),
            ...(handoff.phrases === undefined ? {} : { phrases: handoff.phrases }),
          },
        }),
    ...(body.inactivity_timeout_minutes === undefined
      ? {}
      : { inactivityTimeoutMinutes: body.inactivity_timeout_minutes ?? undefined }),
  };
  return { settings, ...(choice?.modelKey === undefined ? {} : { modelKey: choice.modelKey }) };
}
