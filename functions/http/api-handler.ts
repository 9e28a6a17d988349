/**
 * Builds a route's Lambda handler from its contract: the Middy chain every endpoint shares.
 *
 *   response  – serialises the result; turns any error into Format B (`{"detail": …}`), or Format A
 *               under `/manage/`; adds X-Request-Id and, for a caller with a bucket, the
 *               X-RateLimit-* headers, on every response; on the widget's routes, the CORS
 *               headers (http/cors.ts)
 *   auth      – turns the authorizer's verdict into 401 / 403 / 429 (routes with `auth: "apiKey"`);
 *               with `auth: "optionalApiKey"` a request without a valid key goes on, anonymous;
 *               with `auth: "manage"` the management authorizer's verdict, and the route's role
 *   json body – the body as JSON, nesting limited before anything recurses (http/json-body.ts);
 *               its failures are Pydantic-style 422 items
 *   validation  – body, query and path parameters against the contract's zod schemas; all failing
 *                 fields are reported together
 *   idempotency – replays or guards retried POSTs that carry an Idempotency-Key (when enabled)
 *
 * The handler itself receives typed input and returns a plain result; it never formats errors.
 */

import middy, { type MiddlewareObj, type Request } from "@middy/core";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import type * as z from "zod/mini";
import type { IdempotencyScope, StoredResponse, WorkFence } from "#functions/domain/idempotency";
import type { VisitorBinding } from "#functions/domain/visitor-access";
import {
  AppError,
  type AppError as AppErrorType,
  rateLimitDetail,
  serviceUnavailable,
  toFormatA,
  toFormatB,
  type ValidationItem,
  validationError,
} from "#functions/errors";
import { type AuthorizerContext, readAuthorizerContext, visitorOf } from "#functions/http/authorizer-context";
import { corsHeaders } from "#functions/http/cors";
import { parseJsonBody } from "#functions/http/json-body";
import {
  type ManagePrincipal,
  type ManageRole,
  type ManageVerdict,
  readManageContext,
} from "#functions/http/manage-context";
import { coerceParameters } from "#functions/http/parameters";
import { toValidationItems } from "#functions/http/validation";
import { annotateRequest, describeError, log, withRequestScope } from "#functions/log";
import type { ManageAccess } from "#lib/routes";

export type Schema = z.ZodMiniType;

/**
 * `apiKey`: a valid key is required. `optionalApiKey`: a valid key is held to its organization and
 * its bucket like anywhere (403, 429, rate headers), but a request without one is served too (the
 * route-miss answers). `countApiKey`: anyone is served whatever the verdict (liveness and the API
 * description must never be refused), but a valid key's answer carries its rate headers like any
 * other. `manage`: the management authorizer's verdict, checked against `access`. `none`: no
 * authorizer runs.
 */
export type RouteAuth = "apiKey" | "optionalApiKey" | "countApiKey" | "manage" | "none";

export interface RouteContract<
  Auth extends RouteAuth = RouteAuth,
  Body extends Schema | undefined = Schema | undefined,
  Query extends Schema | undefined = Schema | undefined,
  Path extends Schema | undefined = Schema | undefined,
  Response extends Schema = Schema,
> {
  operationId: string;
  summary: string;
  description: string;
  tags: readonly string[];
  auth: Auth;
  /** Honour the Idempotency-Key header. */
  idempotent?: boolean;
  body?: Body;
  /** The body may be left out entirely (it is then validated as `{}`). */
  bodyOptional?: boolean;
  query?: Query;
  path?: Path;
  /** `auth: "manage"`: who may call it; the same as the route table's (a unit test compares them). */
  access?: ManageAccess;
  /**
   * The website widget calls it (CORS; on `apiKey` routes a visitor's token too, then `caller.visitor`
   * is set); the same as the route table's `widget` (a unit test compares them).
   */
  widget?: "requests" | "messages";
  /** Status of a success (default 200); 204 answers without a body. */
  status?: 200 | 201 | 202 | 204;
  /** Schema of the success response. */
  response: Response;
  /** Error statuses this route can answer, for the OpenAPI document. */
  errors: readonly number[];
}

