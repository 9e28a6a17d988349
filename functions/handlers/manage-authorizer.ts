/**
 * The Lambda authorizer (simple responses, payload 2.0) of every `/manage/*` route.
 *
 * Like the API-key authorizer it always allows and reports its verdict in the context
 * (http/manage-context.ts), so the integration answers every refusal in Format A: the gateway's
 * own `{"message":"Forbidden"}` / `{"message":"Unauthorized"}` never reach a management client.
 * No identity source (a request without Authorization still reaches us) and no result cache (each
 * request takes a token). The route's required role comes from the route table (lib/routes.ts).
 *
 * Like the API-key authorizer it never throws and never runs out of time (either would be the
 * gateway's own 500): a table or a user pool that does not answer in time is `unavailable`, which
 * the integration answers with a Format A 503.
 */

import { FetchError } from "aws-jwt-verify/error";
import type {
  APIGatewayRequestAuthorizerEventV2,
  APIGatewaySimpleAuthorizerWithContextResult,
} from "aws-lambda";
import { raceAbort } from "#functions/agent/deadline";
import { AUTHORIZER_VERDICT_DEADLINE_MS } from "#functions/aws-clients";
import {
  type AccessTokenVerifier,
  accessTokenSettingsFromEnvironment,
  createAccessTokenVerifier,
} from "#functions/domain/access-tokens";
import { contextFromEnvironment } from "#functions/domain/context";
import { decideManageAccess } from "#functions/domain/manage-access";
import { AppError } from "#functions/errors";
import { toManageContext } from "#functions/http/manage-context";
import { describeError, log, withRequestScope } from "#functions/log";
import { recordAuthorizerFailure, recordRateLimited } from "#functions/observability/metrics";
import { manageRouteFor } from "#lib/routes";

const ctx = contextFromEnvironment("authorizer");
let verifier: AccessTokenVerifier | undefined;

type Result = APIGatewaySimpleAuthorizerWithContextResult<Record<string, string | number | boolean>>;

export async function handler(event: APIGatewayRequestAuthorizerEventV2): Promise<Result> {
  return withRequestScope(event.requestContext.requestId, async () => {
    const deadline = AbortSignal.timeout(AUTHORIZER_VERDICT_DEADLINE_MS);
    try {
      const route = manageRouteFor(event.routeKey);
      if (!route?.access) {
        log.error("management authorizer on a route it does not know", { routeKey: event.routeKey });
        recordAuthorizerFailure("manage", "error");
        return { isAuthorized: true, context: toManageContext({ outcome: "error" }) };
      }
      if (!verifier) {
        const settings = accessTokenSettingsFromEnvironment();
        if (settings) verifier = createAccessTokenVerifier(settings);
      }
      const verdict = await raceAbort(
        decideManageAccess(
          ctx,
          {
            authorization: event.headers?.authorization,
            organizationHeader: event.headers?.["x-organization-id"],
            access: route.access,
          },
          verifier,
        ),
        deadline,
      );
      if (verdict.outcome === "unauthenticated")
        log.info("management caller refused", { reason: verdict.reason });
      if (verdict.outcome === "rate_limited") recordRateLimited("manage");
      return { isAuthorized: true, context: toManageContext(verdict) };
    } catch (error) {
      if (
        deadline.aborted ||
        error instanceof FetchError ||
        (error instanceof AppError && error.code === "service_unavailable")
      ) {
        log.warn(
          "table or user pool unavailable: no verdict",
          describeError(error instanceof AppError ? error.cause : error),
        );
        recordAuthorizerFailure("manage", "unavailable");
        return { isAuthorized: true, context: toManageContext({ outcome: "unavailable" }) };
      }
      log.error("management authorizer failed", describeError(error));
      recordAuthorizerFailure("manage", "error");
      return { isAuthorized: true, context: toManageContext({ outcome: "error" }) };
    }
  });
}
