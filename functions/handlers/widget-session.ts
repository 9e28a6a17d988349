/**
 * POST /api/widget/session — a website visitor's browser starts (or resumes) a session with one
 * chatbot: no API key, the page's `Origin` checked against the widget's allowed origins, an
 * optional identity token, and a short-lived access token in return (domain/visitor-sessions.ts).
 *
 * The client address's session bucket is taken first, so a scripted client hammering the route is
 * refused after one write; every answer after it carries that bucket's rate headers.
 */
import * as z from "zod/mini";
import { contextFromEnvironment } from "#functions/domain/context";
import type { BucketState } from "#functions/domain/token-bucket";
import { visitorLimits } from "#functions/domain/visitor-access";
import { admitSession, type SessionContext, startVisitorSession } from "#functions/domain/visitor-sessions";
import { AppError } from "#functions/errors";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { clientAddress } from "#functions/http/client-address";
import { isoTimestamp, optionalText, uuid } from "#functions/http/schemas";
import { widgetSecretsCipher } from "#functions/http/widget-secrets";
import { appearanceView } from "#functions/http/widget-views";
import { recordRateLimited } from "#functions/observability/metrics";

const body = z.object({
  chatbot_id: uuid("The chatbot whose widget is on the page."),
  visitor: optionalText(
    100,
    "The visitor secret an earlier session answered: the same browser resumes the same contact and conversation.",
  ),
  identity: optionalText(
    4_096,
    "An identity token your server signed for the signed-in customer (an HS256 JWT with `sub` and `exp`, `name`, `email` and `phone` optional), with the widget's identity secret.",
  ),
});

const response = z.object({
  token: z
    .string()
    .check(
      z.describe(
        "The visitor's access token: `Authorization: Bearer` on the widget's routes, for this contact and chatbot only.",
      ),
    ),
  expires_at: isoTimestamp("When the token stops working (at most an hour from now)"),
  visitor: z
    .string()
    .check(z.describe("The visitor secret: keep it in the site's storage and send it on the next session.")),
  contact_id: z.string(),
  conversation_id: z.nullable(
    z.string().check(z.describe("The contact's latest conversation with this chatbot that is not closed.")),
  ),
  identified: z.boolean().check(z.describe("Whether the contact is known by a verified identity.")),
  widget: z.extend(appearanceView, {
    welcome_message: z.string().check(z.describe("The chatbot's welcome message.")),
  }),
});

export const contract = {
  operationId: "startWidgetSession",
  summary: "Start a visitor session (website widget)",
  description:
    "Called by the website widget from the visitor's browser, without an API key. The request's `Origin` must be an allowed origin of the chatbot's enabled widget (403 `Origin not allowed`); an unknown chatbot or a widget that is off is a 404. Answers a visitor access token for an hour, bound to the organization, the chatbot and the contact. Limited per client address and chatbot (429 with the rate headers).",
  tags: ["Website widget"],
  auth: "none",
  widget: "requests",
  body,
  response,
  errors: [401, 403, 404, 422, 429, 500, 503],
} as const satisfies RouteContract<"none", typeof body, undefined, undefined, typeof response>;

const base = contextFromEnvironment();
/** Made on the first request: the KMS client is not needed to load the function. */
let ctx: SessionContext | undefined;
function sessionContext(): SessionContext {
  if (!ctx) {
    const secrets = widgetSecretsCipher();
    ctx = {
      get db() {
        return base.db;
      },
      clock: base.clock,
      ...(secrets ? { secrets } : {}),
    };
  }
  return ctx;
}

function rateHeaders(state: BucketState): Record<string, string> {
  return {
    "x-ratelimit-limit": String(state.limit),
    "x-ratelimit-remaining": String(state.remaining),
    "x-ratelimit-reset": String(state.resetAt),
  };
}

export const handler = apiHandler(contract, async ({ body, headers, sourceIp }) => {
  const ctx = sessionContext();
  const admission = await admitSession(ctx, body.chatbot_id, clientAddress(headers, sourceIp));
  const headersOfRate = rateHeaders(admission.state);
  if (!admission.admitted) {
    recordRateLimited("widget");
    const { limit } = visitorLimits.sessionsPerAddress;
    throw new AppError("rate_limited", {
      headers: { ...headersOfRate, "retry-after": String(admission.retryAfterSeconds) },
      detail: {
        error: "Rate limit exceeded",
        message: `Too many sessions: ${limit} per 10 minutes may start from one address. Retry in ${admission.retryAfterSeconds} seconds.`,
        limit,
        remaining: 0,
        reset: new Date(admission.state.resetAt * 1000).toISOString().replace(".000Z", "Z"),
        retry_after: admission.retryAfterSeconds,
      },
    });
  }
  try {
    const session = await startVisitorSession(ctx, {
      chatbotId: body.chatbot_id,
      origin: headers.origin,
      ...(body.visitor ? { visitorSecret: body.visitor } : {}),
      ...(body.identity ? { identityToken: body.identity } : {}),
    });
    return {
      headers: headersOfRate,
      body: {
        token: session.token,
        expires_at: session.expiresAt,
        visitor: session.visitorSecret,
        contact_id: session.contactId,
        conversation_id: session.conversationId,
        identified: session.identified,
        widget: {
          title: session.widget.title,
          color: session.widget.color,
          position: session.widget.position,
          launcher_label: session.widget.launcherLabel,
          starter_questions: session.widget.starterQuestions,
          language: session.widget.language,
          welcome_message: session.widget.welcomeMessage,
        },
      },
    };
  } catch (error) {
    // Every answer after the bucket carries its state, refusals included.
    if (error instanceof AppError)
      throw new AppError(error.code, {
        detail: error.detail,
        headers: { ...error.headers, ...headersOfRate },
        cause: error.cause,
      });
    throw error;
  }
});
