/** POST /api/message — the visitor's message in, the chatbot's reply out. */

import * as z from "zod/mini";
import { agentServicesFromEnvironment } from "#functions/agent/services";
import { contextFromEnvironment } from "#functions/domain/context";
import { readTurnStart, sendMessage, type TurnContext, type TurnResult } from "#functions/domain/messages";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { idempotencyMiddleware } from "#functions/http/idempotency";
import { attachmentInputs, messageBody as body, replyMessage } from "#functions/http/message-schemas";
import { toReplyView } from "#functions/http/message-view";
import { readAhead } from "#functions/http/read-ahead";

const response = z.object({
  conversation_id: z.string(),
  status: z
    .enum(["open", "handoff", "closed"])
    .check(
      z.describe(
        "The conversation's status after this turn: `handoff` when a person answers (then `messages` is empty, or holds the chatbot's handoff message on the turn that started the handoff).",
      ),
    ),
  messages: z
    .array(replyMessage)
    .check(
      z.describe(
        "The chatbot's reply messages for this turn, oldest first; at least one, except in handoff (none).",
      ),
    ),
});

export const contract = {
  operationId: "sendMessage",
  summary: "Send a message",
  description:
    "Sends the visitor's message (text and images) in a conversation and returns the chatbot's reply. The message is stored before the chatbot runs; if the model or a tool fails or is slow, the reply is the chatbot's fallback text. Send an `Idempotency-Key` header to retry safely.",
  tags: ["Messages"],
  auth: "apiKey",
  widget: "messages",
  idempotent: true,
  body,
  response,
  errors: [401, 403, 404, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", typeof body, undefined, undefined, typeof response>;

const ctx: TurnContext = Object.assign(contextFromEnvironment("turn"), {
  agent: agentServicesFromEnvironment(),
  ...(process.env.TURN_BUDGET_MS ? { turnBudgetMs: Number(process.env.TURN_BUDGET_MS) } : {}),
});
/** The turn's first read, begun alongside the Idempotency-Key's claim. */
const turnStart = readAhead((caller, request: z.output<typeof body>) =>
  readTurnStart(ctx, caller.organizationId, request.conversation_id),
);

const render = (turn: TurnResult) => ({
  body: {
    conversation_id: turn.conversationId,
    status: turn.status,
    messages: turn.messages.map(toReplyView),
  },
});

export const handler = apiHandler(
  contract,
  async ({ caller, body, remainingTimeMs, idempotency }) => {
    const turn = await sendMessage(ctx, {
      organizationId: caller.organizationId,
      conversationId: body.conversation_id,
      ...(caller.visitor ? { visitor: caller.visitor } : {}),
      message: body.message,
      attachments: attachmentInputs(body),
      remainingTimeMs: remainingTimeMs(),
      start: turnStart.take(caller, body),
      ...(idempotency ? { fence: idempotency.fence(render) } : {}),
    });
    return render(turn);
  },
  { idempotency: (route) => idempotencyMiddleware(route, () => ctx, { alongsideClaim: turnStart.begin }) },
);
