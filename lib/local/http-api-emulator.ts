/**
 * A local emulator of API Gateway HTTP API (payload format 2.0) in front of Lambda handlers.
 *
 * It reproduces the HTTP API behaviours our stack relies on, as AWS documents them, so a test that
 * passes here means the same on the deployed stack:
 *  - routing: exact routes (`{name}` = one segment), else the `$default` route, else the gateway's
 *    `404 {"message":"Not Found"}` (HTTP APIs never answer 405 themselves);
 *  - Lambda authorizer (simple responses): identity-source pre-check (401 without invoking),
 *    `isAuthorized:false` → 403, thrown `Unauthorized` → 401, other failures or > 10 s → 500,
 *    results cached per identity-source values for the configured TTL, context handed to the
 *    integration at `requestContext.authorizer.lambda` with its JSON types (or, with
 *    `authorizerContext: "strings"`, every value as a string: no AWS document promises the
 *    types survive, so integrations are tested against both);
 *  - the 2.0 event: lower-cased headers, repeated headers and query values comma-joined, cookies
 *    moved out of the headers, decoded path and query parameters, empty fields omitted, base64
 *    bodies for non-text content types, a full requestContext;
 *  - responses: statusCode/headers/body/isBase64Encoded/cookies, the inferred format (no
 *    statusCode → 200 with the whole value as JSON), function errors → `500 {"message":"Internal
 *    Server Error"}`, the 30 s integration timeout → `503 {"message":"Service Unavailable"}` while
 *    the handler runs on, and the `apigw-requestid` header on every response;
 *  - limits: 10 MB request body, 6 MB Lambda request payload, 10,240 bytes of request line and
 *    headers (answered 413 / 431 with a gateway-style body; the exact AWS status is unverified).
 * CORS and stage throttling are not configured on the stack, so they are not emulated.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { matchPath } from "../route-matching.ts";

export type LambdaFunction = (event: unknown, context: LambdaContext) => unknown;

export interface LambdaContext {
  functionName: string;
  functionVersion: string;
  invokedFunctionArn: string;
  memoryLimitInMB: string;
  awsRequestId: string;
  logGroupName: string;
  logStreamName: string;
  callbackWaitsForEmptyEventLoop: boolean;
  getRemainingTimeInMillis(): number;
}

export interface EmulatedFunction {
  name: string;
  handler: LambdaFunction;
  timeoutSeconds: number;
  memoryMb: number;
  /**
   * Loads the function on its first invocation (a cold start), if it was not loaded up front;
   * like Lambda's init phase, it does not count against the invocation's timeout.
   */
  init?: () => Promise<void>;
}

export interface EmulatedRoute {
  method: string;
  path: string;
  fn: EmulatedFunction;
  authorized: boolean;
  /** Which of `authorizers` guards the route (default: `authorizer`). */
  authorizerName?: string;
}

export interface EmulatedAuthorizer {
  fn: EmulatedFunction;
  /** e.g. `$request.header.Authorization`; empty means the authorizer runs on every request. */
  identitySource: readonly string[];
  resultsCacheTtlSeconds: number;
}

export interface EmulatorOptions {
  routes: readonly EmulatedRoute[];
  defaultRoute?: EmulatedFunction;
  /** The authorizer runs on the `$default` route too. */
  defaultRouteAuthorized?: boolean;
  authorizer?: EmulatedAuthorizer;
  /** Further authorizers by name, for routes that name one (as an HTTP API holds several). */
  authorizers?: Readonly<Record<string, EmulatedAuthorizer>>;
  host?: string;
  port?: number;
  /** HTTP API integration timeout (max 30 s). */
  integrationTimeoutMs?: number;
  /** How the authorizer's context reaches integrations: with its JSON types (default) or as strings. */
  authorizerContext?: AuthorizerContextShape;
}

export type AuthorizerContextShape = "typed" | "strings";

export interface RunningEmulator {
  baseUrl: string;
  server: Server;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 10 * 1024 * 1024;
const MAX_LAMBDA_PAYLOAD_BYTES = 6 * 1024 * 1024;
const MAX_REQUEST_HEAD_BYTES = 10_240;
const NODE_MAX_HEADER_BYTES = 64 * 1024;
const AUTHORIZER_TIMEOUT_MS = 10_000;
const TEXT_CONTENT_TYPES = /^(text\/|application\/json|application\/xml|application\/javascript)/i;

class GatewayError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(body);
  }
}
const gateway = {
  notFound: () => new GatewayError(404, "Not Found"),
  unauthorized: () => new GatewayError(401, "Unauthorized"),
  forbidden: () => new GatewayError(403, "Forbidden"),
  internal: () => new GatewayError(500, "Internal Server Error"),
  unavailable: () => new GatewayError(503, "Service Unavailable"),
  tooLarge: () => new GatewayError(413, "Request Entity Too Large"),
  headersTooLarge: () => new GatewayError(431, "Request Header Fields Too Large"),
};

