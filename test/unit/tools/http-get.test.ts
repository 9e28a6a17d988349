import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHttpGet, type HttpGetRequest } from "#functions/tools/http-get";
import { parseRateLimit, parseRetryAfter } from "#functions/tools/rate-limit";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let handler: Handler;
let port = 0;
let seen: { method: string; url: string; headers: IncomingMessage["headers"] }[] = [];
let base: string;
const server = createServer((req, res) => {
  seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
  handler(req, res);
});

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(body === undefined ? "" : JSON.stringify(body));
  };

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen = [];
  handler = json(200, []);
});

/** The test server is on loopback: allowed exactly, as the local runtime allows its fakes. */
const local = (options: Parameters<typeof createHttpGet>[0] = {}) =>
  createHttpGet({ allowPrivate: [{ address: "127.0.0.1", port }], ...options });
const http: ReturnType<typeof createHttpGet> = (request) =>
  local({ requestTimeoutMs: 2_000, deadlineMarginMs: 50 })(request);
const request = (path: string, extra: Partial<HttpGetRequest> = {}): HttpGetRequest => ({
  url: new URL(path, base),
  signal: new AbortController().signal,
  deadline: Date.now() + 5_000,
  ...extra,
});

describe("http-get: GET only", () => {
  it("sends a GET with the given headers and parses the JSON answer", async () => {
    // Prepare
    handler = json(200, { orders: [{ id: 1 }] });
    // Act
    const result = await http(request("/orders.json?name=%231001", { headers: { "x-token": "t" } }));
    // Assess
    expect(result).toEqual({ kind: "ok", status: 200, body: { orders: [{ id: 1 }] } });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: "GET", url: "/orders.json?name=%231001" });
    expect(seen[0]?.headers["x-token"]).toBe("t");
  });

  it("has no way to choose another method or send a body (types), and refuses one at runtime", async () => {
    // Prepare
    // @ts-expect-error method is not part of a GET request
    const post: HttpGetRequest = { ...request("/x"), method: "POST" };
    // @ts-expect-error body is not part of a GET request
    const withBody: HttpGetRequest = { ...request("/x"), body: "{}" };
    // Act / Assess
    await expect(http(post)).rejects.toThrow(TypeError);
    await expect(http(withBody)).rejects.toThrow(TypeError);
    expect(seen).toHaveLength(0);
  });

  it("refuses credentials in the URL and non-http schemes before sending", async () => {
    const withUser = request("/x");
    withUser.url.username = "ck";
    await expect(http(withUser)).rejects.toThrow(/headers/);
    await expect(http({ ...request("/x"), url: new URL("file:///etc/passwd") })).rejects.toThrow(TypeError);
    expect(seen).toHaveLength(0);
  });
});

describe("http-get: outcomes", () => {
  it.each([
    [401, { kind: "auth_failed" }],
    [403, { kind: "auth_failed" }],
    [404, { kind: "unavailable", reason: "unexpected_status" }],
    [400, { kind: "unavailable", reason: "unexpected_status" }],
    [500, { kind: "unavailable", reason: "server_error" }],
    [503, { kind: "unavailable", reason: "server_error" }],
    [302, { kind: "unavailable", reason: "redirect" }],
  ])("maps %i", async (status, expected) => {
    handler = json(status, { errors: "x" }, status === 302 ? { location: "https://elsewhere.example/" } : {});
    expect(await http(request("/x"))).toEqual(expected);
  });

  it("maps 404 to not_found where the URL names one record", async () => {
    handler = json(404, { code: "woocommerce_rest_shop_order_invalid_id" });
    expect(await http(request("/orders/42", { notFoundOn404: true }))).toEqual({ kind: "not_found" });
  });

  it("gives null for an empty body and invalid_response for broken JSON", async () => {
    handler = json(200, undefined);
    expect(await http(request("/x"))).toEqual({ kind: "ok", status: 200, body: null });
    handler = (_req, res) => res.end("<html>maintenance</html>");
    expect(await http(request("/x"))).toEqual({ kind: "unavailable", reason: "invalid_response" });
  });

  it("maps a refused connection to unavailable", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const allowed = createHttpGet({ allowPrivate: [{ address: "127.0.0.1", port: closedPort }] });
    expect(await allowed(request(`http://127.0.0.1:${closedPort}/x`))).toEqual({
      kind: "unavailable",
      reason: "network",
    });
  });

  it("caps the response size, with or without Content-Length", async () => {
    // Prepare
    const small = local({ maxResponseBytes: 1_024 });
    const big = JSON.stringify({ pad: "x".repeat(4_000) });
    // Act
    handler = json(200, { pad: "x".repeat(4_000) }, { "content-length": String(Buffer.byteLength(big)) });
    const declared = await small(request("/x"));
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(big.slice(0, 2_000));
      res.end(big.slice(2_000));
    };
    const chunked = await small(request("/x"));
    // Assess
    expect(declared).toEqual({ kind: "unavailable", reason: "too_large" });
    expect(chunked).toEqual({ kind: "unavailable", reason: "too_large" });
  });
});

