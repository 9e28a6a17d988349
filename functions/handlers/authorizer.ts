/**
 * The Lambda authorizer (simple responses, payload 2.0) of every `/api/*` route.
 *
 * It always allows, and reports its verdict in the context (http/authorizer-context.ts): API
 * Gateway would otherwise answer with its own `{"message":"Forbidden"}` body, where our API
 * promises its own `{"detail": …}` bodies (docs/api.md). It has no identity source, so API Gateway neither pre-rejects a request without an
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
import { contextFromEnvironment } from "#functions/domain/context";
import { apiKeyVerdict } from "#functions/http/api-key-verdict";
import type { AuthorizerContext } from "#functions/http/authorizer-context";
import { withRequestScope } from "#functions/log";

const ctx = contextFromEnvironment("authorizer");

export async function handler(
  event: APIGatewayRequestAuthorizerEventV2,
): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>> {
  return withRequestScope(event.requestContext.requestId, async () => ({
    isAuthorized: true,
    // A thrown authorizer would be the gateway's 500 with its own body: the verdict reports failures instead.
    context: await apiKeyVerdict(ctx, event.headers?.authorization, event.routeKey),
  }));
}
