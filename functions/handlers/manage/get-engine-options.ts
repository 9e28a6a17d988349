/** GET /manage/engine-options — the engines this stage offers: its Bedrock models, and whether admins choose model servers. */

import * as z from "zod/mini";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { stageEngineOptions } from "#functions/http/chatbot-settings";

const response = z.object({
  bedrock_models: z
    .array(z.object({ model_id: z.string() }))
    .check(
      z.describe(
        "The Bedrock models (model ids, inference-profile ids or ARNs) the stage's operator made available: a chatbot's `bedrock` engine takes one of these.",
      ),
    ),
  custom_model_servers: z
    .boolean()
    .check(
      z.describe(
        "Whether admins may point an `openai` engine at a server of their choosing (`false`: the stage's operator sets servers; admins still choose the model and paste the key).",
      ),
    ),
});

export const contract = {
  operationId: "manageGetEngineOptions",
  summary: "List the engines on offer",
  description:
    "What a chatbot's engine may be on this stage: the Bedrock models to pick from, and whether an OpenAI-compatible engine's server is the admin's to choose.",
  tags: ["Management: chatbots"],
  auth: "manage",
  access: "viewer",
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", undefined, undefined, undefined, typeof response>;

export const handler = apiHandler(contract, async () => {
  const options = stageEngineOptions();
  return {
    body: {
      bedrock_models: options.bedrockModels.map((modelId) => ({ model_id: modelId })),
      custom_model_servers: options.customModelServers,
    },
  };
});
