/** POST /api/conversation/{conversation_id}/handoff — hands the conversation to a person of the organization. */

import * as z from "zod/mini";
import { withContact } from "#functions/domain/contacts";
import { contextFromEnvironment } from "#functions/domain/context";
import { changeStatus } from "#functions/domain/conversation-states";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { publicConversationView, toPublicConversationView } from "#functions/http/conversation-view";
import { uuid } from "#functions/http/schemas";

export const handoffLimits = { reasonLength: 500 } as const;

const path = z.object({ conversation_id: uuid("The conversation to hand to a person.") });
const body = z.object({
  reason: z.optional(
    z
      .string()
      .check(
        z.maxLength(handoffLimits.reasonLength),
        z.describe("Why (kept with the transition, shown to the organization's people)."),
      ),
  ),
});
const response = publicConversationView;

export const contract = {
  operationId: "handoffConversation",
  summary: "Hand a conversation to a person",
  description:
    "Moves an open conversation to `handoff`: the chatbot stops answering and a person of the organization answers. Repeating it is harmless (the same 200). A closed conversation answers 409. The body is optional.",
  tags: ["Conversations"],
  auth: "apiKey",
  widget: "requests",
  path,
  body,
  bodyOptional: true,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", typeof body, undefined, typeof path, typeof response>;

const ctx = contextFromEnvironment();

export const handler = apiHandler(contract, async ({ caller, path, body }) => {
  const outcome = await changeStatus(ctx, {
    organizationId: caller.organizationId,
    conversationId: path.conversation_id,
    to: "handoff",
    ...(caller.visitor
      ? { visitor: caller.visitor, cause: "visitor" as const, actor: { kind: "visitor" as const } }
      : { cause: "client" as const, actor: { kind: "api_key" as const, id: caller.keyId } }),
    ...(body.reason === undefined ? {} : { reason: body.reason }),
  });
  return { body: toPublicConversationView(await withContact(ctx, outcome.conversation)) };
});
