/**
 * The organization (read, rename) and the platform operators' organizations (list, create, read,
 * change subscription and rate limit): happy, error and security cases with two organizations.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  type Person,
  seedManagedTenant,
  seedOperator,
} from "#test/support/management";

interface Organization {
  organization_id: string;
  name: string;
  subscription: string;
  rate_limit: number;
  created_at: string;
}

let home: ManagedTenant;
let other: ManagedTenant;
let operator: Person;

describe.runIf(hasIdentity)("the organization", () => {
  beforeAll(async () => {
    [home, other, operator] = await Promise.all([seedManagedTenant(), seedManagedTenant(), seedOperator()]);
  });

  it("shows a viewer their organization, and lets an admin rename it", async () => {
    const read = await manage<Organization>("GET", "/manage/organization", {
      as: home.viewer.token,
      organization: home.organizationId,
    });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      organization_id: home.organizationId,
      subscription: "active",
      rate_limit: 100,
    });
    expect(read.headers.get("x-ratelimit-limit")).toBe("300");

    const renamed = await manage<Organization>("PATCH", "/manage/organization", {
      as: home.admin.token,
      organization: home.organizationId,
      body: { name: "Renamed Shop" },
    });
    expect([renamed.status, renamed.body.name]).toEqual([200, "Renamed Shop"]);
    const me = await call<{ organization_name: string }>("GET", "/api/me", { key: home.apiKey });
    expect(me.body.organization_name).toBe("Renamed Shop");
  });

  it("refuses a blank or missing name with 422 invalid_argument naming the field", async () => {
    for (const body of [{}, { name: "   " }, { name: "x".repeat(121) }, { name: 42 }]) {
      const refused = await manage("PATCH", "/manage/organization", {
        as: home.admin.token,
        organization: home.organizationId,
        body,
      });
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({
        error: {
          code: "invalid_argument",
          details: { fields: [expect.objectContaining({ loc: ["body", "name"] })] },
        },
      });
    }
  });

  it("lets an admin change only the name: subscription and rate limit are the operators'", async () => {
    const ignored = await manage<Organization>("PATCH", "/manage/organization", {
      as: home.admin.token,
      organization: home.organizationId,
      body: { name: "Still Active", subscription: "inactive", rate_limit: 100000 },
    });
    expect(ignored.body).toMatchObject({ name: "Still Active", subscription: "active", rate_limit: 100 });
  });
});

describe.runIf(hasIdentity)("the platform operators' organizations", () => {
  beforeAll(async () => {
    [home, other, operator] = await Promise.all([seedManagedTenant(), seedManagedTenant(), seedOperator()]);
  });

  it("creates an organization with its settings", async () => {
    const created = await manage<{ organization: Organization; admin: unknown; invitation: unknown }>(
      "POST",
      "/manage/organizations",
      { as: operator.token, body: { name: "Operator Made", rate_limit: 250, subscription: "inactive" } },
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      organization: { name: "Operator Made", rate_limit: 250, subscription: "inactive" },
      admin: null,
      invitation: null,
    });
    const read = await manage<Organization>(
      "GET",
      `/manage/organizations/${created.body.organization.organization_id}`,
      {
        as: operator.token,
      },
    );
    expect(read.body).toEqual(created.body.organization);
  });

  it("lists every organization a page at a time, each exactly once", async () => {
    const seen = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : "?limit=2";
      const page: {
        status: number;
        body: { organizations: Organization[]; has_more: boolean; next_cursor: string | null };
      } = await manage("GET", `/manage/organizations${query}`, { as: operator.token });
      expect(page.status).toBe(200);
      expect(page.body.organizations.length).toBeLessThanOrEqual(2);
      for (const org of page.body.organizations) {
        expect(seen.has(org.organization_id)).toBe(false);
        seen.add(org.organization_id);
      }
      cursor = page.body.next_cursor;
      expect(page.body.has_more).toBe(cursor !== null);
      pages += 1;
    } while (cursor && pages < 500);
    expect(seen.has(home.organizationId)).toBe(true);
    expect(seen.has(other.organizationId)).toBe(true);
    const forged = await manage("GET", "/manage/organizations?cursor=bm90LWFuLWlk", { as: operator.token });
    expect([forged.status, errorCode(forged)]).toEqual([422, "invalid_argument"]);
  });

  it("deactivates a subscription and changes a rate limit: the organization's keys follow at once", async () => {
    const inactive = await manage<Organization>("PATCH", `/manage/organizations/${other.organizationId}`, {
      as: operator.token,
      body: { subscription: "inactive" },
    });
    expect(inactive.body.subscription).toBe("inactive");
    const refused = await call("GET", "/api/me", { key: other.apiKey });
    expect([refused.status, refused.body]).toEqual([
      403,
      { detail: "Organization subscription is not active" },
    ]);
    // A manage key of an inactive organization is refused on /manage/ too (Format A).
    const managed = await manage("GET", "/manage/organization", { as: other.manageKey });
    expect([managed.status, errorCode(managed)]).toEqual([403, "subscription_inactive"]);

    await manage("PATCH", `/manage/organizations/${other.organizationId}`, {
      as: operator.token,
      body: { subscription: "active", rate_limit: 7 },
    });
    const allowed = await call("GET", "/api/me", { key: other.apiKey });
    expect([allowed.status, allowed.headers.get("x-ratelimit-limit")]).toEqual([200, "7"]);
  });

  it("answers an unknown organization with 404 and bad input with 422 fields", async () => {
    const unknown = await manage("GET", `/manage/organizations/${randomUUID()}`, { as: operator.token });
    expect([unknown.status, errorCode(unknown)]).toEqual([404, "organization_not_found"]);
    const unknownPatch = await manage("PATCH", `/manage/organizations/${randomUUID()}`, {
      as: operator.token,
      body: { name: "x" },
    });
    expect([unknownPatch.status, errorCode(unknownPatch)]).toEqual([404, "organization_not_found"]);
    const bad = await manage("POST", "/manage/organizations", {
      as: operator.token,
      body: { rate_limit: 0, subscription: "paused", admin_email: "not-an-email" },
    });
    expect(bad.status).toBe(422);
    const locs = (
      bad.body as { error: { details: { fields: { loc: string[] }[] } } }
    ).error.details.fields.map((field) => field.loc.join("."));
    expect(locs.sort()).toEqual(["body.admin_email", "body.name", "body.rate_limit", "body.subscription"]);
    // The value sent is never echoed back in Format A.
    expect(bad.text).not.toContain("not-an-email");
  });
});
