/**
 * How every AWS client of the functions calls its service: a connection timeout, a timeout per
 * attempt and a bounded number of attempts, sized to the time the calling function has. Without
 * them the SDK waits for a silent service until the Lambda itself times out, and the gateway answers
 * with its own body. With them, a dependency that is down or too slow becomes a 503 the client can
 * act on: 503 with Retry-After.
 *
 *   authorizer  its verdict must come within a few seconds: the integration answers the 503, all
 *               within 6 s, and an authorizer that runs out of time is the gateway's own 500
 *   request     the 10-second routes: a call that gets no answer ends after about 3 s
 *   turn        the message turn's table calls (20 s budget, 29 s Lambda): about 4 s
 *   keys        Secrets Manager and KMS, inside a turn: a failure there is the fallback reply
 *   model       Bedrock Converse: answers may take long, so only a backstop here; the turn's
 *               deadline signal ends the call, and the engine retries by that deadline itself
 *
 * A new client gets its options here too (`awsClientOptions`), so no call can wait forever.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { isServerError, isThrottlingError, isTransientError } from "@smithy/core/retry";
import { serviceUnavailable } from "#functions/errors";

export type CallBudget = "authorizer" | "request" | "turn" | "keys" | "model";

interface CallTiming {
  /** To establish a connection. */
  connectionTimeoutMs?: number;
  /** For one attempt, from sending the request to the end of the answer. */
  requestTimeoutMs: number;
  /** Attempts in total; the SDK's own backoff (up to a few hundred ms) runs between them. */
  maxAttempts: number;
}

export const callTimings: Readonly<Record<CallBudget, CallTiming>> = {
  authorizer: { connectionTimeoutMs: 500, requestTimeoutMs: 1_000, maxAttempts: 2 },
  request: { connectionTimeoutMs: 1_000, requestTimeoutMs: 1_500, maxAttempts: 2 },
  turn: { connectionTimeoutMs: 1_000, requestTimeoutMs: 2_000, maxAttempts: 2 },
  keys: { connectionTimeoutMs: 1_000, requestTimeoutMs: 2_000, maxAttempts: 2 },
  // HTTP/2 (Bedrock's default handler) has no connection timeout option; the deadline signal covers it.
  model: { requestTimeoutMs: 25_000, maxAttempts: 1 },
};

/** The authorizer reports "unavailable" if it has no verdict by then (its Lambda times out at 5 s). */
export const AUTHORIZER_VERDICT_DEADLINE_MS = 3_000;

/** Client options for a budget: spread into any AWS SDK client's constructor. */
export function awsClientOptions(budget: CallBudget): {
  maxAttempts: number;
  requestHandler: { connectionTimeout?: number; requestTimeout: number; throwOnRequestTimeout: true };
} {
  const timing = callTimings[budget];
  return {
    maxAttempts: timing.maxAttempts,
    requestHandler: {
      ...(timing.connectionTimeoutMs === undefined ? {} : { connectionTimeout: timing.connectionTimeoutMs }),
      requestTimeout: timing.requestTimeoutMs,
      // Without this the SDK only logs a warning when the request timeout passes, and keeps waiting.
      throwOnRequestTimeout: true,
    },
  };
}

/**
 * A failure of the service rather than of the request: no answer in time, no connection, throttling,
 * or a server error. The SDK's own classification, the one its retries use.
 */
export function isDependencyFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // The classifier's type wants an Error-typed `cause`; it only reads what is there.
  const sdkError = error as Parameters<typeof isTransientError>[0];
  return isTransientError(sdkError) || isThrottlingError(sdkError) || isServerError(sdkError);
}

/**
 * The functions' DynamoDB client. A dependency failure that outlasts its attempts surfaces as the
 * `service_unavailable` AppError (503, Retry-After): handlers need not tell timeouts apart, and an
 * Idempotency-Key knows the outcome of that write is unknown.
 */
export function createTableClient(budget: CallBudget): DynamoDBClient {
  const client = new DynamoDBClient(awsClientOptions(budget));
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        throw isDependencyFailure(error) ? serviceUnavailable(error) : error;
      }
    },
    { step: "initialize", priority: "high", name: "dependencyFailureMiddleware" },
  );
  return client;
}