export interface Caller {
  organizationId: string;
  keyId: string;
  rateLimit: number;
  /** The key is a console "Try it" key. */
  test: boolean;
  /**
   * A website visitor's access token rather than an API key: the contact and chatbot it is bound to.
   * Only on the widget's routes; every domain call on its behalf is held to them.
   */
  visitor?: VisitorBinding;
}

/** A management caller: a person or a manage key, and the role it acts with. */
export interface ManageCaller {
  principal: ManagePrincipal;
  /** The organization acted on (organization routes, and always for keys). */
  organizationId?: string;
  role?: ManageRole;
  /** An operator acting on an organization they are no member of. */
  actingOperator: boolean;
}

/** On `viewer` and `admin` routes the organization is always known. */
export type OrganizationCaller = ManageCaller & { organizationId: string; role: ManageRole };

type Parsed<S extends Schema | undefined> = S extends Schema ? z.output<S> : undefined;

export interface ApiRequest<C extends RouteContract> {
  caller: C["auth"] extends "apiKey"
    ? Caller
    : C["auth"] extends "optionalApiKey"
      ? Caller | undefined
      : C["auth"] extends "manage"
        ? C["access"] extends "viewer" | "admin"
          ? OrganizationCaller
          : ManageCaller
        : undefined;
  body: Parsed<C["body"]>;
  query: Parsed<C["query"]>;
  path: Parsed<C["path"]>;
  requestId: string;
  method: string;
  rawPath: string;
  /** The request's headers, names in lower case (as API Gateway hands them over). */
  headers: Readonly<Record<string, string | undefined>>;
  /** The address the request came from, as API Gateway saw it. */
  sourceIp: string;
  /** Milliseconds left before the Lambda times out. */
  remainingTimeMs: () => number;
  /**
   * Set when the request carries an Idempotency-Key this attempt owns: the work writes through the
   * key's fence, which stores the answer `render` makes of its result with its last write.
   * `settleLater` is for work that goes on after the response has begun (a stream): the key is then
   * settled by the fence, or by the function it returns, given the error that ended the work.
   */
  idempotency:
    | {
        fence<R>(render: (result: R) => ApiResult<C>): WorkFence<R>;
        settleLater(): (error: unknown) => Promise<void>;
      }
    | undefined;
}

export interface ApiResult<C extends RouteContract> {
  status?: number;
  /** Omitted (undefined) when the contract's status is 204. */
  body: C["status"] extends 204 ? undefined : z.input<C["response"]>;
  headers?: Record<string, string>;
}

export type ApiEvent = APIGatewayProxyEventV2;
export type ApiResponse = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
};
export type LambdaHandler = (event: ApiEvent, context: Context) => Promise<ApiResponse>;

/** Per-request state shared by the middlewares of one chain. */
export interface RouteState {
  verdict: AuthorizerContext | undefined;
  /** Management routes: the management authorizer's verdict. */
  manageVerdict: ManageVerdict | undefined;
  caller: Caller | ManageCaller | undefined;
  input: { body: unknown; query: unknown; path: unknown };
  /** Set when this request claimed its Idempotency-Key. */
  idempotency?: {
    scope: IdempotencyScope;
    owner: string;
    /** The work's fence, given how its result is answered. */
    fence<R>(respond: (result: R) => StoredResponse): WorkFence<R>;
    /** The work stored its answer through the fence: nothing is left to store. */
    completed: boolean;
    /** The work goes on after the response began; it settles the key itself (`settleFailure` if it fails). */
    deferred: boolean;
    /** Settles the key after the work failed: a definite answer is stored, an unknown outcome handed back. */
    settleFailure(error: unknown): Promise<void>;
  };
  /** Set when an earlier request with the same Idempotency-Key already answered. */
  replay?: { statusCode: number; body: string; headers: Record<string, string> };
}
export type RouteRequest = Request<ApiEvent, ApiResponse, Error, Context, { state: RouteState }>;

