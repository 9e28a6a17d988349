/**
 * The Lambda authorizer (simple responses, payload 2.0) of every `/api/*` route.
 *
 * It always allows, and reports its verdict in the context (http/authorizer-context.ts): API
 * Gateway would otherwise answer with its own `{"message":"Forbidden"}` body, which CONTRACT.md §2
 * forbids. It has no identity source, so API Gateway neither pre-rejects a request without an
 * Authorization header (which would give `{"message":"Unauthorized"}`) nor caches verdicts, which
 * a per-request token bucket could not use anyway. See docs/architecture.md for the cost.
 */

import type {
  APIGatewayRequestAuthorizerEventV2,
  APIGatewaySimpleAuthorizerWithContextResult,
} from "aws-lambda";
import { authenticate } from "#functions/domain/authentication";
import { contextFromEnvironment } from "#functions/domain/context";
import { type AuthorizerContext, toAuthorizerContext } from "#functions/http/authorizer-context";
import { describeError, log, withRequestScope } from "#functions/log";

const ctx = contextFromEnvironment();

export async function handler(
  event: APIGatewayRequestAuthorizerEventV2,
): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>> {
  return withRequestScope(event.requestContext.requestId, async () => {
    try {
      const outcome = await authenticate(ctx, event.headers?.authorization);
      return { isAuthorized: true, context: toAuthorizerContext(outcome) };
    } catch (error) {
      // A thrown authorizer means a gateway 500 with its own body; report it to the integration instead.
      log.error("authorizer failed", describeError(error));
      return { isAuthorized: true, context: { outcome: "error" } };
    }
  });
}
