/** The local API Gateway emulator reproduces HTTP API behaviour (the behaviours listed at the top of lib/local/http-api-emulator.ts). */
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import {
  type EmulatedFunction,
  type EmulatorOptions,
  type LambdaFunction,
  type RunningEmulator,
  startHttpApiEmulator,
} from "#lib/local/http-api-emulator";

const running: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((emulator) => emulator.close()));
});

const fn = (handler: LambdaFunction, timeoutSeconds = 5): EmulatedFunction => ({
  name: "fn",
  handler,
  timeoutSeconds,
  memoryMb: 128,
});

async function emulator(options: Partial<EmulatorOptions> & Pick<EmulatorOptions, "routes">) {
  const started = await startHttpApiEmulator(options);
  running.push(started);
  return started;
}

type EchoedEvent = Record<string, unknown> & {
  headers: Record<string, string | undefined>;
  requestContext: { timeEpoch: unknown; authorizer?: unknown };
};

/** A function that answers with the event it received. */
const echo = fn((event) => ({ statusCode: 200, body: JSON.stringify(event) }));

describe("routing", () => {
  it("answers the gateway's own 404 when no route and no $default route match, also for another method", async () => {
    const api = await emulator({ routes: [{ method: "GET", path: "/a", fn: echo, authorized: false }] });

    for (const [method, path] of [
      ["GET", "/b"],
      ["POST", "/a"],
    ] as const) {
      const response = await fetch(`${api.baseUrl}${path}`, { method });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ message: "Not Found" });
      expect(response.headers.get("apigw-requestid")).toBeTruthy();
    }
  });

  it("sends unmatched requests to the $default route", async () => {
    const api = await emulator({ routes: [], defaultRoute: echo });

    const event = (await (await fetch(`${api.baseUrl}/anything`)).json()) as EchoedEvent;

    expect(event.routeKey).toBe("$default");
    expect(event.requestContext.authorizer).toBeUndefined();
  });

  it("runs the authorizer on the $default route when it is authorized", async () => {
    const api = await emulator({
      routes: [],
      defaultRoute: echo,
      defaultRouteAuthorized: true,
      authorizer: {
        fn: fn(() => ({ isAuthorized: true, context: { outcome: "allowed" } })),
        identitySource: [],
        resultsCacheTtlSeconds: 0,
      },
    });

    const event = (await (await fetch(`${api.baseUrl}/anything`)).json()) as EchoedEvent;

    expect(event.routeKey).toBe("$default");
    expect(event.requestContext.authorizer).toEqual({ lambda: { outcome: "allowed" } });
  });
});

describe("the payload 2.0 event", () => {
  it("lower-cases and joins headers, moves cookies, decodes parameters, omits empty fields", async () => {
    const api = await emulator({
      routes: [{ method: "POST", path: "/items/{id}", fn: echo, authorized: false }],
    });

    // node:http sends repeated headers as separate lines (fetch would merge them first).
    const event = await new Promise<EchoedEvent>((resolve, reject) => {
      const url = new URL(`${api.baseUrl}/items/a%2Fb?x=1&x=2&y=%C3%A9`);
      const req = request(
        { host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: "POST" },
        (res) => {
          let text = "";
          res.on("data", (chunk: Buffer) => {
            text += chunk.toString();
          });
          res.on("end", () => resolve(JSON.parse(text)));
        },
      );
      req.on("error", reject);
      req.setHeader("X-Multi", ["v1", "v2"]);
      req.setHeader("Cookie", "c1=v1; c2=v2");
      req.setHeader("Content-Type", "application/json");
      req.end('{"a":1}');
    });

    expect(event).toMatchObject({
      version: "2.0",
      routeKey: "POST /items/{id}",
      rawPath: "/items/a%2Fb",
      rawQueryString: "x=1&x=2&y=%C3%A9",
      cookies: ["c1=v1", "c2=v2"],
      queryStringParameters: { x: "1,2", y: "é" },
      pathParameters: { id: "a/b" },
      body: '{"a":1}',
      isBase64Encoded: false,
      requestContext: {
        http: { method: "POST", path: "/items/a%2Fb" },
        stage: "$default",
        routeKey: "POST /items/{id}",
      },
    });
    expect(event.headers["x-multi"]).toBe("v1,v2");
    expect(event.headers.cookie).toBeUndefined();
    expect(typeof event.requestContext.timeEpoch).toBe("number");
  });

  it("omits what a request does not have, and base64-encodes non-text bodies", async () => {
    const api = await emulator({ routes: [{ method: "POST", path: "/x", fn: echo, authorized: false }] });

    const bare = (await (await fetch(`${api.baseUrl}/x`, { method: "POST" })).json()) as EchoedEvent;
    const form = await (
      await fetch(`${api.baseUrl}/x`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "a=1",
      })
    ).json();

    for (const field of ["body", "cookies", "queryStringParameters", "pathParameters"])
      expect(bare).not.toHaveProperty(field);
    expect(bare.rawQueryString).toBe("");
    expect(form).toMatchObject({ isBase64Encoded: true, body: Buffer.from("a=1").toString("base64") });
  });
});

