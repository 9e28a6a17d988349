/**
 * The management routes are declared twice on purpose: the route table (which the management
 * authorizer reads to pick the caller's bucket) and each handler's contract (which the handler
 * checks again and the OpenAPI document publishes). They must agree.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { RouteContract } from "#functions/http/api-handler";
import { manageRouteFor, manageRoutes, publicRoutes, routes } from "#lib/routes";

const root = resolve(import.meta.dirname, "../../..");

async function contractOf(entry: string): Promise<RouteContract> {
  return ((await import(pathToFileURL(resolve(root, entry)).href)) as { contract: RouteContract }).contract;
}

describe("the management routes", () => {
  it("live under /manage/, use the management authorizer, and declare who may call them", () => {
    for (const route of manageRoutes) {
      expect([route.id, route.path.startsWith("/manage/"), route.auth, route.access !== undefined]).toEqual([
        route.id,
        true,
        "manage",
        true,
      ]);
    }
    for (const route of publicRoutes) expect(route.path.startsWith("/manage")).toBe(false);
  });

  it("declare in each handler's contract exactly the access of the route table", async () => {
    for (const route of manageRoutes) {
      const contract = await contractOf(route.entry);
      expect([route.id, contract.auth, contract.access]).toEqual([route.id, "manage", route.access]);
    }
  });

  it("have unique operation ids and route keys, and the authorizer finds each by its route key", async () => {
    const operationIds = await Promise.all(
      routes.map(async (route) => (await contractOf(route.entry)).operationId),
    );
    expect(new Set(operationIds).size).toBe(operationIds.length);
    const keys = routes.map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const route of manageRoutes) expect(manageRouteFor(`${route.method} ${route.path}`)).toBe(route);
    expect(manageRouteFor("GET /api/me")).toBeUndefined();
    expect(manageRouteFor("$default")).toBeUndefined();
  });
});

/**
 * What the layers before a handler's own code can answer, route by route: the key or access token
 * check, the role, the organization named, the bucket, validation. A status the document leaves out
 * is one a generated client does not expect.
 */
function statusesBeforeTheHandler(route: (typeof routes)[number], contract: RouteContract): number[] {
  // /ping and /openapi.json count a key sent along but never refuse: always 200.
  if (contract.auth === "none" || contract.auth === "countApiKey") return [];
  const statuses = [401, 403, 429, 500, 503];
  // A manage key may name another organization (404) on any route it may call; a person on an
  // organization's route may name one they are not in (404), or none while in several (422).
  if (route.auth === "manage" && route.access !== "operator") statuses.push(404);
  if (route.access === "viewer" || route.access === "admin") statuses.push(422);
  if (contract.body || contract.query || contract.path || contract.idempotent) statuses.push(422);
  // A path names something of the organization, which may not exist (or be another's).
  if (contract.path) statuses.push(404);
  return [...new Set(statuses)].sort();
}

describe("the documented error statuses", () => {
  it("include every status the authorizers, the role check and validation can answer on that route", async () => {
    const missing: string[] = [];
    for (const route of routes) {
      const contract = await contractOf(route.entry);
      const absent = statusesBeforeTheHandler(route, contract).filter(
        (status) => !contract.errors.includes(status),
      );
      if (absent.length > 0) missing.push(`${route.method} ${route.path}: ${absent.join(", ")}`);
    }
    expect(missing).toEqual([]);
  });
});
