/** POST /manage/chatbots/{chatbot_id}/tools — adds a look-up tool from a template, with its credentials. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { addTool } from "#functions/domain/tools";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { chatbotIdParameter } from "#functions/http/manage-inputs";
import { toolView, toToolView } from "#functions/http/manage-views";
import {
  lazyToolsContext,
  requestsPerMinute,
  toolConfig,
  toolCredentials,
  toolDescription,
  toolKind,
  toolName,
} from "#functions/http/tool-inputs";

const path = z.object({ chatbot_id: chatbotIdParameter });
const body = z.object({
  kind: toolKind,
  name: z.optional(toolName),
  config: z._default(toolConfig, {}),
  credentials: z._default(toolCredentials, {}),
  description: z.optional(toolDescription),
  requests_per_minute: z.optional(requestsPerMinute),
});
const response = toolView;

export const contract = {
  operationId: "manageAddTool",
  summary: "Add a look-up tool",
  description:
    "Adds a look-up tool to the chatbot (at most 10). Settings and credentials are checked against the template; credentials are encrypted and never shown again. Test it with POST …/test.",
  tags: ["Management: tools"],
  auth: "manage",
  access: "admin",
  status: 201,
  path,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"manage", typeof body, undefined, typeof path, typeof response>;

const tools = lazyToolsContext(contextFromEnvironment());

export const handler = apiHandler(contract, async ({ caller, path, body }) => ({
  body: toToolView(
    await addTool(tools(), {
      organizationId: caller.organizationId,
      chatbotId: path.chatbot_id,
      kind: body.kind,
      config: body.config,
      credentials: body.credentials,
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.description === undefined ? {} : { description: body.description }),
      ...(body.requests_per_minute === undefined ? {} : { requestsPerMinute: body.requests_per_minute }),
    }),
  ),
}));