/** Time kept back so the error response is built before Lambda's own timeout (Middy aborts then). */
export const EARLY_TIMEOUT_MS = 1_000;

export type RouteMiddleware = MiddlewareObj<ApiEvent, ApiResponse, Error, Context, { state: RouteState }>;

export interface ApiHandlerOptions {
  /**
   * The Idempotency-Key middleware (http/idempotency.ts), required when the contract is
   * `idempotent`. Passed in rather than imported here so routes without it don't bundle the
   * DynamoDB client.
   */
  idempotency?: (route: string) => RouteMiddleware;
}

export function apiHandler<C extends RouteContract>(
  contract: C,
  run: (request: ApiRequest<C>) => Promise<ApiResult<C>>,
  options: ApiHandlerOptions = {},
): LambdaHandler {
  if (contract.idempotent && !options.idempotency) {
    throw new Error(`${contract.operationId} is idempotent: pass the idempotency middleware`);
  }
  const chain = middy<ApiEvent, ApiResponse, Error, Context, { state: RouteState }>({
    timeoutEarlyInMillis: EARLY_TIMEOUT_MS,
    // Out of time means something we waited on was too slow: a 503, never Lambda's own timeout.
    timeoutEarlyResponse: () => {
      throw serviceUnavailable(new Error("the function ran out of time"));
    },
  })
    .use(responseMiddleware(contract))
    .use(
      contract.auth === "none" || contract.auth === "countApiKey"
        ? noopMiddleware
        : contract.auth === "manage"
          ? manageAuthMiddleware(contract.access)
          : authMiddleware(contract.auth === "optionalApiKey", contract.widget !== undefined),
    );
  if (contract.body) chain.use(jsonBodyMiddleware(contract.bodyOptional === true));
  chain.use(validationMiddleware(contract));
  if (contract.idempotent && options.idempotency) chain.use(options.idempotency(contract.operationId));

  const handler = chain.handler(async (event, context) => {
    const state = stateOf(chainRequestFor(event));
    if (state.replay) return state.replay;
    return lambdaResult(await run(apiRequestOf<C>(event, context)), contract.status);
  });

  return (event, context) => withRequestScope(event.requestContext.requestId, () => handler(event, context));
}

/** What a route's handler function receives, from the chain's state for `event`. */
export function apiRequestOf<C extends RouteContract>(event: ApiEvent, context: Context): ApiRequest<C> {
  const state = stateOf(chainRequestFor(event));
  const claimed = state.idempotency;
  return {
    caller: state.caller as ApiRequest<C>["caller"],
    body: state.input.body as Parsed<C["body"]>,
    query: state.input.query as Parsed<C["query"]>,
    path: state.input.path as Parsed<C["path"]>,
    requestId: event.requestContext.requestId,
    method: event.requestContext.http.method,
    rawPath: event.rawPath,
    headers: event.headers ?? {},
    sourceIp: event.requestContext.http.sourceIp,
    remainingTimeMs: () => (context.getRemainingTimeInMillis ? context.getRemainingTimeInMillis() : 29_000),
    idempotency: claimed
      ? {
          fence: <R>(render: (result: R) => ApiResult<C>) => claimed.fence<R>((r) => lambdaResult(render(r))),
          settleLater: () => {
            claimed.deferred = true;
            return (error) => claimed.settleFailure(error);
          },
        }
      : undefined,
  };
}

/** A handler's result as Lambda answers it; a 204 has no body. */
export function lambdaResult(
  result: ApiResult<RouteContract>,
  defaultStatus = 200,
): ApiResponse & { body: string } {
  const statusCode = result.status ?? defaultStatus;
  if (statusCode === 204) return { statusCode, headers: result.headers ?? {}, body: "" };
  return { statusCode, headers: result.headers ?? {}, body: JSON.stringify(result.body) };
}