export async function startHttpApiEmulator(options: EmulatorOptions): Promise<RunningEmulator> {
  const apiId = randomBytes(5).toString("hex");
  const authorizerCache = new Map<string, { context: unknown; until: number }>();
  const integrationTimeoutMs = Math.min(options.integrationTimeoutMs ?? 30_000, 30_000);

  // Node's own limit on a request's head (16 KB) would answer a bare 431 before the gateway's own
  // check (10,240 bytes) runs; a higher one leaves that answer to the emulator, and a request even
  // beyond it still gets the gateway's body (clientError below).
  const server = createServer({ maxHeaderSize: NODE_MAX_HEADER_BYTES }, (req, res) => {
    const requestId = gatewayRequestId();
    handle(req, requestId)
      .then((response) => send(res, requestId, response))
      .catch((error: unknown) => {
        const failure = error instanceof GatewayError ? error : gateway.internal();
        // As on AWS, a failing function is a 500; locally its error is worth seeing.
        if (error instanceof FunctionError) console.error(`[emulator] ${error.message}:`, error.cause);
        else if (!(error instanceof GatewayError)) console.error("[emulator] unexpected failure", error);
        send(res, requestId, {
          statusCode: failure.status,
          headers: { "content-type": "application/json" },
          body: Buffer.from(JSON.stringify({ message: failure.body })),
          cookies: [],
        });
      });
  });

  server.on("clientError", (error: NodeJS.ErrnoException, socket) => answerMalformed(error, socket));

  async function handle(req: IncomingMessage, requestId: string): Promise<GatewayResponse> {
    const method = (req.method ?? "GET").toUpperCase();
    const head = `${method} ${req.url ?? "/"} HTTP/1.1\r\n${req.rawHeaders.join("")}`;
    if (Buffer.byteLength(head) + req.rawHeaders.length * 2 > MAX_REQUEST_HEAD_BYTES)
      throw gateway.headersTooLarge();
    const body = await readBody(req);
    const url = requestTarget(req.url ?? "/");

    const matched = options.routes
      .map((route) => ({
        route,
        params: route.method === method ? matchPath(route.path, url.path) : undefined,
      }))
      .filter((candidate) => candidate.params !== undefined)
      .sort((a, b) => Number(a.route.path.includes("{")) - Number(b.route.path.includes("{")))[0];
    const fn = matched?.route.fn ?? options.defaultRoute;
    if (!fn) throw gateway.notFound();
    const routeKey = matched ? `${matched.route.method} ${matched.route.path}` : "$default";

    const event = buildEvent({
      req,
      url,
      method,
      body,
      routeKey,
      requestId,
      apiId,
      pathParameters: matched?.params,
    });
    const authorized = matched ? matched.route.authorized : options.defaultRouteAuthorized === true;
    const named = matched?.route.authorizerName;
    const guard = named ? options.authorizers?.[named] : options.authorizer;
    if (named && !guard) throw new Error(`no authorizer named ${named}`);
    if (authorized && guard) {
      const context = await authorize(guard, named ?? "", event);
      (event.requestContext as Record<string, unknown>).authorizer = {
        lambda: options.authorizerContext === "strings" ? stringValues(context) : context,
      };
    }
    const payloadSize = Buffer.byteLength(JSON.stringify(event));
    if (payloadSize > MAX_LAMBDA_PAYLOAD_BYTES) throw gateway.tooLarge();
    const result = await invoke(fn, event, integrationTimeoutMs, gateway.unavailable);
    return interpret(result);
  }

  async function authorize(authorizer: EmulatedAuthorizer, name: string, event: Payload): Promise<unknown> {
    const identity = authorizer.identitySource.map((source) => identityValue(source, event));
    if (identity.some((value) => value === undefined || value === "")) throw gateway.unauthorized();
    // The cache is per authorizer.
    const cacheKey = [name, ...identity].join("\u0000");
    const cacheable = authorizer.resultsCacheTtlSeconds > 0 && identity.length > 0;
    const cached = cacheable ? authorizerCache.get(cacheKey) : undefined;
    if (cached && cached.until > Date.now()) return cached.context;

    const { body: _body, isBase64Encoded: _b64, ...rest } = event;
    const authorizerEvent = {
      ...rest,
      type: "REQUEST",
      routeArn: `arn:aws:execute-api:us-east-1:123456789012:${apiId}/$default/${event.requestContext.http.method}${event.rawPath}`,
      identitySource: identity,
    };
    let result: unknown;
    try {
      result = await invoke(authorizer.fn, authorizerEvent, AUTHORIZER_TIMEOUT_MS, gateway.internal);
    } catch (error) {
      if (
        error instanceof FunctionError &&
        error.cause instanceof Error &&
        error.cause.message === "Unauthorized"
      ) {
        throw gateway.unauthorized();
      }
      throw gateway.internal();
    }
    if (
      result === null ||
      typeof result !== "object" ||
      typeof (result as { isAuthorized?: unknown }).isAuthorized !== "boolean"
    ) {
      throw gateway.internal();
    }
    const simple = result as { isAuthorized: boolean; context?: unknown };
    if (!simple.isAuthorized) throw gateway.forbidden();
    const context = simple.context ?? {};
    if (cacheable)
      authorizerCache.set(cacheKey, {
        context,
        until: Date.now() + authorizer.resultsCacheTtlSeconds * 1000,
      });
    return context;
  }

  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve),
  );
  const address = server.address() as AddressInfo;
  return {
    baseUrl: `http://${options.host ?? "127.0.0.1"}:${address.port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The context as a gateway that stringifies values would pass it: `1` → `"1"`, `true` → `"true"`. */
function stringValues(context: unknown): unknown {
  if (context === null || typeof context !== "object") return context;
  return Object.fromEntries(
    Object.entries(context).map(([key, value]) => [
      key,
      typeof value === "object" && value !== null ? JSON.stringify(value) : String(value),
    ]),
  );
}

// ---------- the event ----------

export interface Payload {
  version: "2.0";
  routeKey: string;
  rawPath: string;
  rawQueryString: string;
  cookies?: string[];
  headers: Record<string, string>;
  queryStringParameters?: Record<string, string>;
  pathParameters?: Record<string, string>;
  requestContext: {
    accountId: string;
    apiId: string;
    domainName: string;
    domainPrefix: string;
    http: { method: string; path: string; protocol: string; sourceIp: string; userAgent: string };
    requestId: string;
    routeKey: string;
    stage: string;
    time: string;
    timeEpoch: number;
    authorizer?: unknown;
  };
  body?: string;
  isBase64Encoded: boolean;
}

/**
 * A request target as sent: its path and query, raw. API Gateway routes on the path as sent and
 * hands it over as `rawPath`; it does not resolve dot segments, encoded (`%2e%2e`) or not, where a
 * WHATWG URL parser would (`/api/%2e%2e/ping` is `/ping` to `new URL`, and an unknown path to the
 * gateway). An absolute-form target (`http://host/path`) is reduced to its path.
 */
export function requestTarget(target: string): RequestTarget {
  let rest = target;
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(rest);
  if (origin) rest = rest.slice(origin[0].length);
  const fragment = rest.indexOf("#");
  if (fragment >= 0) rest = rest.slice(0, fragment);
  const mark = rest.indexOf("?");
  const path = mark >= 0 ? rest.slice(0, mark) : rest;
  return { path: path.startsWith("/") ? path : `/${path}`, query: mark >= 0 ? rest.slice(mark + 1) : "" };
}

export interface RequestTarget {
  /** The path as sent (percent-encoding and dot segments kept). */
  path: string;
  /** The query string as sent, without its `?`. */
  query: string;
}

export function buildEvent(input: {
  req: IncomingMessage;
  url: RequestTarget;
  method: string;
  body: Buffer;
  routeKey: string;
  requestId: string;
  apiId: string;
  pathParameters: Record<string, string> | undefined;
}): Payload {
  const { req, url, method, body } = input;
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] ?? "").toLowerCase();
    const value = req.rawHeaders[i + 1] ?? "";
    if (name === "cookie") {
      cookies = [...(cookies ?? []), ...value.split(/;\s*/).filter(Boolean)];
      continue;
    }
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(url.query))
    query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  const host = headers.host ?? "localhost";
  const now = new Date();
  const contentType = headers["content-type"] ?? "";
  const textual = TEXT_CONTENT_TYPES.test(contentType);
  const event: Payload = {
    version: "2.0",
    routeKey: input.routeKey,
    rawPath: url.path,
    rawQueryString: url.query,
    headers,
    requestContext: {
      accountId: "123456789012",
      apiId: input.apiId,
      domainName: host,
      domainPrefix: host.split(".")[0] ?? host,
      http: {
        method,
        path: url.path,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress?.replace(/^::ffff:/, "") ?? "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: input.requestId,
      routeKey: input.routeKey,
      stage: "$default",
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: false,
  };
  if (cookies) event.cookies = cookies;
  if (Object.keys(query).length > 0) event.queryStringParameters = query;
  if (input.pathParameters && Object.keys(input.pathParameters).length > 0)
    event.pathParameters = input.pathParameters;
  if (body.length > 0) {
    event.body = textual ? body.toString("utf8") : body.toString("base64");
    event.isBase64Encoded = !textual;
  }
  return event;
}

function identityValue(source: string, event: Payload): string | undefined {
  const header = /^\$request\.header\.(.+)$/i.exec(source)?.[1];
  if (header) return event.headers[header.toLowerCase()];
  const query = /^\$request\.querystring\.(.+)$/.exec(source)?.[1];
  if (query) return event.queryStringParameters?.[query];
  if (source === "$context.routeKey") return event.routeKey;
  return undefined;
}

// ---------- invoking ----------

class FunctionError extends Error {}

async function invoke(
  fn: EmulatedFunction,
  event: unknown,
  gatewayTimeoutMs: number,
  onGatewayTimeout: () => GatewayError,
): Promise<unknown> {
  try {
    await fn.init?.();
  } catch (error) {
    throw new FunctionError(`function ${fn.name} failed to initialise`, { cause: error });
  }
  const started = Date.now();
  const lambdaTimeoutMs = fn.timeoutSeconds * 1000;
  const context: LambdaContext = {
    functionName: fn.name,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${fn.name}`,
    memoryLimitInMB: String(fn.memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${fn.name}`,
    logStreamName: "local",
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, lambdaTimeoutMs - (Date.now() - started)),
  };
  // Lambda serialises events: the handler gets its own copy, as over the wire.
  const run = Promise.resolve().then(() => fn.handler(JSON.parse(JSON.stringify(event)), context));
  let timer: NodeJS.Timeout | undefined;
  const limit = Math.min(lambdaTimeoutMs, gatewayTimeoutMs);
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      // The function's own timeout is a function error (500); the gateway's is a 503.
      () => reject(lambdaTimeoutMs <= gatewayTimeoutMs ? gateway.internal() : onGatewayTimeout()),
      limit,
    );
  });
  try {
    const result = await Promise.race([run, timeout]);
    return JSON.parse(JSON.stringify(result ?? null));
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw new FunctionError(`function ${fn.name} failed`, { cause: error });
  } finally {
    clearTimeout(timer);
    run.catch(() => undefined);
  }
}

