/** docs/openapi.json is generated from the handlers' schemas (npm run openapi); it must not drift. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "#lib/openapi";
import { routes } from "#lib/routes";

const committed = JSON.parse(
  readFileSync(resolve(import.meta.dirname, "../../docs/openapi.json"), "utf8"),
) as {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>;
};

describe("the OpenAPI document", () => {
  it("is up to date with the schemas (run `npm run openapi` after changing them)", async () => {
    expect(committed).toEqual(await buildOpenApiDocument());
  });

  it("is OpenAPI 3.1, version 1.0.0, and describes every route of the table", () => {
    expect(committed.openapi).toBe("3.1.0");
    expect(committed.info.version).toBe("1.0.0");
    for (const route of routes)
      expect(committed.paths[route.path]?.[route.method.toLowerCase()]).toBeDefined();
  });

  it("publishes an upper bound for every string and list in the request bodies", () => {
    const unbounded: string[] = [];
    const visit = (schema: unknown, path: string) => {
      if (schema === null || typeof schema !== "object") return;
      const node = schema as Record<string, unknown>;
      if (
        node.type === "string" &&
        node.maxLength === undefined &&
        node.const === undefined &&
        node.enum === undefined &&
        node.format !== "uuid"
      ) {
        unbounded.push(path);
      }
      if (node.type === "array" && node.maxItems === undefined) unbounded.push(path);
      for (const [key, child] of Object.entries(node)) visit(child, `${path}.${key}`);
    };
    for (const [path, methods] of Object.entries(committed.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        visit(operation.requestBody?.content["application/json"]?.schema, `${method} ${path}`);
      }
    }
    expect(unbounded).toEqual([]);
  });
});