// Middy hands middlewares the request object but the handler only the event; this map bridges them.
const requests = new WeakMap<ApiEvent, RouteRequest>();
export function chainRequestFor(event: ApiEvent): RouteRequest {
  const request = requests.get(event);
  if (!request) throw new Error("route state missing");
  return request;
}

export function stateOf(request: RouteRequest): RouteState {
  return request.internal.state;
}

const noopMiddleware: MiddlewareObj<ApiEvent, ApiResponse, Error, Context, { state: RouteState }> = {
  before: () => undefined,
};

// ---------- response ----------

export function responseMiddleware(
  contract: RouteContract,
): MiddlewareObj<ApiEvent, ApiResponse, Error, Context, { state: RouteState }> {
  const started = new WeakMap<ApiEvent, number>();
  const finish = (request: RouteRequest, response: ApiResponse): ApiResponse => {
    const state = stateOf(request);
    const headers: Record<string, string> = {
      ...(response.statusCode === 204 ? {} : { "content-type": "application/json" }),
      "cache-control": "no-store",
      ...response.headers,
      "x-request-id": request.event.requestContext.requestId,
      ...(state.manageVerdict
        ? manageRateLimitHeaders(state.manageVerdict)
        : rateLimitHeaders(state.verdict, response.statusCode)),
      ...(contract.widget && !isApiKeyVerdict(state.verdict)
        ? corsHeaders(request.event.headers?.origin)
        : {}),
    };
    log.info("request completed", {
      route: contract.operationId,
      status: response.statusCode,
      durationMs: Date.now() - (started.get(request.event) ?? Date.now()),
    });
    return { ...response, headers };
  };
  return {
    before: (request) => {
      started.set(request.event, Date.now());
      const context = authorizerLambdaContext(request.event);
      request.internal.state = {
        verdict: contract.auth === "manage" ? undefined : readAuthorizerContext(context),
        manageVerdict: contract.auth === "manage" ? readManageContext(context) : undefined,
        caller: undefined,
        input: { body: undefined, query: undefined, path: undefined },
      };
      requests.set(request.event, request);
    },
    after: (request) => {
      request.response = finish(request, request.response ?? { statusCode: 200, headers: {}, body: "" });
    },
    onError: (request) => {
      const error = request.error;
      if (!(error instanceof AppError)) {
        log.error("unhandled error", { route: contract.operationId, ...describeError(error) });
      } else if (error.code === "service_unavailable") {
        log.warn("dependency unavailable", { route: contract.operationId, ...describeError(error.cause) });
      }
      const formatted = usesFormatA(contract, request.event) ? toFormatA(error) : toFormatB(error);
      // Returning a value ends Middy's onError chain with this response.
      return finish(request, {
        statusCode: formatted.status,
        headers: formatted.headers,
        body: JSON.stringify(formatted.body),
      });
    },
  };
}

/** The management API (and anything under its prefix, unknown paths included) answers in Format A. */
function usesFormatA(contract: RouteContract, event: ApiEvent): boolean {
  return contract.auth === "manage" || event.rawPath === "/manage" || event.rawPath.startsWith("/manage/");
}

function authorizerLambdaContext(event: ApiEvent): unknown {
  const context = event.requestContext as { authorizer?: { lambda?: unknown } };
  return context.authorizer?.lambda;
}

/** A verdict on an API key (not a visitor's token, not a missing or invalid credential). */
function isApiKeyVerdict(verdict: AuthorizerContext | undefined): boolean {
  if (!verdict) return false;
  if (verdict.outcome === "subscription_inactive") return true;
  return (verdict.outcome === "allowed" || verdict.outcome === "rate_limited") && !verdict.visitorId;
}

