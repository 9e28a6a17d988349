/**
 * The functions facing a table that accepts connections and never answers (a real TCP server that
 * stays silent): the authorizer gives its verdict, `unavailable`, well before its Lambda would time
 * out, and every route whose own table call gets no answer says 503 with Retry-After, in Format B.
 * The routes get a Lambda context with a quarter of an hour left, so the 503 can only come from the
 * table client's own timeouts, not from the handler running out of time; a hang fails the test by
 * its timeout.
 */
import { createServer, type Server, type Socket } from "node:net";
import type { Context } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateApiKey } from "#functions/domain/api-keys";

let server: Server;
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  Object.assign(process.env, {
    TABLE_NAME: "silent-table",
    AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${port}`,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    LOG_LEVEL: "error",
  });
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A Lambda context that says how long is left, as Lambda's does. */
const QUARTER_HOUR_SECONDS = 900;
function lambdaContext(timeoutSeconds: number): Context {
  const started = Date.now();
  return Object.freeze({
    functionName: "test",
    functionVersion: "$LATEST",
    invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:test",
    memoryLimitInMB: "512",
    awsRequestId: "request-1",
    logGroupName: "/aws/lambda/test",
    logStreamName: "local",
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, timeoutSeconds * 1000 - (Date.now() - started)),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  });
}

const organizationId = "7d0f4f0e-8a51-4d3b-9b43-1f0b7b9c2a10";
const conversationId = "1b6f9d2e-4c3a-4f7e-9a8b-2c1d0e9f8a7b";

/** An integration's event, as the gateway hands it on after the authorizer let the key in. */
function apiEvent(method: string, path: string, options: { body?: unknown; routeKey?: string } = {}) {
  return {
    version: "2.0",
    routeKey: options.routeKey ?? `${method} ${path}`,
    rawPath: path,
    rawQueryString: "",
    headers: { "content-type": "application/json", authorization: "Bearer cbk_test" },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    isBase64Encoded: false,
    requestContext: {
      accountId: "123456789012",
      apiId: "api",
      domainName: "api.example.com",
      domainPrefix: "api",
      http: { method, path, protocol: "HTTP/1.1", sourceIp: "203.0.113.1", userAgent: "test" },
      requestId: `req-${method}-${path}`,
      routeKey: options.routeKey ?? `${method} ${path}`,
      stage: "$default",
      time: "21/Nov/2026:12:00:00 +0000",
      timeEpoch: 0,
      authorizer: {
        lambda: { outcome: "allowed", organizationId, keyId: "key-1", limit: 100, remaining: 99, resetAt: 1 },
      },
    },
  };
}

type Handler = (
  event: unknown,
  context: Context,
) => Promise<{
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}>;

describe("a table that never answers", () => {
  it("gets the authorizer's verdict `unavailable` in time, never a throw", async () => {
    const { handler } = await import("#functions/handlers/authorizer");

    const result = await handler({
      version: "2.0",
      type: "REQUEST",
      routeArn: "arn:aws:execute-api:us-east-1:123456789012:api/$default/GET/api/me",
      identitySource: [],
      routeKey: "GET /api/me",
      rawPath: "/api/me",
      rawQueryString: "",
      headers: { authorization: `Bearer ${generateApiKey()}` },
      requestContext: apiEvent("GET", "/api/me").requestContext,
    } as never);

    expect(result).toEqual({ isAuthorized: true, context: { outcome: "unavailable" } });
  }, 20_000);

  it("gets every route whose own table call hangs a 503 with Retry-After", async () => {
    const routes: [string, Handler, ReturnType<typeof apiEvent>][] = [
      [
        "GET /api/me",
        (await import("#functions/handlers/get-me")).handler as Handler,
        apiEvent("GET", "/api/me"),
      ],
      [
        "GET /api/conversation/{id}/messages",
        (await import("#functions/handlers/list-messages")).handler as Handler,
        {
          ...apiEvent("GET", `/api/conversation/${conversationId}/messages`, {
            routeKey: "GET /api/conversation/{conversation_id}/messages",
          }),
          pathParameters: { conversation_id: conversationId },
        } as ReturnType<typeof apiEvent>,
      ],
      [
        "POST /api/conversation",
        (await import("#functions/handlers/create-conversation")).handler as Handler,
        apiEvent("POST", "/api/conversation", { body: { chatbot_id: conversationId } }),
      ],
      [
        "POST /api/message",
        (await import("#functions/handlers/send-message")).handler as Handler,
        apiEvent("POST", "/api/message", { body: { conversation_id: conversationId, message: "hello" } }),
      ],
    ];

    const answers = await Promise.all(
      routes.map(([, handler, event]) => handler(event, lambdaContext(QUARTER_HOUR_SECONDS))),
    );

    for (const [index, answer] of answers.entries()) {
      const route = routes[index]?.[0];
      expect({ route, status: answer.statusCode, body: JSON.parse(answer.body) }).toEqual({
        route,
        status: 503,
        body: { detail: "Service temporarily unavailable" },
      });
      expect(Number(answer.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(answer.headers["x-request-id"]).toBe(routes[index]?.[2].requestContext.requestId);
    }
  }, 30_000);

  it("gets a route that runs out of Lambda time a 503, not Lambda's own timeout or a 500", async () => {
    const { handler } = (await import("#functions/handlers/send-message")) as { handler: Handler };

    // Two seconds left: less than one table call may take, so the handler's early timeout answers.
    const answer = await handler(
      apiEvent("POST", "/api/message", { body: { conversation_id: conversationId, message: "hello" } }),
      lambdaContext(2),
    );

    expect(answer.statusCode).toBe(503);
    expect(JSON.parse(answer.body)).toEqual({ detail: "Service temporarily unavailable" });
    expect(answer.headers["retry-after"]).toBeDefined();
  }, 20_000);
});
