/**
 * The Idempotency-Key middleware (CONTRACT.md §7), for routes whose contract sets `idempotent`.
 * It sits after validation, so only valid requests claim a key; an invalid request fails the same
 * way every time anyway. Storage and the decisions live in domain/idempotency; the work itself
 * writes through the key's fence (the handler gets it as `idempotency.fence`), which also stores
 * the response. This middleware stores definite error answers, and when the attempt fails in a way
 * that leaves its writes' outcome unknown (a 5xx), it hands the key back, never deletes it.
 */

import { randomUUID } from "node:crypto";
import type { MiddlewareObj } from "@middy/core";
import type { Context } from "aws-lambda";
import { contextFromEnvironment, type DomainContext } from "#functions/domain/context";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  handBackIdempotencyKey,
  type IdempotencyScope,
  requestFingerprint,
  type StoredResponse,
  workFence,
} from "#functions/domain/idempotency";
import { AppError, toFormatB, validationError } from "#functions/errors";
import type { ApiEvent, ApiResponse, RouteState } from "#functions/http/api-handler";
import { describeError, log } from "#functions/log";

const HEADER = "idempotency-key";
/** What the header may hold; the OpenAPI document publishes the same rule. */
export const idempotencyKeyRule = { maxLength: 255, pattern: "^[\\x20-\\x7E]{1,255}$" } as const;
const PRINTABLE = new RegExp(idempotencyKeyRule.pattern);
export const REPLAY_HEADER = "idempotent-replayed";
/** Beyond the Lambda's remaining time, so no other attempt takes the key over while this one can still run. */
const LEASE_MARGIN_MS = 2_000;
/** Used when the Lambda context does not say (it always does on Lambda and in the emulator). */
const DEFAULT_LEASE_MS = 30_000;
/** How long an answer waits for the hand-back to be on its way (its outcome does not matter). */
const HAND_BACK_WAIT_MS = 250;

export function idempotencyMiddleware(
  route: string,
  context: () => DomainContext = contextFromEnvironment,
): MiddlewareObj<ApiEvent, ApiResponse, Error, Context, { state: RouteState }> {
  return {
    before: async (request) => {
      const state = request.internal.state;
      const idempotencyKey = request.event.headers?.[HEADER];
      // Only the public API's key callers (the routes that use this middleware) have a key id.
      if (idempotencyKey === undefined || !state.caller || !("keyId" in state.caller)) return;
      checkHeader(idempotencyKey);
      const scope: IdempotencyScope = { keyId: state.caller.keyId, idempotencyKey };
      const fingerprint = requestFingerprint(route, request.event.rawPath, request.event.body);
      const owner = randomUUID();
      const remaining = request.context.getRemainingTimeInMillis?.();
      const leaseMs = (remaining ?? DEFAULT_LEASE_MS) + LEASE_MARGIN_MS;
      let claim: Awaited<ReturnType<typeof claimIdempotencyKey>>;
      try {
        claim = await claimIdempotencyKey(context(), { scope, fingerprint, owner, leaseMs });
      } catch (error) {
        // The claim may land later all the same: hand it back, so a retry need not wait for its lease.
        await handBack(context(), scope, owner);
        throw error;
      }
      switch (claim.kind) {
        case "claimed": {
          const claimed: NonNullable<RouteState["idempotency"]> = {
            scope,
            owner,
            completed: false,
            deferred: false,
            fence: <R>(respond: (result: R) => StoredResponse) =>
              workFence<R>(
                context(),
                { scope, owner, progress: claim.progress, onCompleted: () => (claimed.completed = true) },
                respond,
              ),
            settleFailure: (error) => settleFailure(context(), claimed, error),
          };
          state.idempotency = claimed;
          return;
        }
        case "replay":
          state.replay = {
            ...claim.response,
            headers: { ...claim.response.headers, [REPLAY_HEADER]: "true" },
          };
          return;
        case "mismatch":
          throw new AppError("idempotency_key_reused");
        case "in_progress":
          throw new AppError("idempotency_in_progress", {
            headers: { "retry-after": String(claim.retryAfterSeconds) },
          });
      }
    },
    after: async (request) => {
      const claim = request.internal.state.idempotency;
      const response = request.response;
      // Deferred: the work goes on after the response began, and settles the key itself.
      if (!claim || !response || claim.completed || claim.deferred) return;
      await completeIdempotencyKey(context(), claim.scope, claim.owner, {
        statusCode: response.statusCode,
        body: typeof response.body === "string" ? response.body : "",
        headers: response.headers,
      });
    },
    onError: async (request) => {
      const claim = request.internal.state.idempotency;
      if (!claim || claim.completed) return;
      await settleFailure(context(), claim, request.error);
    },
  };
}

/** Settles a claimed key after its work failed with `error`. */
async function settleFailure(
  ctx: DomainContext,
  claim: Pick<NonNullable<RouteState["idempotency"]>, "scope" | "owner" | "completed">,
  error: unknown,
): Promise<void> {
  if (claim.completed) return;
  // Another attempt owns the key now: it finishes the work and stores the answer.
  if (error instanceof AppError && error.code === "idempotency_in_progress") return;
  const formatted = toFormatB(error);
  if (formatted.status >= 500) {
    // Whether this attempt's writes landed is unknown: a retry must complete the work, not redo it.
    await handBack(ctx, claim.scope, claim.owner);
    return;
  }
  try {
    // A definite answer (e.g. 404, 409): the retry must get the same one.
    await completeIdempotencyKey(ctx, claim.scope, claim.owner, {
      statusCode: formatted.status,
      body: JSON.stringify(formatted.body),
      headers: formatted.headers,
    });
  } catch (settleError) {
    log.warn("could not store the answer on the idempotency record", describeError(settleError));
  }
}

/** Best effort, and bounded: when the table does not answer, the request goes out anyway and may land later. */
async function handBack(ctx: DomainContext, scope: IdempotencyScope, owner: string): Promise<void> {
  const sent = handBackIdempotencyKey(ctx, scope, owner).catch((error: unknown) => {
    log.warn("could not hand the idempotency key back", describeError(error));
  });
  await Promise.race([sent, new Promise((resolve) => setTimeout(resolve, HAND_BACK_WAIT_MS).unref())]);
}

function checkHeader(value: string): void {
  if (value.length > idempotencyKeyRule.maxLength) {
    throw validationError([
      {
        type: "string_too_long",
        loc: ["header", HEADER],
        msg: `String should have at most ${idempotencyKeyRule.maxLength} characters`,
        input: value,
        ctx: { max_length: idempotencyKeyRule.maxLength },
      },
    ]);
  }
  if (!PRINTABLE.test(value)) {
    throw validationError([
      {
        type: "string_pattern_mismatch",
        loc: ["header", HEADER],
        msg: `String should match pattern '${idempotencyKeyRule.pattern}'`,
        input: value,
        ctx: { pattern: idempotencyKeyRule.pattern },
      },
    ]);
  }
}