describe("http-get: time limits", () => {
  const slow: Handler = (_req, res) => {
    const timer = setTimeout(() => json(200, [])(_req, res), 3_000);
    res.on("close", () => clearTimeout(timer));
  };

  it("times out after the per-request timeout", async () => {
    handler = slow;
    const quick = local({ requestTimeoutMs: 100 });
    const started = Date.now();
    expect(await quick(request("/x"))).toEqual({ kind: "timeout" });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("bounds the timeout by the turn's deadline", async () => {
    handler = slow;
    const started = Date.now();
    expect(await http(request("/x", { deadline: Date.now() + 250 }))).toEqual({ kind: "timeout" });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("sends nothing once the deadline (minus the margin) has passed or the turn was aborted", async () => {
    const aborted = new AbortController();
    aborted.abort();
    expect(await http(request("/x", { deadline: Date.now() + 20 }))).toEqual({ kind: "timeout" });
    expect(await http(request("/x", { signal: aborted.signal }))).toEqual({ kind: "timeout" });
    expect(seen).toHaveLength(0);
  });

  it("stops when the turn aborts mid-request", async () => {
    handler = slow;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    expect(await http(request("/x", { signal: controller.signal }))).toEqual({ kind: "timeout" });
  });
});

describe("http-get: rate limits", () => {
  it("reports 429 with Retry-After without waiting when the wait is long", async () => {
    handler = json(429, { errors: "Exceeded 2 calls per second" }, { "retry-after": "30" });
    const started = Date.now();
    expect(await http(request("/x"))).toEqual({ kind: "rate_limited", retryAfterSeconds: 30 });
    expect(seen).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it("waits once for a short Retry-After when it fits before the deadline", async () => {
    // Prepare
    let calls = 0;
    handler = (req, res) => {
      calls += 1;
      (calls === 1 ? json(429, {}, { "retry-after": "0.1" }) : json(200, ["ok"]))(req, res);
    };
    // Act
    const result = await http(request("/x"));
    // Assess
    expect(result).toMatchObject({ kind: "ok", body: ["ok"] });
    expect(seen).toHaveLength(2);
  });

  it("never retries past the deadline", async () => {
    handler = json(429, {}, { "retry-after": "1.0" });
    const result = await http(request("/x", { deadline: Date.now() + 1_200 }));
    expect(result).toEqual({ kind: "rate_limited", retryAfterSeconds: 1 });
    expect(seen).toHaveLength(1);
  });

  it("derives the wait from an exhausted Lightspeed window when Retry-After is absent", async () => {
    handler = json(
      429,
      {},
      {
        "x-ratelimit-limit": "300/3000/12000",
        "x-ratelimit-remaining": "0/2950/11950",
        "x-ratelimit-reset": "42/1800/50000",
      },
    );
    expect(await http(request("/x"))).toEqual({ kind: "rate_limited", retryAfterSeconds: 42 });
  });

  it("parses the platforms' rate headers", () => {
    expect(parseRateLimit(new Headers({ "x-shopify-shop-api-call-limit": "32/40" }))).toEqual({
      windows: [{ limit: 40, remaining: 8 }],
    });
    expect(
      parseRateLimit(
        new Headers({
          "x-ratelimit-limit": "300/3000/12000",
          "x-ratelimit-remaining": "299/2999/11999",
          "x-ratelimit-reset": "300/3600/86400",
        }),
      ),
    ).toEqual({
      windows: [
        { limit: 300, remaining: 299, resetSeconds: 300 },
        { limit: 3000, remaining: 2999, resetSeconds: 3600 },
        { limit: 12000, remaining: 11999, resetSeconds: 86400 },
      ],
    });
    expect(
      parseRateLimit(new Headers({ "x-ratelimit-limit": "500", "x-ratelimit-remaining": "499" })),
    ).toEqual({
      windows: [{ limit: 500, remaining: 499 }],
    });
    expect(parseRateLimit(new Headers())).toBeUndefined();
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = Date.parse("2024-01-01T00:00:00Z");
    expect(parseRetryAfter("2.0", now)).toBe(2);
    expect(parseRetryAfter("Mon, 01 Jan 2024 00:00:05 GMT", now)).toBe(5);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
  });

  it("hands the rate headers of a success to the caller", async () => {
    handler = json(200, [], { "x-ratelimit-limit": "500", "x-ratelimit-remaining": "12" });
    expect(await http(request("/x"))).toMatchObject({ rate: { windows: [{ limit: 500, remaining: 12 }] } });
  });
});

describe("http-get: public hosts only", () => {
  it("refuses loopback, private and metadata addresses before connecting", async () => {
    // Prepare: no allowance at all, and a name that resolves to a private address
    const guarded = createHttpGet({ resolve: async () => [{ address: "10.1.2.3", family: 4 }] });
    // Act / Assess
    for (const url of [
      `http://127.0.0.1:${port}/x`,
      `http://[::ffff:7f00:1]:${port}/x`,
      `http://[0:0:0:0:0:ffff:7f00:1]:${port}/x`,
      "https://[::ffff:a9fe:a9fe]/latest/meta-data/",
      "https://169.254.169.254/latest/meta-data/",
      "https://[64:ff9b::a9fe:a9fe]/",
      "https://[2002:7f00:1::1]/",
      "https://192.0.2.1/",
      "https://shop.internal-name.example/x",
    ]) {
      expect(await guarded(request(url)), url).toEqual({ kind: "unavailable", reason: "blocked_host" });
    }
    expect(seen).toHaveLength(0);
  });

  it("allows a loopback endpoint only on its exact address and port", async () => {
    // Prepare: 127.0.0.1 on another port is allowed, not this one; the mapped spelling is not 127.0.0.1
    const other = createHttpGet({ allowPrivate: [{ address: "127.0.0.1", port: port + 1 }] });
    const exact = local();
    // Act / Assess
    expect(await other(request("/x"))).toEqual({ kind: "unavailable", reason: "blocked_host" });
    expect(await exact(request(`http://[::ffff:7f00:1]:${port}/x`))).toEqual({
      kind: "unavailable",
      reason: "blocked_host",
    });
    expect(seen).toHaveLength(0);
    expect(await exact(request("/x"))).toMatchObject({ kind: "ok" });
  });
});

describe("http-get: kept-alive connections", () => {
  it("reuses one connection for look-ups to the same shop", async () => {
    // Prepare: one client, as a Lambda instance keeps it
    let connections = 0;
    const count = () => connections++;
    server.on("connection", count);
    const shared = local();
    try {
      // Act
      const results = [await shared(request("/orders/1")), await shared(request("/orders/2"))];
      // Assess
      expect(results.map((result) => result.kind)).toEqual(["ok", "ok"]);
      expect(seen).toHaveLength(2);
      expect(connections).toBe(1);
    } finally {
      server.off("connection", count);
    }
  });

  it("still refuses a private address with a connection to an allowed one open", async () => {
    // Prepare: a kept connection to the allowed fake, and host names resolving to it and elsewhere
    const shared = local({
      resolve: async (host) => [{ address: host === "shop.test" ? "127.0.0.1" : "10.0.0.7", family: 4 }],
    });
    expect(await shared(request("/warm"))).toMatchObject({ kind: "ok" });
    // Act
    const refused = [
      await shared(request(`http://127.0.0.1:${port + 1}/x`)),
      await shared(request(`http://private.test:${port}/x`)),
      await shared(request(`http://[::ffff:7f00:1]:${port}/x`)),
    ];
    const viaName = await shared(request(`http://shop.test:${port}/y`));
    // Assess
    expect(refused).toEqual(Array(3).fill({ kind: "unavailable", reason: "blocked_host" }));
    expect(viaName).toMatchObject({ kind: "ok" });
    expect(seen.map((entry) => entry.url)).toEqual(["/warm", "/y"]);
  });

  it("sends a look-up again on a new connection when the kept one was closed by the server", async () => {
    // Prepare: the server drops a kept connection when the next request arrives on it (as one does
    // that closed it while idle, before the client noticed), answering only on fresh connections
    let connections = 0;
    const count = () => connections++;
    server.on("connection", count);
    const served = new WeakSet<object>();
    handler = (req, res) => {
      if (served.has(req.socket)) {
        req.socket.destroy();
        return;
      }
      served.add(req.socket);
      json(200, [])(req, res);
    };
    const shared = local();
    try {
      expect(await shared(request("/a"))).toMatchObject({ kind: "ok" });
      // Act
      const second = await shared(request("/b"));
      // Assess: the reset connection was given up, and the look-up sent again on a new one
      expect(second).toMatchObject({ kind: "ok" });
      expect(connections).toBe(2);
      expect(seen.map((entry) => entry.url)).toEqual(["/a", "/b", "/b"]);
    } finally {
      server.off("connection", count);
    }
  });
});