/** Every response to a request with a valid key carries these, errors included. */
function rateLimitHeaders(verdict: AuthorizerContext | undefined, status: number): Record<string, string> {
  if (
    !verdict ||
    (verdict.outcome !== "allowed" &&
      verdict.outcome !== "rate_limited" &&
      verdict.outcome !== "subscription_inactive")
  )
    return {};
  const headers: Record<string, string> = {
    "x-ratelimit-limit": String(verdict.limit),
    "x-ratelimit-remaining": String(verdict.remaining),
    "x-ratelimit-reset": String(verdict.resetAt),
  };
  // Only the refusal says when to retry: a route that serves an empty bucket anyway (countApiKey) does not.
  if (verdict.outcome === "rate_limited" && status === 429)
    headers["retry-after"] = String(verdict.retryAfter);
  return headers;
}

/** The same headers for a management caller whose request took a token (refusals included: 403, 404, 422). */
function manageRateLimitHeaders(verdict: ManageVerdict): Record<string, string> {
  const rate = "rate" in verdict ? verdict.rate : undefined;
  if (!rate) return {};
  const headers: Record<string, string> = {
    "x-ratelimit-limit": String(rate.limit),
    "x-ratelimit-remaining": String(rate.remaining),
    "x-ratelimit-reset": String(rate.resetAt),
  };
  if (verdict.outcome === "rate_limited") headers["retry-after"] = String(verdict.retryAfter);
  return headers;
}

// ---------- auth ----------

export function authMiddleware(
  keyOptional: boolean,
  visitorsAllowed = false,
): MiddlewareObj<ApiEvent, ApiResponse, Error, Context, { state: RouteState }> {
  return {
    before: (request) => {
      const state = stateOf(request);
      const verdict = state.verdict;
      // A visitor's token outside the widget's routes is no key at all (the authorizer says so too).
      const misplacedVisitor =
        !visitorsAllowed &&
        (verdict?.outcome === "allowed" || verdict?.outcome === "rate_limited") &&
        verdict.visitorId !== undefined;
      if (!verdict || verdict.outcome === "invalid_key" || misplacedVisitor) {
        if (keyOptional) return;
        throw new AppError("invalid_api_key", { headers: { "www-authenticate": "Bearer" } });
      }
      if (verdict.outcome === "subscription_inactive") throw new AppError("subscription_inactive");
      if (verdict.outcome === "unavailable") throw serviceUnavailable();
      if (verdict.outcome === "error") throw new Error("authorizer reported an internal error");
      annotateRequest({ organizationId: verdict.organizationId, keyId: verdict.keyId });
      if (verdict.outcome === "rate_limited") throw rateLimitedError(verdict);
      const visitor = visitorOf(verdict);
      state.caller = {
        organizationId: verdict.organizationId,
        keyId: verdict.keyId,
        rateLimit: verdict.limit,
        test: verdict.outcome === "allowed" && verdict.test === true,
        ...(visitor ? { visitor } : {}),
      };
    },
  };
}

const ROLE_RANK: Record<ManageRole, number> = { viewer: 1, admin: 2, operator: 3 };

/**
 * Management routes: the verdict of the management authorizer becomes Format A 401 / 403 / 404 /
 * 422 / 429, and the route's required role is checked once more here (the authorizer picked the
 * bucket by the same rule; this keeps a route safe even if the two ever disagreed).
 */
