/**
 * POST /api/message/stream — the visitor's message in, the chatbot's reply streamed out as
 * Server-Sent Events (http/event-stream.ts), served by a Lambda function URL in response-streaming
 * mode at its own base URL. The same turn as POST /api/message (domain/messages.ts), with a listener:
 * the same body, authentication, rate limit, idempotency and errors (any error before the stream
 * starts is the ordinary JSON answer), and the same stored turn.
 *
 * The stream starts once the visitor's message is stored. With an Idempotency-Key, a retry of a
 * completed streamed turn replays it as a stream (`Idempotent-Replayed: true`): its messages, each
 * in one delta, as stored. A key names one request on one endpoint: the same key on POST
 * /api/message is another request (422).
 */
import { PassThrough, Readable } from "node:stream";
import * as z from "zod/mini";
import { agentServicesFromEnvironment } from "#functions/agent/services";
import { contextFromEnvironment } from "#functions/domain/context";
import { readTurnStart, sendMessage, type TurnContext, type TurnResult } from "#functions/domain/messages";
import type { RouteContract } from "#functions/http/api-handler";
import { apiKeyVerdict } from "#functions/http/api-key-verdict";
import {
  eventStreamHeaders,
  replayedEvents,
  type StoredTurnBody,
  streamedTurnBody,
  TurnEvents,
} from "#functions/http/event-stream";
import { idempotencyMiddleware } from "#functions/http/idempotency";
import { attachmentInputs, messageBody as body, replyMessage } from "#functions/http/message-schemas";
import { readAhead } from "#functions/http/read-ahead";
import { apiStreamHandler } from "#functions/http/stream-handler";
import { describeError, log } from "#functions/log";
import { streamEndpoint } from "#lib/stream-endpoint";

const conversationStatus = z.enum(["open", "handoff", "closed"]);

/**
 * The turn a stream conveys, as its Idempotency-Key stores it (and replays it as events). The 200 is
 * `text/event-stream`; the data of each event is described by `streamEvents`.
 */
const response = z.object({
  conversation_id: z.string(),
  status: conversationStatus,
  messages: z.array(replyMessage),
});

/** Each event's `data`, for the OpenAPI document. */
export const streamEvents = {
  "message.start": z.object({
    conversation_id: z.string(),
    message_id: z
      .nullable(z.string())
      .check(
        z.describe(
          "The reply message this start begins; null in handoff, where no reply follows (a person answers).",
        ),
      ),
    status: conversationStatus.check(z.describe("The conversation's status.")),
  }),
  "message.delta": z.object({
    text: z.string().check(z.describe("The next piece of the reply's text; the pieces add up to `content`.")),
  }),
  "message.end": replyMessage.check(z.describe("The complete reply message, as stored.")),
  error: z.object({
    detail: z
      .string()
      .check(
        z.describe(
          "Why the reply failed after the start. The text received since the start is void: the deltas that follow are the chatbot's fallback reply. With no `message.end` after it, the turn could not be stored: retry with the same Idempotency-Key.",
        ),
      ),
  }),
} as const;

export const contract = {
  operationId: "streamMessage",
  summary: "Send a message, stream the reply",
  description:
    "Sends the visitor's message like `POST /api/message`, and streams the chatbot's reply as Server-Sent Events as the model writes it. Served at the stream base URL (the `StreamUrl` stack output), not the API's base URL. Any error before the stream starts is the ordinary JSON answer.",
  tags: ["Messages"],
  auth: "apiKey",
  widget: "messages",
  idempotent: true,
  body,
  response,
  errors: [401, 403, 404, 405, 409, 422, 429, 500, 503],
} as const satisfies RouteContract<"apiKey", typeof body, undefined, undefined, typeof response>;

const ctx: TurnContext = Object.assign(contextFromEnvironment("turn"), {
  agent: agentServicesFromEnvironment(),
  ...(process.env.TURN_BUDGET_MS ? { turnBudgetMs: Number(process.env.TURN_BUDGET_MS) } : {}),
});
/** The turn's first read, begun alongside the Idempotency-Key's claim. */
const turnStart = readAhead((caller, request: z.output<typeof body>) =>
  readTurnStart(ctx, caller.organizationId, request.conversation_id),
);
/** The bearer key is checked with the authorizer's own (short) table budget. */
const authorizerCtx = contextFromEnvironment("authorizer");

export const handler = apiStreamHandler(
  contract,
  streamEndpoint,
  async ({ caller, body, remainingTimeMs, idempotency }) => {
    const started = Date.now();
    const output = new PassThrough();
    const events = new TurnEvents((chunk) => output.write(chunk));
    const begun = Promise.withResolvers<void>();
    const turn = sendMessage(ctx, {
      organizationId: caller.organizationId,
      conversationId: body.conversation_id,
      ...(caller.visitor ? { visitor: caller.visitor } : {}),
      message: body.message,
      attachments: attachmentInputs(body),
      remainingTimeMs: remainingTimeMs(),
      start: turnStart.take(caller, body),
      ...(idempotency
        ? {
            fence: idempotency.fence((result: TurnResult) => ({
              body: streamedTurnBody(result, result.status),
            })),
          }
        : {}),
      stream: {
        started: (start) => {
          events.started(start);
          begun.resolve();
        },
        text: (delta) => events.text(delta),
        failed: (failure) => events.failed(failure),
      },
    });
    // Until the visitor's message is stored, a failure is the ordinary JSON answer.
    await Promise.race([begun.promise, turn]);
    const settleFailure = idempotency?.settleLater();
    const done = turn
      .then(
        (result) => {
          events.finished(result);
          log.info("stream completed", { outcome: "stored", durationMs: Date.now() - started });
        },
        async (error: unknown) => {
          // After the start the stream can only say so: the reply was not stored.
          log.warn("stream broken: the turn could not be completed", describeError(error));
          events.broken(error);
          await settleFailure?.(error);
        },
      )
      .finally(() => output.end());
    return { stream: output, headers: { ...eventStreamHeaders }, done };
  },
  {
    authorize: (authorization, routeKey) => apiKeyVerdict(authorizerCtx, authorization, routeKey),
    idempotency: (operation) =>
      idempotencyMiddleware(operation, () => ctx, { alongsideClaim: turnStart.begin }),
    replay: (stored) => ({
      stream: Readable.from([replayedEvents(JSON.parse(stored.body) as StoredTurnBody)]),
      headers: { ...stored.headers, ...eventStreamHeaders },
      done: Promise.resolve(),
    }),
  },
);
