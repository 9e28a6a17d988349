import { describe, expect, it } from "vitest";
import { AppError, errorCodes, statusOf, toFormatA, toFormatB } from "#functions/errors";
import { readAuthorizerContext, toAuthorizerContext } from "#functions/http/authorizer-context";

describe("error formats", () => {
  it("renders Format B with the contract's exact texts", () => {
    expect(toFormatB(new AppError("invalid_api_key", { headers: { "www-authenticate": "Bearer" } }))).toEqual(
      {
        status: 401,
        headers: { "www-authenticate": "Bearer" },
        body: { detail: "Invalid API key" },
      },
    );
    expect(toFormatB(new AppError("subscription_inactive")).body).toEqual({
      detail: "Organization subscription is not active",
    });
    expect(toFormatB(new AppError("route_not_found")).body).toEqual({ detail: "Not Found" });
    expect(toFormatB(new AppError("method_not_allowed"))).toMatchObject({
      status: 405,
      body: { detail: "Method Not Allowed" },
    });
  });

  it("turns anything unexpected into a bare 500 without its message", () => {
    const formatted = toFormatB(new Error("secret connection string in message"));
    expect(formatted).toEqual({ status: 500, headers: {}, body: { detail: "Internal server error" } });
  });

  it("renders Format A for the management side, with a documented code", () => {
    expect(toFormatA(new AppError("organization_not_found")).body).toEqual({
      error: { code: "organization_not_found", message: "Organization not found", details: {} },
    });
    expect(toFormatA(new TypeError("x")).body.error.code).toBe("internal");
    for (const code of errorCodes) expect(statusOf(code)).toBeGreaterThanOrEqual(400);
  });
});

describe("authorizer context", () => {
  it("round-trips every verdict and refuses anything malformed", () => {
    const allowed = toAuthorizerContext({
      kind: "allowed",
      organizationId: "org",
      keyId: "key",
      scope: "chat",
      rate: { limit: 10, remaining: 9, resetAt: 5 },
    });
    expect(readAuthorizerContext(allowed)).toEqual(allowed);
    expect(readAuthorizerContext(toAuthorizerContext({ kind: "invalid_key" }))).toEqual({
      outcome: "invalid_key",
    });
    expect(readAuthorizerContext(undefined)).toBeUndefined();
    expect(readAuthorizerContext({ outcome: "allowed", organizationId: "org" })).toBeUndefined();
    expect(readAuthorizerContext({ outcome: "root" })).toBeUndefined();
  });
});
