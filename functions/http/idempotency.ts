/**
 * The Idempotency-Key middleware (CONTRACT.md §7), for routes whose contract sets `idempotent`.
 * It sits after validation, so only valid requests claim a key; an invalid request fails the same
 * way every time anyway. Storage and the decision live in domain/idempotency.
 */

import type { MiddlewareObj } from "@middy/core";
import type { Context } from "aws-lambda";
import { contextFromEnvironment, type DomainContext } from "#functions/domain/context";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  type IdempotencyScope,
  releaseIdempotencyKey,
  requestFingerprint,
} from "#functions/domain/idempotency";
import { AppError, toFormatB, validationError } from "#functions/errors";
import type { ApiEvent, ApiResponse, RouteState } from "#functions/http/api-handler";
import { describeError, log } from "#functions/log";

const HEADER = "idempotency-key";
/** What the header may hold; the OpenAPI document publishes the same rule. */
export const idempotencyKeyRule = { maxLength: 255, pattern: "^[\\x20-\\x7E]{1,255}$" } as const;
const PRINTABLE = new RegExp(idempotencyKeyRule.pattern);
export const REPLAY_HEADER = "idempotent-replayed";

export function idempotencyMiddleware(
  route: string,
  context: () => DomainContext = contextFromEnvironment,
): MiddlewareObj<ApiEvent, ApiResponse, Error, Context, { state: RouteState }> {
  return {
    before: async (request) => {
      const state = request.internal.state;
      const idempotencyKey = request.event.headers?.[HEADER];
      if (idempotencyKey === undefined || !state.caller) return;
      checkHeader(idempotencyKey);
      const scope: IdempotencyScope = { keyId: state.caller.keyId, idempotencyKey };
      const fingerprint = requestFingerprint(route, request.event.rawPath, request.event.body);
      const claim = await claimIdempotencyKey(context(), scope, fingerprint);
      switch (claim.kind) {
        case "claimed":
          state.idempotency = { scope, owner: claim.owner };
          return;
        case "replay":
          state.replay = {
            ...claim.response,
            headers: { ...claim.response.headers, [REPLAY_HEADER]: "true" },
          };
          return;
        case "mismatch":
          throw new AppError("idempotency_key_reused");
        case "in_progress":
          throw new AppError("idempotency_in_progress");
      }
    },
    after: async (request) => {
      const claim = request.internal.state.idempotency;
      const response = request.response;
      if (!claim || !response) return;
      await completeIdempotencyKey(context(), claim.scope, claim.owner, {
        statusCode: response.statusCode,
        body: typeof response.body === "string" ? response.body : "",
        headers: response.headers,
      });
    },
    onError: async (request) => {
      const claim = request.internal.state.idempotency;
      if (!claim) return;
      const formatted = toFormatB(request.error);
      try {
        if (formatted.status < 500) {
          // A definite answer (e.g. 404, 409): the retry must get the same one.
          await completeIdempotencyKey(context(), claim.scope, claim.owner, {
            statusCode: formatted.status,
            body: JSON.stringify(formatted.body),
            headers: formatted.headers,
          });
        } else {
          await releaseIdempotencyKey(context(), claim.scope, claim.owner);
        }
      } catch (error) {
        log.warn("could not settle idempotency record", describeError(error));
      }
    },
  };
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
