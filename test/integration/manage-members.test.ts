/**
 * Members: list, invite, change role, remove; never the last admin (also under concurrency);
 * another organization's members are not found.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { isLocal } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  mailbox,
  manage,
  newEmail,
  seedManagedTenant,
  seedMember,
} from "#test/support/management";

interface Member {
  user_id: string;
  email: string;
  display_name: string | null;
  role: string;
}

let home: ManagedTenant;
let other: ManagedTenant;

const as = (tenant: ManagedTenant, token = tenant.admin.token) => ({
  as: token,
  organization: tenant.organizationId,
});

describe.runIf(hasIdentity)("members", () => {
  beforeAll(async () => {
    [home, other] = await Promise.all([seedManagedTenant(), seedManagedTenant()]);
  });

  it("lists the organization's people with their roles, to a viewer too", async () => {
    const listed = await manage<{ members: Member[] }>("GET", "/manage/members", as(home, home.viewer.token));
    expect(listed.status).toBe(200);
    expect(listed.body.members.map(({ email, role }) => [email, role]).sort()).toEqual(
      [
        [home.admin.email, "admin"],
        [home.viewer.email, "viewer"],
      ].sort(),
    );
    expect(JSON.stringify(listed.body)).not.toContain(other.admin.email);
  });

  it("invites by e-mail (lower-cased), and refuses a second invitation of a member with 409", async () => {
    const email = newEmail("Invitee").replace("invitee", "InViTeE");
    const invited = await manage<Member & { invitation: string }>("POST", "/manage/members", {
      ...as(home),
      body: { email, role: "viewer" },
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ email: email.toLowerCase(), role: "viewer", invitation: "sent" });
    if (isLocal) expect((await mailbox.latest(email.toLowerCase(), "invitation")).code).toBeTruthy();
    const again = await manage("POST", "/manage/members", { ...as(home), body: { email, role: "admin" } });
    expect([again.status, errorCode(again)]).toEqual([409, "conflict"]);
    expect(again.body).toMatchObject({ error: { details: { reason: "already_member" } } });
  });

  it("refuses invalid invitations with 422 fields", async () => {
    const refused = await manage("POST", "/manage/members", {
      ...as(home),
      body: { email: "nope", role: "owner" },
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      error: {
        code: "invalid_argument",
        details: {
          fields: expect.arrayContaining([
            expect.objectContaining({ loc: ["body", "email"] }),
            expect.objectContaining({ loc: ["body", "role"], type: "literal_error" }),
          ]),
        },
      },
    });
  });

  it("changes roles, and never demotes or removes the last admin (409 last_admin)", async () => {
    const tenant = await seedManagedTenant();
    const demote = await manage("PATCH", `/manage/members/${tenant.admin.userId}`, {
      ...as(tenant),
      body: { role: "viewer" },
    });
    expect([demote.status, errorCode(demote)]).toEqual([409, "conflict"]);
    expect(demote.body).toMatchObject({ error: { details: { reason: "last_admin" } } });
    const remove = await manage("DELETE", `/manage/members/${tenant.admin.userId}`, as(tenant));
    expect([remove.status, errorCode(remove)]).toEqual([409, "conflict"]);

    const promoted = await manage<Member>("PATCH", `/manage/members/${tenant.viewer.userId}`, {
      ...as(tenant),
      body: { role: "admin" },
    });
    expect([promoted.status, promoted.body.role]).toEqual([200, "admin"]);
    // Now there are two admins: the first may step down.
    const stepDown = await manage<Member>("PATCH", `/manage/members/${tenant.admin.userId}`, {
      ...as(tenant),
      body: { role: "viewer" },
    });
    expect([stepDown.status, stepDown.body.role]).toEqual([200, "viewer"]);
    const nowViewer = await manage("POST", "/manage/chatbots", { ...as(tenant), body: { name: "x" } });
    expect([nowViewer.status, errorCode(nowViewer)]).toEqual([403, "forbidden"]);
  });

  it("keeps one admin when two admins remove each other at the same time", async () => {
    const tenant = await seedManagedTenant();
    const second = await seedMember(tenant.organizationId, "admin", "second-admin");
    const [first, other] = await Promise.all([
      manage("DELETE", `/manage/members/${second.userId}`, as(tenant)),
      manage("DELETE", `/manage/members/${tenant.admin.userId}`, {
        as: second.token,
        organization: tenant.organizationId,
      }),
    ]);
    const statuses = [first.status, other.status].sort();
    // Exactly one removal wins; the other is refused (the last admin, or its remover gone), never both.
    expect(statuses[0]).toBe(204);
    expect(statuses[1]).not.toBe(204);
    const left = await manage<{ members: Member[] }>("GET", "/manage/members", {
      as: tenant.viewer.token,
      organization: tenant.organizationId,
    });
    expect(left.body.members.filter((member) => member.role === "admin")).toHaveLength(1);
  });

  it("removes a member: they lose the organization at once", async () => {
    const tenant = await seedManagedTenant();
    const removed = await manage("DELETE", `/manage/members/${tenant.viewer.userId}`, as(tenant));
    expect([removed.status, removed.text]).toEqual([204, ""]);
    const after = await manage("GET", "/manage/organization", {
      as: tenant.viewer.token,
      organization: tenant.organizationId,
    });
    expect([after.status, errorCode(after)]).toEqual([404, "organization_not_found"]);
    const again = await manage("DELETE", `/manage/members/${tenant.viewer.userId}`, as(tenant));
    expect([again.status, errorCode(again)]).toEqual([404, "member_not_found"]);
  });

  it("finds no member of another organization, and no one by an unknown id", async () => {
    for (const userId of [other.viewer.userId, randomUUID()]) {
      const patched = await manage("PATCH", `/manage/members/${userId}`, {
        ...as(home),
        body: { role: "admin" },
      });
      expect([patched.status, errorCode(patched)]).toEqual([404, "member_not_found"]);
      const deleted = await manage("DELETE", `/manage/members/${userId}`, as(home));
      expect([deleted.status, errorCode(deleted)]).toEqual([404, "member_not_found"]);
    }
    const stillThere = await manage<{ members: Member[] }>("GET", "/manage/members", as(other));
    expect(stillThere.body.members.map((member) => member.user_id)).toContain(other.viewer.userId);
  });
});
