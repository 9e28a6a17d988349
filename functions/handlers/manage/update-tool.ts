/** PATCH /manage/chatbots/{chatbot_id}/tools/{tool_id} — changes settings (merged), name, cap, or credentials. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { updateTool } from "#functions/domain/tools";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter, toolIdParameter } from "#functions/http/manage-inputs";
import { toolView, toToolView } from "#functions/http/manage-views";
import {
  lazyToolsContext,
  requestsPerMinute,
  toolConfig,
  toolCredentials,
  toolDescription,
  toolName,
} from "#functions/http/tool-inputs";

const path = z.object({ chatbot_id: chatbotIdParameter, tool_id: toolIdParameter });
const body = z.object({
  name: z.optional(toolName),
  config: z.optional(toolConfig),
  credentials: z.optional(toolCredentials),
  description: z.optional(toolDescription),
  requests_per_minute: z.optional(requestsPerMinute),
});
const response = toolView;

export const contract = {
  operationId: "manageUpdateTool",
  summary: "Change a look-up tool",
  description:
    "`config` is merged into the current settings; `credentials` replaces all of them (write-only); an empty `description` goes back to the template's. Changed meanwhile by someone else: 409.",
  tags: ["Management: tools"],
  auth: "manage",
  access: "admin",
  path,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const tools = lazyToolsContext(contextFromEnvironment());

export const handler = apiHandler(contract, async ({ caller, path, body }) => ({
  body: toToolView(
    await updateTool(tools(), {
      organizationId: caller.organizationId,
      chatbotId: path.chatbot_id,
      toolId: path.tool_id,
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.config === undefined ? {} : { config: body.config }),
      ...(body.credentials === undefined ? {} : { credentials: body.credentials }),
      ...(body.description === undefined ? {} : { description: body.description }),
      ...(body.requests_per_minute === undefined ? {} : { requestsPerMinute: body.requests_per_minute }),
    }),
  ),
}));
