/** What the API answers outside the endpoints' own logic (docs/api.md: errors, unknown paths). */
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { call, environment, isLocal, seedTenant } from "#test/support/harness";

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A request whose path goes out exactly as written (fetch would resolve `%2e%2e` first, as curl --path-as-is does not). */
function rawRequest(path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const base = new URL(environment.baseUrl);
  const send = base.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolveAnswer, reject) => {
    const req = send(
      { host: base.hostname, port: base.port, path: `${base.pathname.replace(/\/$/, "")}${path}`, headers },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => resolveAnswer({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("health and description", () => {
  it("answers GET /ping with pong, without a key", async () => {
    const response = await call("GET", "/ping");

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ message: "pong" });
    expect(response.headers.get("x-request-id")).toBeTruthy();
  });

  it("serves the committed OpenAPI document, without a key", async () => {
    const committed = JSON.parse(
      readFileSync(resolve(import.meta.dirname, "../../docs/openapi.json"), "utf8"),
    ) as unknown;

    const response = await call("GET", "/openapi.json");

    expect(response.status).toBe(200);
    expect(response.body).toEqual(committed);
    expect((response.body as { info: { version: string } }).info.version).toBe("1.0.0");
  });
});

describe("unknown routes", () => {
  it("answers 404 {detail: Not Found} for an unknown path, with or without a key", async () => {
    const shop = await seedTenant();
    for (const response of [
      await call("GET", "/nope"),
      await call("POST", "/api/nope", { key: shop.apiKey, body: {} }),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ detail: "Not Found" });
    }
  });

  it("answers 405 {detail: Method Not Allowed} for a known path with another method", async () => {
    const cases: [string, string, string][] = [
      ["GET", "/api/conversation", "POST"],
      ["DELETE", "/api/message", "POST"],
      ["POST", "/ping", "GET"],
      ["PUT", "/api/conversation/8d3e2f7a-1111-4222-8333-444455556666/messages", "GET"],
    ];
    for (const [method, path, allow] of cases) {
      const response = await call(method, path);
      expect(response.status).toBe(405);
      expect(response.body).toEqual({ detail: "Method Not Allowed" });
      expect(response.headers.get("allow")).toBe(allow);
    }
  });

  it("never answers with API Gateway's own {message: …} bodies", async () => {
    const probes = [
      await call("GET", "/"),
      await call("GET", "/api/me"),
      await call("GET", "/api/me", { authorization: "Bearer x" }),
      await call("PATCH", "/api/me"),
    ];
    for (const response of probes) {
      expect(response.body).toHaveProperty("detail");
      expect(response.body).not.toHaveProperty("message");
    }
  });
});

describe("paths as sent", () => {
  it("does not resolve dot segments: /api/%2e%2e/ping is an unknown path, not /ping", async () => {
    const shop = await seedTenant();
    const notFound = { detail: "Not Found" };
    const manageNotFound = { error: { code: "route_not_found", message: "Not Found", details: {} } };
    for (const [path, expected] of [
      ["/api/%2e%2e/ping", notFound],
      ["/api/%2E%2e/me", notFound],
      ["/manage/%2e%2e/api/me", manageNotFound],
    ] as const) {
      const answer = await rawRequest(path, { authorization: `Bearer ${shop.apiKey}` });
      expect([path, answer.status, JSON.parse(answer.text)]).toEqual([path, 404, expected]);
      expect(answer.headers["x-request-id"]).toBeTruthy();
    }
  });
});

describe("request ids", () => {
  it("gives every response its own X-Request-Id", async () => {
    const ids = await Promise.all([call("GET", "/ping"), call("GET", "/nope"), call("GET", "/api/me")]).then(
      (responses) => responses.map((response) => response.headers.get("x-request-id")),
    );

    expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(3);
  });
});

describe.runIf(isLocal)("the gateway's own answers", () => {
  it("answers a request head over 10,240 bytes with 431, API Gateway's body and its request id", async () => {
    const answer = await rawRequest("/ping", { "x-padding": "a".repeat(11_000) });
    expect([answer.status, JSON.parse(answer.text)]).toEqual([
      431,
      { message: "Request Header Fields Too Large" },
    ]);
    expect(answer.headers["apigw-requestid"]).toBeTruthy();
  });

  it("carries the same id in X-Request-Id and apigw-requestid wherever the service answers", async () => {
    const answer = await rawRequest("/ping");
    expect(answer.headers["x-request-id"]).toBe(answer.headers["apigw-requestid"]);
  });
});
