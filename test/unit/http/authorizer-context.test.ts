/**
 * The authorizer's verdict as the integration reads it. The authorizer sets numbers; nothing AWS
 * documents promises they arrive as numbers rather than strings (REST APIs stringify context
 * values), so both shapes must read as the same verdict.
 */
import { describe, expect, it } from "vitest";
import { readAuthorizerContext, toAuthorizerContext } from "#functions/http/authorizer-context";

const allowed = toAuthorizerContext({
  kind: "allowed",
  organizationId: "org-1",
  keyId: "key-1",
  scope: "chat",
  rate: { limit: 100, remaining: 99, resetAt: 1_795_288_438 },
  test: false,
});
const rateLimited = toAuthorizerContext({
  kind: "rate_limited",
  organizationId: "org-1",
  keyId: "key-1",
  scope: "chat",
  rate: { limit: 100, remaining: 0, resetAt: 1_795_288_440 },
  retryAfterSeconds: 2,
});

/** What a gateway that stringifies context values would hand over. */
const stringified = (context: object) =>
  Object.fromEntries(Object.entries(context).map(([key, value]) => [key, String(value)]));

describe("reading the authorizer's verdict", () => {
  it("reads the numbers the authorizer sets", () => {
    expect(readAuthorizerContext(allowed)).toEqual(allowed);
    expect(readAuthorizerContext(rateLimited)).toEqual(rateLimited);
  });

  it("reads the same verdict when the numbers arrive as strings", () => {
    expect(stringified(allowed)).toMatchObject({ limit: "100", resetAt: "1795288438" });
    expect(readAuthorizerContext(stringified(allowed))).toEqual(allowed);
    expect(readAuthorizerContext(stringified(rateLimited))).toEqual(rateLimited);
    expect(readAuthorizerContext({ ...allowed, remaining: "0" })).toEqual({ ...allowed, remaining: 0 });
  });

  it("carries a Try it key's test flag, as a boolean or its string, and no flag for other keys", () => {
    const testKey = toAuthorizerContext({
      kind: "allowed",
      organizationId: "org-1",
      keyId: "key-2",
      scope: "chat",
      rate: { limit: 100, remaining: 99, resetAt: 1_795_288_438 },
      test: true,
    });
    expect(testKey).toMatchObject({ outcome: "allowed", test: true });
    expect(allowed).not.toHaveProperty("test");
    expect(readAuthorizerContext(testKey)).toEqual(testKey);
    expect(readAuthorizerContext(stringified(testKey))).toEqual(testKey);
    expect(readAuthorizerContext({ ...testKey, test: "false" })).toEqual({ ...allowed, keyId: "key-2" });
  });

  it("reads the verdicts without numbers in either shape", () => {
    for (const outcome of ["invalid_key", "error"] as const) {
      expect(readAuthorizerContext({ outcome })).toEqual({ outcome });
    }
  });

  it("reads an inactive organization's bucket state as numbers or numeric strings", () => {
    const expected = { outcome: "subscription_inactive", limit: 100, remaining: 99, resetAt: 1_800_000_000 };
    expect(readAuthorizerContext({ ...expected })).toEqual(expected);
    expect(
      readAuthorizerContext({
        outcome: "subscription_inactive",
        limit: "100",
        remaining: "99",
        resetAt: "1800000000",
      }),
    ).toEqual(expected);
    expect(readAuthorizerContext({ outcome: "subscription_inactive" })).toBeUndefined();
  });

  it.each([
    ["a word", { limit: "many" }],
    ["an empty string", { remaining: "" }],
    ["a padded number", { limit: " 100" }],
    ["an exponent", { resetAt: "1e9" }],
    ["a fraction", { remaining: "1.5" }],
    ["a negative number", { remaining: -1 }],
    ["a negative string", { remaining: "-1" }],
    ["infinity", { limit: Number.POSITIVE_INFINITY }],
    ["a boolean", { limit: true }],
    ["a missing count", { limit: undefined }],
    ["an empty organization", { organizationId: "" }],
    ["a numeric key id", { keyId: 5 }],
  ])("counts %s as no verdict (the integration then answers 401)", (_, change) => {
    expect(readAuthorizerContext({ ...allowed, ...change })).toBeUndefined();
    expect(readAuthorizerContext({ ...stringified(rateLimited), ...change })).toBeUndefined();
  });

  it("counts a rate-limited verdict without retryAfter as no verdict", () => {
    const { retryAfter: _, ...withoutRetryAfter } = rateLimited as typeof rateLimited & {
      retryAfter: number;
    };
    expect(readAuthorizerContext(withoutRetryAfter)).toBeUndefined();
    expect(readAuthorizerContext({ ...stringified(rateLimited), retryAfter: "soon" })).toBeUndefined();
  });

  it("counts anything that is not a verdict as none", () => {
    expect(readAuthorizerContext(undefined)).toBeUndefined();
    expect(readAuthorizerContext("allowed")).toBeUndefined();
    expect(readAuthorizerContext({ outcome: "root" })).toBeUndefined();
  });
});
