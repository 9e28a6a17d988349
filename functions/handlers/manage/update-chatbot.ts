/** PATCH /manage/chatbots/{chatbot_id} — changes the settings sent; the others stay. */

import * as z from "zod/mini";
import { getChatbot, updateChatbot } from "#functions/domain/chatbots";
import { contextFromEnvironment } from "#functions/domain/context";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import {
  chatbotSettingsFrom,
  lazyChatbotsContext,
  stageEngineOptions,
} from "#functions/http/chatbot-settings";
import {
  chatbotHandoffSettings,
  chatbotIdParameter,
  chatbotName,
  chatbotSettings,
} from "#functions/http/manage-inputs";
import { chatbotView, toChatbotView } from "#functions/http/manage-views";

const path = z.object({ chatbot_id: chatbotIdParameter });
const body = z.object({
  name: z.optional(chatbotName),
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
  operationId: "manageUpdateChatbot",
  summary: "Change a chatbot",
  description:
    "Changes the settings sent, keeps the others. A Bedrock model is one of the stage's (GET /manage/engine-options). An `openai` engine's `api_key` is write-only (sealed, shown as a masked hint); its server is the admin's to choose unless the stage's operator forbids custom servers (then 403), and a change of server drops the stored key; a key secret of the stage is named by operators only. Changed meanwhile by someone else: 409.",
  tags: ["Management: chatbots"],
  auth: "manage",
  access: "admin",
  path,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const ctx = lazyChatbotsContext(contextFromEnvironment());

export const handler = apiHandler(contract, async ({ caller, path, body }) => {
  const current = await getChatbot(ctx(), caller.organizationId, path.chatbot_id);
  const { settings, modelKey } = chatbotSettingsFrom(body, caller, current, stageEngineOptions());
  return {
    body: toChatbotView(
      await updateChatbot(
        ctx(),
        caller.organizationId,
        path.chatbot_id,
        { ...settings, ...(body.name === undefined ? {} : { name: body.name }) },
        modelKey,
      ),
    ),
  };
});
