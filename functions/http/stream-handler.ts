/**
 * Builds the Lambda handler of a route served by a function URL in response-streaming mode (an HTTP
 * API cannot stream). It is the same Middy chain as every other route (http/api-handler.ts), with
 * what the HTTP API would otherwise have done before it:
 *
 *   authorize – a function URL has no authorizer: the verdict on the bearer key is computed here, by
 *               the very function the Lambda authorizer runs (http/api-key-verdict.ts), then read
 *               by the chain as if the gateway had handed it over;
 *   route     – a function URL receives every path and method: anything but the route's own is
 *               answered as the HTTP API's route-miss answers it (404 / 405, a valid key's rate
 *               state included);
 *   preflight – on a route the website widget calls, a CORS preflight (`OPTIONS` on the route's
 *               path) is answered 204 before anything else (http/cors.ts): the function URL has
 *               no CORS configuration of its own, so the answers are exactly the HTTP API's;
 * then response, auth, JSON body, validation and idempotency exactly as on the HTTP API. So every
 * error before the stream starts is the ordinary JSON answer, with X-Request-Id and X-RateLimit-*.
 *
 * The route's function returns either an ordinary result (JSON) or a stream: a body it goes on
 * writing after the response began, and `done`, which settles when the work behind it is finished.
 * The invocation lasts until then, even if the client went away (on Lambda, a function URL keeps
 * running when its client disconnects), so the work is never frozen half-way.
 *
 * The chain runs in Middy's standard mode and this module writes its answer to the response stream
 * (writeResponse). Middy's own streaming mode would do the same, but it loads `node:stream/web` at
 * init to recognise web streams we never return: measured, that was 3 % of the function's init.
 */