describe("responses", () => {
  it("uses the inferred format when there is no statusCode", async () => {
    const api = await emulator({
      routes: [{ method: "GET", path: "/x", fn: fn(() => ({ body: "hi" })), authorized: false }],
    });

    const response = await fetch(`${api.baseUrl}/x`);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ body: "hi" });
  });

  it("decodes base64 bodies and sets cookies", async () => {
    const handler = fn(() => ({
      statusCode: 201,
      headers: { "X-Thing": "1" },
      cookies: ["a=b; Path=/"],
      isBase64Encoded: true,
      body: Buffer.from("raw bytes").toString("base64"),
    }));
    const api = await emulator({ routes: [{ method: "GET", path: "/x", fn: handler, authorized: false }] });

    const response = await fetch(`${api.baseUrl}/x`);

    expect(response.status).toBe(201);
    expect(await response.text()).toBe("raw bytes");
    expect(response.headers.get("x-thing")).toBe("1");
    expect(response.headers.get("set-cookie")).toBe("a=b; Path=/");
  });

  it("answers 500 {message} for a function error or an unusable result", async () => {
    const api = await emulator({
      routes: [
        {
          method: "GET",
          path: "/throws",
          fn: fn(() => Promise.reject(new Error("boom"))),
          authorized: false,
        },
        { method: "GET", path: "/bad", fn: fn(() => ({ statusCode: "200" })), authorized: false },
      ],
    });

    for (const path of ["/throws", "/bad"]) {
      const response = await fetch(`${api.baseUrl}${path}`);
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ message: "Internal Server Error" });
    }
  });

  it("answers 503 at the integration timeout while the function runs on", async () => {
    let finished = false;
    const slow = fn(async () => {
      await new Promise((resolve) => setTimeout(resolve, 600));
      finished = true;
      return { statusCode: 200, body: "late" };
    }, 10);
    const api = await emulator({
      routes: [{ method: "GET", path: "/slow", fn: slow, authorized: false }],
      integrationTimeoutMs: 200,
    });

    const response = await fetch(`${api.baseUrl}/slow`);

    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ message: "Service Unavailable" });
    expect(finished).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(finished).toBe(true);
  });
});

describe("the Lambda authorizer", () => {
  const route = (authorizer: EmulatorOptions["authorizer"]) => ({
    routes: [{ method: "GET", path: "/secure", fn: echo, authorized: true }],
    authorizer,
  });

  it("answers 401 without invoking the authorizer when an identity source is missing", async () => {
    let invoked = 0;
    const authorizer = fn(() => {
      invoked++;
      return { isAuthorized: true };
    });
    const api = await emulator(
      route({ fn: authorizer, identitySource: ["$request.header.Authorization"], resultsCacheTtlSeconds: 0 }),
    );

    const response = await fetch(`${api.baseUrl}/secure`);

    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ message: "Unauthorized" });
    expect(invoked).toBe(0);
  });

  it("maps a denial to 403, a thrown Unauthorized to 401, anything else to 500", async () => {
    const cases: [LambdaFunction, number, string][] = [
      [() => ({ isAuthorized: false }), 403, "Forbidden"],
      [() => Promise.reject(new Error("Unauthorized")), 401, "Unauthorized"],
      [() => Promise.reject(new Error("database down")), 500, "Internal Server Error"],
      [() => ({ allowed: true }), 500, "Internal Server Error"],
    ];
    for (const [handler, status, message] of cases) {
      const api = await emulator(route({ fn: fn(handler), identitySource: [], resultsCacheTtlSeconds: 0 }));
      const response = await fetch(`${api.baseUrl}/secure`);
      expect(response.status).toBe(status);
      expect(await response.json()).toEqual({ message });
    }
  });

  it("hands the context to the integration with its JSON types", async () => {
    const authorizer = fn(() => ({
      isAuthorized: true,
      context: { organizationId: "org", limit: 10, active: true },
    }));
    const api = await emulator(route({ fn: authorizer, identitySource: [], resultsCacheTtlSeconds: 0 }));

    const event = (await (await fetch(`${api.baseUrl}/secure`)).json()) as EchoedEvent;

    expect(event.requestContext.authorizer).toEqual({
      lambda: { organizationId: "org", limit: 10, active: true },
    });
  });

  it("hands every context value over as a string when told to, as a stringifying gateway would", async () => {
    const authorizer = fn(() => ({
      isAuthorized: true,
      context: { organizationId: "org", limit: 10, active: true, tags: ["a"] },
    }));
    const api = await emulator({
      ...route({ fn: authorizer, identitySource: [], resultsCacheTtlSeconds: 0 }),
      authorizerContext: "strings",
    });

    const event = (await (await fetch(`${api.baseUrl}/secure`)).json()) as EchoedEvent;

    expect(event.requestContext.authorizer).toEqual({
      lambda: { organizationId: "org", limit: "10", active: "true", tags: '["a"]' },
    });
  });

  it("caches by identity-source values for the TTL, and never without an identity source", async () => {
    let invoked = 0;
    const authorizer = fn(() => {
      invoked++;
      return { isAuthorized: true, context: { n: invoked } };
    });
    const cached = await emulator(
      route({
        fn: authorizer,
        identitySource: ["$request.header.Authorization"],
        resultsCacheTtlSeconds: 300,
      }),
    );
    for (const key of ["a", "a", "b", "a"])
      await fetch(`${cached.baseUrl}/secure`, { headers: { authorization: key } });
    expect(invoked).toBe(2);

    invoked = 0;
    const uncached = await emulator(
      route({ fn: authorizer, identitySource: [], resultsCacheTtlSeconds: 300 }),
    );
    for (let i = 0; i < 3; i++) await fetch(`${uncached.baseUrl}/secure`);
    expect(invoked).toBe(3);
  });
});