function manageAuthMiddleware(access: ManageAccess | undefined): RouteMiddleware {
  return {
    before: (request) => {
      const state = stateOf(request);
      const verdict = state.manageVerdict;
      const unauthenticated = () =>
        new AppError("unauthenticated", { headers: { "www-authenticate": "Bearer" } });
      if (!verdict || !access) throw unauthenticated();
      switch (verdict.outcome) {
        case "unauthenticated":
          throw unauthenticated();
        case "forbidden":
          throw new AppError("forbidden", { detail: verdict.message });
        case "subscription_inactive":
          throw new AppError("subscription_inactive");
        case "organization_not_found":
          throw new AppError("organization_not_found");
        case "organization_required":
          throw new AppError("invalid_argument", {
            detail: [
              {
                type: "missing",
                loc: ["header", "X-Organization-Id"],
                msg:
                  verdict.memberships === 0
                    ? "You are a member of no organization yet"
                    : `You are a member of ${verdict.memberships} organizations: name the one to act on`,
                input: null,
              },
            ],
          });
        case "unavailable":
          throw serviceUnavailable();
        case "error":
          throw new Error("management authorizer reported an internal error");
        case "rate_limited":
          annotateRequest(principalLog(verdict.principal));
          throw new AppError("rate_limited", {
            detail: rateLimitDetail({
              kind: "management",
              limit: verdict.rate.limit,
              resetAt: verdict.rate.resetAt,
              retryAfter: verdict.retryAfter,
            }),
          });
        case "allowed": {
          annotateRequest({
            ...principalLog(verdict.principal),
            ...(verdict.organizationId ? { organizationId: verdict.organizationId } : {}),
          });
          const rank = verdict.role ? ROLE_RANK[verdict.role] : 0;
          const allowed =
            access === "signedIn" ||
            (access === "operator" && verdict.role === "operator") ||
            (access === "viewer" && verdict.organizationId !== undefined && rank >= ROLE_RANK.viewer) ||
            (access === "admin" && verdict.organizationId !== undefined && rank >= ROLE_RANK.admin);
          if (!allowed) {
            throw new AppError("forbidden", {
              detail:
                access === "operator"
                  ? "Only platform operators may do this"
                  : "Your role in this organization does not allow this: it needs an admin",
            });
          }
          state.caller = {
            principal: verdict.principal,
            ...(verdict.organizationId ? { organizationId: verdict.organizationId } : {}),
            ...(verdict.role ? { role: verdict.role } : {}),
            actingOperator: verdict.actingOperator === true,
          };
        }
      }
    },
  };
}

function principalLog(principal: ManagePrincipal): Record<string, string> {
  return principal.kind === "user" ? { userId: principal.userId } : { keyId: principal.keyId };
}

function rateLimitedError(verdict: Extract<AuthorizerContext, { outcome: "rate_limited" }>): AppErrorType {
  return new AppError("rate_limited", {
    detail: rateLimitDetail({
      kind: verdict.limitKind ?? "apiKey",
      limit: verdict.limit,
      resetAt: verdict.resetAt,
      retryAfter: verdict.retryAfter,
    }),
  });
}

// ---------- JSON body ----------

/** The body as JSON (http/json-body.ts: depth limit and prototype keys first), its failures as 422 items. */
export function jsonBodyMiddleware(
  optional = false,
): MiddlewareObj<ApiEvent, ApiResponse, Error, Context, { state: RouteState }> {
  return {
    before: (request) => {
      const raw = request.event.body;
      const parsed =
        optional && (raw === undefined || raw === "")
          ? {}
          : parseJsonBody(raw, request.event.isBase64Encoded);
      // The idempotency fingerprint reads the parsed body from the event.
      (request.event as { body?: unknown }).body = parsed;
      stateOf(request).input.body = parsed;
    },
  };
}

// ---------- validation ----------

export function validationMiddleware(
  contract: RouteContract,
): MiddlewareObj<ApiEvent, ApiResponse, Error, Context, { state: RouteState }> {
  return {
    before: (request) => {
      const state = stateOf(request);
      const problems: ValidationItem[] = [];
      const check = (location: "body" | "query" | "path", schema: Schema | undefined, value: unknown) => {
        if (!schema) return undefined;
        const input =
          location === "body" ? value : coerceParameters(schema, value as Record<string, string | undefined>);
        const result = schema.safeParse(input, { reportInput: true });
        if (result.success) return result.data;
        problems.push(...toValidationItems(location, result.error.issues, value));
        return undefined;
      };
      const path = check("path", contract.path, request.event.pathParameters ?? {});
      const query = check("query", contract.query, request.event.queryStringParameters ?? {});
      const body = check("body", contract.body, state.input.body);
      if (problems.length > 0) throw validationError(problems);
      state.input = { body, query, path };
    },
  };
}
