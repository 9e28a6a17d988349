/** POST /api/message — the visitor's message in, the chatbot's reply out (SPEC.md §4, CONTRACT.md §4). */

import * as z from "zod/mini";
import { agentServicesFromEnvironment } from "#functions/agent/services";
import { contextFromEnvironment } from "#functions/domain/context";
import { sendMessage, type TurnContext, type TurnResult } from "#functions/domain/messages";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { idempotencyMiddleware } from "#functions/http/idempotency";
import { attachmentInputs, messageBody as body, replyMessage } from "#functions/http/message-schemas";

const response = z.object({
  conversation_id: z.string(),
  messages: z
    .array(replyMessage)
    .check(z.describe("The chatbot's reply messages for this turn, oldest first; at least one.")),
});

export const contract = {
  operationId: "sendMessage",
  summary: "Send a message",
  description:
    "Sends the visitor's message (text and images) in a conversation and returns the chatbot's reply. The message is stored before the chatbot runs; if the model or a tool fails or is slow, the reply is the chatbot's fallback text. Send an `Idempotency-Key` header to retry safely.",
  tags: ["Messages"],
  auth: "apiKey",
  idempotent: true,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", typeof body, undefined, undefined, typeof response>;

const ctx: TurnContext = Object.assign(contextFromEnvironment("turn"), {
  agent: agentServicesFromEnvironment(),
  ...(process.env.TURN_BUDGET_MS ? { turnBudgetMs: Number(process.env.TURN_BUDGET_MS) } : {}),
});

const render = (turn: TurnResult) => ({
  body: {
    conversation_id: turn.conversationId,
    messages: turn.messages.map((message) => ({
      message_id: message.messageId,
      role: "assistant" as const,
      content: message.content,
      created_at: message.createdAt,
    })),
  },
});

export const handler = apiHandler(
  contract,
  async ({ caller, body, remainingTimeMs, idempotency }) => {
    const turn = await sendMessage(ctx, {
      organizationId: caller.organizationId,
      conversationId: body.conversation_id,
      message: body.message,
      attachments: attachmentInputs(body),
      remainingTimeMs: remainingTimeMs(),
      ...(idempotency ? { fence: idempotency.fence(render) } : {}),
    });
    return render(turn);
  },
  { idempotency: (route) => idempotencyMiddleware(route, () => ctx) },
);