interface GatewayResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer;
  cookies: string[];
}

function interpret(result: unknown): GatewayResponse {
  if (result !== null && typeof result === "object" && "statusCode" in result) {
    const response = result as {
      statusCode: unknown;
      headers?: Record<string, unknown>;
      body?: unknown;
      isBase64Encoded?: boolean;
      cookies?: unknown[];
    };
    if (
      typeof response.statusCode !== "number" ||
      (response.body !== undefined && typeof response.body !== "string")
    ) {
      throw gateway.internal();
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers ?? {}))
      headers[name.toLowerCase()] = String(value);
    const text = response.body ?? "";
    const body = response.isBase64Encoded ? Buffer.from(text, "base64") : Buffer.from(text);
    if (body.length > MAX_LAMBDA_PAYLOAD_BYTES) throw gateway.internal();
    return { statusCode: response.statusCode, headers, body, cookies: (response.cookies ?? []).map(String) };
  }
  // The inferred format: valid JSON without statusCode is a 200 whose body is that JSON.
  return {
    statusCode: 200,
    headers: { "content-type": "application/json" },
    body: Buffer.from(JSON.stringify(result)),
    cookies: [],
  };
}

// ---------- plumbing ----------

export async function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw gateway.tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * A request Node cannot parse (its head beyond even Node's limit, a malformed request line) gets
 * the gateway's own answer too: 431 or 400 with a `{"message"}` body and an `apigw-requestid`,
 * never a bare status line.
 */
function answerMalformed(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || error.code === "ECONNRESET") return void socket.destroy();
  const failure =
    error.code === "HPE_HEADER_OVERFLOW" ? gateway.headersTooLarge() : new GatewayError(400, "Bad Request");
  const body = JSON.stringify({ message: failure.body });
  const reason = failure.status === 431 ? "Request Header Fields Too Large" : "Bad Request";
  socket.end(
    `HTTP/1.1 ${failure.status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\napigw-requestid: ${gatewayRequestId()}\r\nconnection: close\r\n\r\n${body}`,
  );
}

function send(res: ServerResponse, requestId: string, response: GatewayResponse): void {
  if (res.headersSent) return;
  const headers: Record<string, string | string[]> = {
    ...response.headers,
    "apigw-requestid": requestId,
    "content-length": String(response.body.length),
  };
  if (response.cookies.length > 0) headers["set-cookie"] = response.cookies;
  res.writeHead(response.statusCode, headers);
  res.end(response.body);
}

/** API Gateway request ids look like `Kx1y2z3aIAMEbQ=`. */
function gatewayRequestId(): string {
  return `${randomBytes(10).toString("base64").replace(/[+/]/g, "A").slice(0, 13)}=`;
}

function clfTime(date: Date): string {
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${pad(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}
