/**
 * API keys on "Settings → API": create (the key shown once), list with prefix, scope, created and
 * last used, revoke; keys of scope manage; another organization's keys are not found.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  seedManagedTenant,
} from "#test/support/management";

interface ApiKey {
  key_id: string;
  name: string;
  scope: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  expires_at: string | null;
}

let home: ManagedTenant;
let other: ManagedTenant;
const as = (tenant: ManagedTenant) => ({ as: tenant.admin.token, organization: tenant.organizationId });

const listKeys = async (tenant: ManagedTenant, query = "") =>
  (await manage<{ api_keys: ApiKey[] }>("GET", `/manage/api-keys${query}`, as(tenant))).body.api_keys;

describe.runIf(hasIdentity)("API keys", () => {
  beforeAll(async () => {
    [home, other] = await Promise.all([seedManagedTenant(), seedManagedTenant()]);
  });

  it("creates a chat key shown once, which works on the public API and never appears again", async () => {
    const created = await manage<ApiKey & { key: string }>("POST", "/manage/api-keys", {
      ...as(home),
      body: { name: "website" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "website", scope: "chat" });
    expect(created.body.key).toMatch(/^cbk_[0-9A-Za-z]{38}$/);
    expect(created.body.key.startsWith(created.body.prefix.replace("…", ""))).toBe(true);
    expect((await call("GET", "/api/me", { key: created.body.key })).status).toBe(200);

    const listed = await manage("GET", "/manage/api-keys", as(home));
    expect(listed.text).not.toContain(created.body.key);
    expect((listed.body as { api_keys: ApiKey[] }).api_keys.map((key) => key.key_id)).toContain(
      created.body.key_id,
    );
  });

  it("creates a manage key that manages its own organization as an admin", async () => {
    const created = await manage<{ key: string; scope: string; key_id: string }>("POST", "/manage/api-keys", {
      ...as(home),
      body: { name: "automation", scope: "manage" },
    });
    expect(created.body.scope).toBe("manage");
    const me = await manage("GET", "/manage/me", { as: created.body.key });
    expect(me.body).toMatchObject({
      principal: { type: "api_key", key_id: created.body.key_id, name: "automation", scope: "manage" },
      memberships: [{ organization_id: home.organizationId, role: "admin" }],
    });
    const chatbot = await manage("POST", "/manage/chatbots", {
      as: created.body.key,
      body: { name: "By key" },
    });
    expect(chatbot.status).toBe(201);
    // A manage key is a superset: the public API takes it too.
    expect((await call("GET", "/api/me", { key: created.body.key })).status).toBe(200);
  });

  it("records when a key was last used, with no separate write", async () => {
    const created = await manage<{ key: string; key_id: string }>("POST", "/manage/api-keys", {
      ...as(home),
      body: { name: "last-used" },
    });
    const before = (await listKeys(home)).find((key) => key.key_id === created.body.key_id);
    expect(before?.last_used_at).toBeNull();
    const startedAt = new Date().toISOString();
    await call("GET", "/api/me", { key: created.body.key });
    const after = (await listKeys(home)).find((key) => key.key_id === created.body.key_id);
    expect(after?.last_used_at).not.toBeNull();
    expect((after?.last_used_at ?? "") >= startedAt.slice(0, 19)).toBe(true);
  });

  it("revokes a key at once (its next request is a 401); revoked keys are listed only when asked", async () => {
    const created = await manage<{ key: string; key_id: string }>("POST", "/manage/api-keys", {
      ...as(home),
      body: { name: "to revoke" },
    });
    const revoked = await manage("DELETE", `/manage/api-keys/${created.body.key_id}`, as(home));
    expect([revoked.status, revoked.text]).toEqual([204, ""]);
    expect((await call("GET", "/api/me", { key: created.body.key })).status).toBe(401);
    const again = await manage("DELETE", `/manage/api-keys/${created.body.key_id}`, as(home));
    expect(again.status).toBe(204);

    expect((await listKeys(home)).map((key) => key.key_id)).not.toContain(created.body.key_id);
    for (const query of ["?include_revoked=true", "?include_revoked=1", "?include_revoked=yes"]) {
      const all = await listKeys(home, query);
      expect(all.find((key) => key.key_id === created.body.key_id)?.revoked_at).not.toBeNull();
    }
    const bad = await manage("GET", "/manage/api-keys?include_revoked=perhaps", as(home));
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({
      error: { details: { fields: [{ loc: ["query", "include_revoked"], type: "bool_parsing" }] } },
    });
  });

  it("refuses bad input with 422 fields", async () => {
    const refused = await manage("POST", "/manage/api-keys", {
      ...as(home),
      body: { name: "", scope: "root" },
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      error: {
        code: "invalid_argument",
        details: {
          fields: expect.arrayContaining([
            expect.objectContaining({ loc: ["body", "name"] }),
            expect.objectContaining({ loc: ["body", "scope"] }),
          ]),
        },
      },
    });
  });

  it("finds no key of another organization: it stays valid", async () => {
    const revoked = await manage("DELETE", `/manage/api-keys/${other.manageKeyId}`, as(home));
    expect([revoked.status, errorCode(revoked)]).toEqual([404, "api_key_not_found"]);
    expect((await manage("GET", "/manage/me", { as: other.manageKey })).status).toBe(200);
    expect((await listKeys(home)).map((key) => key.key_id)).not.toContain(other.manageKeyId);
  });
});
