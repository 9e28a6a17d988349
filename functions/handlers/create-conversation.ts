/** POST /api/conversation — starts a conversation with one of the caller's chatbots. */

import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import { type StartedConversation, startConversation } from "#functions/domain/conversations";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { idempotencyMiddleware } from "#functions/http/idempotency";
import { given, optionalText, uuid } from "#functions/http/schemas";

const body = z.object({
  chatbot_id: uuid("Unique identifier of the chatbot"),
  contact_id: z.optional(
    z.nullable(
      uuid(
        "The contact this conversation is with. Reused (and updated with the fields sent) when it exists in your organization; created with this id when unknown; generated when omitted.",
      ),
    ),
  ),
  visitor_id: z.optional(z.nullable(uuid("Alias of contact_id, used when contact_id is absent."))),
  external_id: optionalText(255, "Your own identifier for this conversation, stored with it."),
  user_name: optionalText(255, "Name of the contact."),
  user_email: optionalText(320, "E-mail address of the contact."),
  user_phone: optionalText(64, "Telephone number of the contact."),
});

const response = z.object({
  conversation_id: z.string().check(z.describe("Identifier of the new conversation (UUID).")),
  contact_id: z.string().check(z.describe("Identifier of the contact (UUID).")),
});

export const contract = {
  operationId: "createConversation",
  summary: "Start a conversation",
  description:
    "Starts a new conversation with the given chatbot of your organization. A contact is the person behind conversations: give `contact_id` (or `visitor_id`) to reuse one of your organization's contacts (the `user_*` fields sent update it) or to create one with your own id; leave it out for a new one. Another organization's contact is a 403 and nothing is created. Send an `Idempotency-Key` header to retry safely. With a website visitor's token (`POST /api/widget/session`): only the session's chatbot (another is a 404), the contact is the session's (contact fields and `external_id` are ignored), and the conversation's `channel` is `widget`.",
  tags: ["Conversations"],
  auth: "apiKey",
  widget: "requests",
  idempotent: true,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", typeof body, undefined, undefined, typeof response>;

const ctx = contextFromEnvironment();

const render = (started: StartedConversation) => ({
  body: { conversation_id: started.conversationId, contact_id: started.contactId },
});

export const handler = apiHandler(
  contract,
  async ({ caller, body, idempotency }) => {
    const fence = idempotency ? { fence: idempotency.fence(render) } : {};
    const { visitor } = caller;
    const started = await startConversation(
      ctx,
      visitor
        ? {
            organizationId: caller.organizationId,
            chatbotId: body.chatbot_id,
            onlyChatbot: visitor.chatbotId,
            contactId: visitor.contactId,
            channel: "widget",
            ...fence,
          }
        : {
            organizationId: caller.organizationId,
            chatbotId: body.chatbot_id,
            contactId: given(body.contact_id) ?? given(body.visitor_id),
            externalId: given(body.external_id),
            userName: given(body.user_name),
            userEmail: given(body.user_email),
            userPhone: given(body.user_phone),
            test: caller.test,
            ...fence,
          },
    );
    return render(started);
  },
  { idempotency: (route) => idempotencyMiddleware(route, () => ctx) },
);