/** One request sent exactly as given (path as is, raw headers): what curl --path-as-is sends. */
function rawRequest(
  baseUrl: string,
  options: { path: string; method?: string; headers?: Record<string, string>; body?: Buffer },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: options.path,
        method: options.method ?? "GET",
        headers: options.headers,
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    // The server may answer (413, 431) before it has read everything sent.
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error);
    });
    req.end(options.body);
  });
}

describe("paths as sent", () => {
  it("does not resolve dot segments, encoded or not: they reach no route but $default, raw", async () => {
    const api = await emulator({
      routes: [{ method: "GET", path: "/ping", fn: echo, authorized: false }],
      defaultRoute: echo,
    });

    for (const path of ["/api/%2e%2e/ping", "/api/%2E%2E/ping", "/api/../ping", "/api/./../ping"]) {
      const answer = await rawRequest(api.baseUrl, { path });
      const event = JSON.parse(answer.text) as EchoedEvent;
      expect([path, event.routeKey, event.rawPath]).toEqual([path, "$default", path]);
    }
    const direct = JSON.parse((await rawRequest(api.baseUrl, { path: "/ping?a=%2e" })).text) as EchoedEvent;
    expect([direct.routeKey, direct.rawQueryString]).toEqual(["GET /ping", "a=%2e"]);
  });
});

describe("the gateway's own limits", () => {
  const expectGatewayAnswer = (
    answer: { status: number; headers: Record<string, string | string[] | undefined>; text: string },
    status: number,
    message: string,
  ) => {
    expect([answer.status, JSON.parse(answer.text)]).toEqual([status, { message }]);
    expect(answer.headers["content-type"]).toBe("application/json");
    // The gateway's answers carry its request id, as every answer of the API does (X-Request-Id
    // holds the same id where the service's own code answers); no function ran to add more.
    expect(answer.headers["apigw-requestid"]).toMatch(/^[A-Za-z0-9]{13}=$/);
    expect(answer.headers["x-request-id"]).toBeUndefined();
  };

  it("answers a request head over 10,240 bytes with 431 and the gateway's body, however large", async () => {
    let invoked = 0;
    const api = await emulator({
      routes: [
        {
          method: "GET",
          path: "/x",
          fn: fn(() => {
            invoked += 1;
            return { statusCode: 200, body: "ok" };
          }),
          authorized: false,
        },
      ],
    });
    // Just over the gateway's limit, over Node's own default (16 KB), and over the emulator's parser limit.
    for (const size of [11_000, 20_000, 100_000]) {
      const answer = await rawRequest(api.baseUrl, { path: "/x", headers: { "x-big": "a".repeat(size) } });
      expectGatewayAnswer(answer, 431, "Request Header Fields Too Large");
    }
    expect(invoked).toBe(0);
    expect(
      (await rawRequest(api.baseUrl, { path: "/x", headers: { "x-big": "a".repeat(9_000) } })).status,
    ).toBe(200);
  });

  it("answers a body over the Lambda payload (6 MB) or the gateway's (10 MB) with 413 and the gateway's body", async () => {
    const api = await emulator({ routes: [{ method: "POST", path: "/x", fn: echo, authorized: false }] });
    for (const size of [7 * 1024 * 1024, 11 * 1024 * 1024]) {
      const answer = await rawRequest(api.baseUrl, {
        path: "/x",
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: Buffer.alloc(size, 97),
      });
      expectGatewayAnswer(answer, 413, "Request Entity Too Large");
    }
  });

  it("hands the function the request id its answer's apigw-requestid carries", async () => {
    const api = await emulator({ routes: [{ method: "GET", path: "/x", fn: echo, authorized: false }] });
    const answer = await rawRequest(api.baseUrl, { path: "/x" });
    const event = JSON.parse(answer.text) as { requestContext: { requestId: string } };
    expect(event.requestContext.requestId).toBe(answer.headers["apigw-requestid"]);
  });
});
