/** POST /manage/chatbots — a new chatbot (the scripted engine unless told otherwise). */

import * as z from "zod/mini";
import { createChatbot } from "#functions/domain/chatbots";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import {
  chatbotSettingsFrom,
  lazyChatbotsContext,
  stageEngineOptions,
} from "#functions/http/chatbot-settings";
import { chatbotHandoffSettings, chatbotName, chatbotSettings } from "#functions/http/manage-inputs";
import { chatbotView, toChatbotView } from "#functions/http/manage-views";

const body = z.object({
  name: chatbotName,
  engine: z.optional(chatbotSettings.engine),
  instructions: z.optional(chatbotSettings.instructions),
  welcome_message: z.optional(chatbotSettings.welcome_message),
  fallback_reply: z.optional(chatbotSettings.fallback_reply),
  temperature: z.optional(chatbotSettings.temperature),
  max_output_tokens: z.optional(chatbotSettings.max_output_tokens),
  history_window: z.optional(chatbotSettings.history_window),
  handoff: z.optional(chatbotHandoffSettings.handoff),
  inactivity_timeout_minutes: z.optional(chatbotHandoffSettings.inactivity_timeout_minutes),
});
const response = chatbotView;

export const contract = {
  operationId: "manageCreateChatbot",
  summary: "Create a chatbot",
  description:
    "Creates a chatbot; unset settings take their defaults (scripted engine, temperature 0.3, 800 output tokens, a history window of 20). A Bedrock model is one of the stage's (GET /manage/engine-options); an `openai` engine takes the admin's server (unless the stage forbids custom servers) and a write-only `api_key`.",
  tags: ["Management: chatbots"],
  auth: "manage",
  access: "admin",
  status: 201,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, undefined, typeof response>;

const ctx = lazyChatbotsContext(contextFromEnvironment());

export const handler = apiHandler(contract, async ({ caller, body }) => {
  const { settings, modelKey } = chatbotSettingsFrom(body, caller, undefined, stageEngineOptions());
  return {
    body: toChatbotView(
      await createChatbot(ctx(), {
        organizationId: caller.organizationId,
        ...settings,
        ...(modelKey === undefined ? {} : { modelKey }),
        name: body.name,
      }),
    ),
  };
});
