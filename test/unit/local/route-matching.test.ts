import { describe, expect, it } from "vitest";
import { allowedMethods, matchPath, matchRoute } from "#lib/route-matching";
import { routes } from "#lib/routes";

describe("route matching (HTTP API semantics)", () => {
  it("captures one non-empty segment per {name}, decoded", () => {
    expect(matchPath("/api/conversation/{id}/messages", "/api/conversation/a%20b/messages")).toEqual({
      id: "a b",
    });
    expect(matchPath("/api/conversation/{id}/messages", "/api/conversation//messages")).toBeUndefined();
    expect(matchPath("/api/conversation/{id}/messages", "/api/conversation/a/b/messages")).toBeUndefined();
  });

  it("prefers a literal route over a parameterised one", () => {
    const table = [
      { method: "GET", path: "/items/{id}" },
      { method: "GET", path: "/items/latest" },
    ];
    expect(matchRoute(table, "GET", "/items/latest")?.route.path).toBe("/items/latest");
    expect(matchRoute(table, "GET", "/items/7")?.pathParameters).toEqual({ id: "7" });
  });

  it("tells 405 from 404 with the real route table", () => {
    expect(allowedMethods(routes, "/api/conversation")).toEqual(["POST"]);
    expect(allowedMethods(routes, "/api/conversation/x/messages")).toEqual(["GET"]);
    expect(allowedMethods(routes, "/api/conversations")).toEqual(["GET"]);
    expect(allowedMethods(routes, "/api/chats")).toEqual([]);
  });
});
