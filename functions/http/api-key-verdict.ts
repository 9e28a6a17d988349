/**
 * The verdict on a request's bearer key: authenticate it and take a token from its bucket
 * (domain/authentication.ts), within the authorizer's time. The Lambda authorizer hands it to the
 * HTTP API's integrations; the streaming function (a function URL has no authorizer) computes it
 * itself, so both decide alike, with the same code.
 *
 * It never throws and never takes long: when the table gives no answer in time the verdict is
 * `unavailable` (answered 503), and anything unexpected is `error` (answered 500).
 */
import { raceAbort } from "#functions/agent/deadline";
import { AUTHORIZER_VERDICT_DEADLINE_MS } from "#functions/aws-clients";
import { authenticate } from "#functions/domain/authentication";
import type { DomainContext } from "#functions/domain/context";
import { AppError } from "#functions/errors";
import { type AuthorizerContext, toAuthorizerContext } from "#functions/http/authorizer-context";
import { describeError, log } from "#functions/log";
import { recordAuthorizerFailure, recordRateLimited } from "#functions/observability/metrics";

/** `routeKey`: the route as API Gateway names it (`POST /api/message`), for visitors' tokens. */
export async function apiKeyVerdict(
  ctx: DomainContext,
  authorization: string | undefined,
  routeKey?: string,
): Promise<AuthorizerContext> {
  const deadline = AbortSignal.timeout(AUTHORIZER_VERDICT_DEADLINE_MS);
  const started = Date.now();
  try {
    const verdict = toAuthorizerContext(
      await raceAbort(authenticate(ctx, authorization, routeKey), deadline),
    );
    log.debug("verdict", { outcome: verdict.outcome, durationMs: Date.now() - started });
    if (verdict.outcome === "rate_limited") recordRateLimited("public");
    return verdict;
  } catch (error) {
    if (deadline.aborted || (error instanceof AppError && error.code === "service_unavailable")) {
      log.warn(
        "table unavailable: no verdict",
        describeError(error instanceof AppError ? error.cause : error),
      );
      recordAuthorizerFailure("public", "unavailable");
      return { outcome: "unavailable" };
    }
    log.error("authorizer failed", describeError(error));
    recordAuthorizerFailure("public", "error");
    return { outcome: "error" };
  }
}
