/**
 * The role matrix, over every management route of the route table: viewers read but never write,
 * admins (and manage keys) do everything in their organization but nothing in another one, only
 * platform operators manage organizations, and the organization acted on is the one named (or the
 * person's only one).
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { ManageAccess, RouteDefinition } from "#lib/routes";
import { manageRoutes } from "#lib/routes";
import {
  addMembership,
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  type Person,
  seedManagedTenant,
  seedOperator,
  seedPerson,
} from "#test/support/management";

let home: ManagedTenant;
let other: ManagedTenant;
let operator: Person;

function requestFor(route: RouteDefinition) {
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === "key_id" ? "key_AAAAAAAAAAAAAAAA" : randomUUID(),
  );
  return {
    method: route.method,
    path,
    ...(route.method === "POST" || route.method === "PATCH" ? { body: {} } : {}),
  };
}

/** Each route's status for a caller (bodies are empty: a permitted write stops at validation or 404). */
async function statuses(as: string, organization: string | undefined) {
  return Promise.all(
    manageRoutes.map(async (route) => {
      const { method, path, body } = requestFor(route);
      const response = await manage(method, path, {
        as,
        ...(organization === undefined ? {} : { organization }),
        ...(body === undefined ? {} : { body }),
      });
      return {
        route,
        key: `${route.method} ${route.path}`,
        status: response.status,
        code: errorCode(response),
      };
    }),
  );
}

/** Which routes a caller with this standing may use. */
const permits: Record<"viewer" | "admin" | "operator", (access: ManageAccess) => boolean> = {
  viewer: (access) => access === "signedIn" || access === "viewer",
  admin: (access) => access !== "operator",
  operator: () => true,
};

function expectMatrix(answers: Awaited<ReturnType<typeof statuses>>, standing: keyof typeof permits) {
  const wrong = answers
    .filter(({ route, status, code }) => {
      const permitted = permits[standing](route.access ?? "operator");
      return permitted ? status === 401 || status === 403 : status !== 403 || code !== "forbidden";
    })
    .map(({ key, status, code }) => `${key} → ${status} ${code ?? ""}`);
  expect(wrong).toEqual([]);
}

describe.runIf(hasIdentity)("the role matrix of the management API", () => {
  beforeAll(async () => {
    // A manage key calls every management route here, more than the default 60 a minute: its
    // organization's rate limit leaves room for them all (the limits have tests of their own).
    [home, other, operator] = await Promise.all([
      seedManagedTenant({ rateLimit: 1_000 }),
      seedManagedTenant(),
      seedOperator(),
    ]);
  });

  it("lets a viewer read (conversations, usage, settings) and refuses every write with 403 forbidden", async () => {
    expectMatrix(await statuses(home.viewer.token, home.organizationId), "viewer");
  });

  it("lets an admin do everything in the organization, and refuses the operators' routes", async () => {
    expectMatrix(await statuses(home.admin.token, home.organizationId), "admin");
  });

  it("treats a key of scope manage as an admin of its own organization, never as an operator", async () => {
    expectMatrix(await statuses(home.manageKey, undefined), "admin");
  });

  it("lets a platform operator manage organizations, and act as an admin of any organization named", async () => {
    expectMatrix(await statuses(operator.token, home.organizationId), "operator");
    const organizations = await manage<{ organizations: { organization_id: string }[] }>(
      "GET",
      "/manage/organizations?limit=100",
      { as: operator.token },
    );
    expect(organizations.status).toBe(200);
  });

  it("gives an admin of one organization nothing of another: 404 organization_not_found, as for an unknown one", async () => {
    for (const named of [other.organizationId, randomUUID()]) {
      const answers = await statuses(home.admin.token, named);
      const wrong = answers
        .filter(({ route }) => route.access === "viewer" || route.access === "admin")
        .filter(({ status, code }) => status !== 404 || code !== "organization_not_found")
        .map(({ key, status }) => `${key} → ${status}`);
      expect(wrong).toEqual([]);
    }
  });

  it("keeps a manage key in its own organization: naming another one is a 404", async () => {
    const answers = await statuses(home.manageKey, other.organizationId);
    const wrong = answers
      .filter(({ route }) => route.access === "viewer" || route.access === "admin")
      .filter(({ status, code }) => status !== 404 || code !== "organization_not_found")
      .map(({ key, status }) => `${key} → ${status}`);
    expect(wrong).toEqual([]);
  });

  it("acts on a person's only organization without X-Organization-Id, and asks for it when there are several", async () => {
    const person = await seedPerson("two-orgs");
    await addMembership(person, home.organizationId, "viewer");
    const single = await manage<{ organization_id: string }>("GET", "/manage/organization", {
      as: person.token,
    });
    expect(single.status).toBe(200);
    expect(single.body.organization_id).toBe(home.organizationId);

    await addMembership(person, other.organizationId, "admin");
    const ambiguous = await manage("GET", "/manage/organization", { as: person.token });
    expect(ambiguous.status).toBe(422);
    expect(ambiguous.body).toMatchObject({
      error: {
        code: "invalid_argument",
        details: { fields: [{ loc: ["header", "X-Organization-Id"], type: "missing" }] },
      },
    });
    // The role is per organization: a viewer here, an admin there.
    const asViewer = await manage("POST", "/manage/chatbots", {
      as: person.token,
      organization: home.organizationId,
      body: { name: "x" },
    });
    expect([asViewer.status, errorCode(asViewer)]).toEqual([403, "forbidden"]);
    const asAdmin = await manage("POST", "/manage/chatbots", {
      as: person.token,
      organization: other.organizationId,
      body: { name: "x" },
    });
    expect(asAdmin.status).toBe(201);
  });

  it("asks a person without any organization to be added to one, and shows them their (empty) standing", async () => {
    const person = await seedPerson("nobody");
    const refused = await manage("GET", "/manage/chatbots", { as: person.token });
    expect([refused.status, errorCode(refused)]).toEqual([422, "invalid_argument"]);
    const me = await manage("GET", "/manage/me", { as: person.token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      principal: { type: "user", user_id: person.userId },
      operator: false,
      memberships: [],
    });
  });
});
