import { describe, expect, it } from "vitest";
import {
  AppError,
  errorCodes,
  rateLimitDetail,
  statusOf,
  toFormatA,
  toFormatB,
  validationError,
} from "#functions/errors";
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

  it("renders validation failures in Format A as invalid_argument with the fields, never the values sent", () => {
    const formatted = toFormatA(
      validationError([
        {
          type: "string_too_long",
          loc: ["body", "credentials", "apiKey"],
          msg: "String should have at most 512 characters",
          input: "s3cr3t-value",
        },
      ]),
    );
    expect(formatted).toEqual({
      status: 422,
      headers: {},
      body: {
        error: {
          code: "invalid_argument",
          message: "The request has invalid fields: see details.fields",
          details: {
            fields: [
              {
                type: "string_too_long",
                loc: ["body", "credentials", "apiKey"],
                msg: "String should have at most 512 characters",
              },
            ],
          },
        },
      },
    });
    expect(JSON.stringify(formatted)).not.toContain("s3cr3t");
  });

  it("renders a 429 in Format A with the bucket in details, and keeps specifics and headers", () => {
    const limited = new AppError("rate_limited", {
      headers: { "retry-after": "2" },
      detail: {
        error: "Rate limit exceeded",
        message: "Slow down",
        limit: 5,
        remaining: 0,
        reset: "2026-11-21T12:00:30Z",
        retry_after: 2,
      },
    });
    expect(toFormatA(limited)).toEqual({
      status: 429,
      headers: { "retry-after": "2" },
      body: {
        error: {
          code: "rate_limited",
          message: "Slow down",
          details: { limit: 5, remaining: 0, reset: "2026-11-21T12:00:30Z", retry_after: 2 },
        },
      },
    });
    expect(
      toFormatA(new AppError("conflict", { details: { reason: "last_admin" } })).body.error.details,
    ).toEqual({
      reason: "last_admin",
    });
    expect(toFormatA(new AppError("unauthenticated")).status).toBe(401);
    expect(toFormatA(new AppError("forbidden")).status).toBe(403);
    expect(toFormatA(new AppError("invalid_argument", { detail: "--org is required" })).body.error).toEqual({
      code: "invalid_argument",
      message: "--org is required",
      details: {},
    });
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
      test: false,
    });
    expect(readAuthorizerContext(allowed)).toEqual(allowed);
    expect(readAuthorizerContext(toAuthorizerContext({ kind: "invalid_key" }))).toEqual({
      outcome: "invalid_key",
    });
    expect(readAuthorizerContext(undefined)).toBeUndefined();
    expect(readAuthorizerContext({ outcome: "allowed", organizationId: "org" })).toBeUndefined();
    expect(readAuthorizerContext({ outcome: "root" })).toBeUndefined();
  });

  it("says how long to wait in words that agree with the number (1 second, 2 seconds)", () => {
    const resetAt = Date.parse("2026-11-21T12:00:30Z") / 1000;
    expect(rateLimitDetail({ kind: "apiKey", limit: 100, resetAt, retryAfter: 1 })).toEqual({
      error: "Rate limit exceeded",
      message: "Too many requests: this API key allows 100 requests per minute. Retry in 1 second.",
      limit: 100,
      remaining: 0,
      reset: "2026-11-21T12:00:30Z",
      retry_after: 1,
    });
    expect(rateLimitDetail({ kind: "management", limit: 300, resetAt, retryAfter: 12 }).message).toBe(
      "Too many requests: 300 management requests per minute are allowed. Retry in 12 seconds.",
    );
  });
});