import type { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import middy from "@middy/core";
import type { Context } from "aws-lambda";
import type { StoredResponse } from "#functions/domain/idempotency";
import { AppError, serviceUnavailable } from "#functions/errors";
import {
  type ApiEvent,
  type ApiHandlerOptions,
  type ApiRequest,
  type ApiResponse,
  type ApiResult,
  apiRequestOf,
  authMiddleware,
  chainRequestFor,
  EARLY_TIMEOUT_MS,
  jsonBodyMiddleware,
  lambdaResult,
  type RouteContract,
  type RouteMiddleware,
  type RouteState,
  responseMiddleware,
  stateOf,
  validationMiddleware,
} from "#functions/http/api-handler";
import type { AuthorizerContext } from "#functions/http/authorizer-context";
import { preflightResponse } from "#functions/http/cors";
import { log, withRequestScope } from "#functions/log";

/** A response whose body is written after it began. */
export interface StreamBody {
  stream: Readable;
  headers: Record<string, string>;
  /** Settles when the work behind the stream is finished. */
  done: Promise<void>;
}

export interface StreamRoute {
  method: string;
  path: string;
}

export interface StreamHandlerOptions extends ApiHandlerOptions {
  /**
   * The verdict on the request's `Authorization` header, on `routeKey` (`POST /path` for the route,
   * `$default` for anything else, as the HTTP API's authorizer is told).
   */
  authorize: (authorization: string | undefined, routeKey: string) => Promise<AuthorizerContext>;
  /** How a stored 200 of an Idempotency-Key is replayed (default: as stored). */
  replay?: (stored: StoredResponse) => StreamBody | StoredResponse;
}

/** The response-streaming handler Lambda calls: `(event, responseStream, context)`, marked as streaming. */
export type StreamingLambdaHandler = (
  event: ApiEvent,
  responseStream: unknown,
  context: Context,
) => Promise<void>;

/**
 * Lambda's Node.js runtime provides this global to streaming functions (the local runtime does too):
 * `streamifyResponse` marks a handler as streaming; `HttpResponseStream.from` makes the stream's first
 * write the HTTP prelude (status, headers, cookies) of a function URL's response.
 */
declare const awslambda: {
  streamifyResponse<H>(handler: H): H;
  HttpResponseStream: { from(stream: Writable, prelude: Omit<ApiResponse, "body">): Writable };
};

export function apiStreamHandler<C extends RouteContract>(
  contract: C,
  route: StreamRoute,
  run: (request: ApiRequest<C>) => Promise<ApiResult<C> | StreamBody>,
  options: StreamHandlerOptions,
): StreamingLambdaHandler {
  if (contract.idempotent && !options.idempotency) {
    throw new Error(`${contract.operationId} is idempotent: pass the idempotency middleware`);
  }
  /** The work each stream still does, by event: the invocation waits for it. */
  const working = new WeakMap<ApiEvent, Promise<void>>();
  const chain = middy<ApiEvent, ApiResponse, Error, Context, { state: RouteState }>({
    timeoutEarlyInMillis: EARLY_TIMEOUT_MS,
    timeoutEarlyResponse: () => {
      throw serviceUnavailable(new Error("the function ran out of time"));
    },
  })
    .use(authorizeMiddleware(options.authorize, route))
    .use(responseMiddleware(contract))
    .use(routeMiddleware(route))
    .use(authMiddleware(false, contract.widget !== undefined));
  if (contract.body) chain.use(jsonBodyMiddleware());
  chain.use(validationMiddleware(contract));
  if (contract.idempotent && options.idempotency) chain.use(options.idempotency(contract.operationId));

  const streaming = (body: StreamBody, event: ApiEvent): ApiResponse => {
    working.set(
      event,
      body.done.catch(() => undefined),
    );
    // The chain's response carries the stream as its body; writeResponse pipes it after the prelude.
    return { statusCode: 200, headers: body.headers, body: body.stream as unknown as string };
  };
  const handler = chain.handler(async (event, context) => {
    const state = stateOf(chainRequestFor(event));
    if (state.replay) {
      const replayed =
        state.replay.statusCode === 200 && options.replay ? options.replay(state.replay) : state.replay;
      return "stream" in replayed ? streaming(replayed, event) : replayed;
    }
    const result = await run(apiRequestOf<C>(event, context));
    return "stream" in result ? streaming(result, event) : lambdaResult(result);
  });

  return awslambda.streamifyResponse((event: ApiEvent, responseStream: unknown, context: Context) =>
    withRequestScope(event.requestContext.requestId, async () => {
      const preflight =
        contract.widget !== undefined &&
        event.requestContext.http.method === "OPTIONS" &&
        event.rawPath === route.path;
      const response = preflight
        ? preflightResponse(event.headers?.origin, [route.method])
        : await handler(event, context);
      try {
        await writeResponse(responseStream as Writable, response);
      } finally {
        await working.get(event);
      }
    }),
  );
}

/**
 * The prelude, sent at once (so a client sees the status and headers before the first event), then
 * the body: a stream piped through, or a string written whole.
 */
async function writeResponse(responseStream: Writable, response: ApiResponse): Promise<void> {
  const { body, ...prelude } = response;
  const stream = awslambda.HttpResponseStream.from(responseStream, prelude);
  stream.write("");
  if (body !== undefined && typeof body !== "string") {
    await pipeline(body as Readable, stream);
    return;
  }
  await new Promise<void>((resolve, reject) => {
    stream.once("error", reject);
    stream.end(body ?? "", () => resolve());
  });
}

/** The verdict an authorizer would have handed over, put where the chain reads it. */
function authorizeMiddleware(
  authorize: StreamHandlerOptions["authorize"],
  route: StreamRoute,
): RouteMiddleware {
  return {
    before: async (request) => {
      const { method } = request.event.requestContext.http;
      const routeKey =
        request.event.rawPath === route.path && method === route.method
          ? `${route.method} ${route.path}`
          : "$default";
      const verdict = await authorize(request.event.headers?.authorization, routeKey);
      (request.event.requestContext as { authorizer?: unknown }).authorizer = { lambda: verdict };
    },
  };
}

/** Anything but the route itself: the HTTP API's route-miss answer (a valid key held to its limits). */
function routeMiddleware(route: StreamRoute): RouteMiddleware {
  const optionalKey = authMiddleware(true);
  return {
    before: async (request) => {
      const method = request.event.requestContext.http.method;
      if (request.event.rawPath === route.path && method === route.method) return;
      await optionalKey.before?.(request);
      log.info("no such route on the stream URL", { method });
      if (request.event.rawPath === route.path)
        throw new AppError("method_not_allowed", { headers: { allow: route.method } });
      throw new AppError("route_not_found");
    },
  };
}
