/**
 * A chatbot's settings as the management API takes them (snake_case) → the domain's settings.
 *
 * One rule lives here: an `openai` engine's server (`base_url`) and key secret (`api_key_secret`)
 * are the platform operator's to set. The message function sends the conversation to that server
 * from the service's own network, with the key it reads from the stage's secrets, so a tenant who
 * could choose them could reach internal addresses or another tenant's secret. Admins may pick the
 * engine kind and the model; a change of server or secret needs an operator (acting on the
 * organization), otherwise it is a 403.
 */
import { handoffDefaults } from "#functions/agent/handoff";
import type { ChatbotSettings } from "#functions/domain/chatbots";
import { AppError } from "#functions/errors";
import type { OrganizationCaller } from "#functions/http/api-handler";
import type { EngineConfig, HandoffSettings } from "#functions/store/items";

export interface ChatbotSettingsBody {
  engine?:
    | { kind: "scripted" }
    | { kind: "bedrock"; model_id: string }
    | {
        kind: "openai";
        base_url?: string | undefined;
        model: string;
        api_key_secret?: string | null | undefined;
      };
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

const operatorOnly = () =>
  new AppError("forbidden", {
    detail:
      "An openai engine's server and key secret are set by platform operators; an admin may change its model",
  });

function engineFrom(
  engine: NonNullable<ChatbotSettingsBody["engine"]>,
  caller: OrganizationCaller,
  current: EngineConfig | undefined,
): EngineConfig {
  switch (engine.kind) {
    case "scripted":
      return { kind: "scripted" };
    case "bedrock":
      return { kind: "bedrock", modelId: engine.model_id };
    case "openai": {
      const previous = current?.kind === "openai" ? current : undefined;
      const baseUrl = engine.base_url ?? previous?.baseUrl;
      if (baseUrl === undefined) {
        throw new AppError("invalid_argument", {
          detail: [
            {
              type: "missing",
              loc: ["body", "engine", "base_url"],
              msg: "Field required (an openai engine needs its server)",
              input: null,
            },
          ],
        });
      }
      // A key secret belongs to its server: kept only while the server stays the same.
      const apiKeySecret =
        engine.api_key_secret === null
          ? undefined
          : (engine.api_key_secret ?? (previous?.baseUrl === baseUrl ? previous.apiKeySecret : undefined));
      const mayConfigureServer = caller.role === "operator" || caller.actingOperator;
      if (!mayConfigureServer && (baseUrl !== previous?.baseUrl || apiKeySecret !== previous?.apiKeySecret)) {
        throw operatorOnly();
      }
      return { kind: "openai", baseUrl, model: engine.model, ...(apiKeySecret ? { apiKeySecret } : {}) };
    }
  }
}

export function chatbotSettingsFrom(
  body: ChatbotSettingsBody,
  caller: OrganizationCaller,
  currentEngine: EngineConfig | undefined,
  currentHandoff?: HandoffSettings,
): Partial<ChatbotSettings> {
  const handoff = body.handoff;
  return {
    ...(body.engine === undefined ? {} : { engine: engineFrom(body.engine, caller, currentEngine) }),
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
}
