/** The management authorizer's verdict survives the trip through the gateway, typed or stringified. */
import { describe, expect, it } from "vitest";
import { type ManageVerdict, readManageContext, toManageContext } from "#functions/http/manage-context";

const rate = { limit: 300, remaining: 299, resetAt: 1_795_000_000 };

const verdicts: ManageVerdict[] = [
  {
    outcome: "allowed",
    principal: { kind: "user", userId: "u-1" },
    organizationId: "org-1",
    role: "viewer",
    rate,
  },
  {
    outcome: "allowed",
    principal: { kind: "user", userId: "u-2" },
    organizationId: "org-1",
    role: "admin",
    actingOperator: true,
    rate,
  },
  {
    outcome: "allowed",
    principal: { kind: "key", keyId: "key_1" },
    organizationId: "org-1",
    role: "admin",
    rate,
  },
  { outcome: "allowed", principal: { kind: "user", userId: "u-3" }, role: "operator", rate },
  { outcome: "allowed", principal: { kind: "user", userId: "u-4" }, rate },
  {
    outcome: "rate_limited",
    principal: { kind: "user", userId: "u-1" },
    rate: { ...rate, remaining: 0 },
    retryAfter: 2,
  },
  { outcome: "unauthenticated", reason: "expired" },
  { outcome: "forbidden", message: "Only platform operators may do this" },
  { outcome: "forbidden", message: "scope chat", rate },
  { outcome: "subscription_inactive", rate },
  { outcome: "organization_not_found" },
  { outcome: "organization_not_found", rate },
  { outcome: "organization_required", memberships: 2 },
  { outcome: "organization_required", memberships: 0, rate },
  { outcome: "error" },
];

/** What a gateway that stringifies context values would hand over. */
const stringified = (context: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(context).map(([key, value]) => [key, String(value)]));

describe("the management authorizer's context", () => {
  it("round-trips every verdict, with typed values and as strings", () => {
    for (const verdict of verdicts) {
      expect(readManageContext(toManageContext(verdict))).toEqual(verdict);
      expect(readManageContext(stringified(toManageContext(verdict)))).toEqual(verdict);
    }
  });

  it("counts anything malformed as no verdict, so the route fails closed", () => {
    for (const raw of [
      undefined,
      null,
      "allowed",
      {},
      { outcome: "allowed" },
      { outcome: "allowed", principal: "user", limit: 1, remaining: 1, resetAt: 1 },
      {
        outcome: "allowed",
        principal: "user",
        userId: "u",
        limit: 1,
        remaining: 1,
        resetAt: 1,
        role: "root",
      },
      { outcome: "allowed", principal: "robot", userId: "u", limit: 1, remaining: 1, resetAt: 1 },
      { outcome: "rate_limited", principal: "user", userId: "u", limit: 1, remaining: 0, resetAt: 1 },
      { outcome: "subscription_inactive" },
      { outcome: "superuser" },
    ]) {
      expect(readManageContext(raw)).toBeUndefined();
    }
  });
});
