/**
 * The Lambda authorizer (simple responses, payload 2.0) of every `/api/*` route.
 *
 * It always allows, and reports its verdict in the context (http/authorizer-context.ts): API
 * Gateway would otherwise answer with its own `{"message":"Forbidden"}` body, which CONTRACT.md §2
 * forbids. It has no identity source, so API Gateway neither pre-rejects a request without an
 * Authorization header (which would give `{"message":"Unauthorized"}`) nor caches verdicts, which
 * a per-request token bucket could not use anyway. See docs/architecture.md for the cost.
 *
 * It never throws and never runs out of time: either would be the gateway's own 500. When the table
 * does not answer in time it reports `unavailable`, which the integration answers with a 503.
 */

import type {
  APIGatewayRequestAuthorizerEventV2,
  APIGatewaySimpleAuthorizerWithContextResult,
} from "aws-lambda";
import { raceAbort } from "#functions/agent/deadline";
import { AUTHORIZER_VERDICT_DEADLINE_MS } from "#functions/aws-clients";
import { authenticate } from "#functions/domain/authentication";
import { contextFromEnvironment } from "#functions/domain/context";
import { AppError } from "#functions/errors";
import { type AuthorizerContext, toAuthorizerContext } from "#functions/http/authorizer-context";
import { describeError, log, withRequestScope } from "#functions/log";

const ctx = contextFromEnvironment("authorizer");

export async function handler(
  event: APIGatewayRequestAuthorizerEventV2,
): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>> {
  return withRequestScope(event.requestContext.requestId, async () => {
    const deadline = AbortSignal.timeout(AUTHORIZER_VERDICT_DEADLINE_MS);
    try {
      const outcome = await raceAbort(authenticate(ctx, event.headers?.authorization), deadline);
      return { isAuthorized: true, context: toAuthorizerContext(outcome) };
    } catch (error) {
      if (deadline.aborted || (error instanceof AppError && error.code === "service_unavailable")) {
        log.warn(
          "table unavailable: no verdict",
          describeError(error instanceof AppError ? error.cause : error),
        );
        return { isAuthorized: true, context: { outcome: "unavailable" } };
      }
      // A thrown authorizer means a gateway 500 with its own body; report it to the integration instead.
      log.error("authorizer failed", describeError(error));
      return { isAuthorized: true, context: { outcome: "error" } };
    }
  });
}
