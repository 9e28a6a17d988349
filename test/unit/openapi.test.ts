/** docs/openapi.json is generated from the handlers' schemas (npm run openapi); it must not drift. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "#lib/openapi";
import { manageRoutes, routes, streamRoute } from "#lib/routes";

const committed = JSON.parse(
  readFileSync(resolve(import.meta.dirname, "../../docs/openapi.json"), "utf8"),
) as {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation> & { servers?: { url: string }[] }>;
  components: { parameters: Record<string, Parameter> };
};

const httpMethods = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);
/** A path's operations (a path item also holds `servers`, `parameters`, …). */
const operationsOf = (pathItem: Record<string, Operation>): [string, Operation][] =>
  Object.entries(pathItem).filter(([key]) => httpMethods.has(key));

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: Record<string, unknown>;
}
interface Operation {
  tags: string[];
  security?: unknown[];
  responses: Record<string, unknown>;
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { content: Record<string, { schema: unknown }> };
}

function parametersOf(operation: Operation | undefined): Record<string, Parameter> {
  const resolved = (operation?.parameters ?? []).map((parameter) =>
    "$ref" in parameter
      ? (committed.components.parameters[parameter.$ref.replace("#/components/parameters/", "")] as Parameter)
      : parameter,
  );
  return Object.fromEntries(resolved.map((parameter) => [parameter.name, parameter]));
}

describe("the OpenAPI document", () => {
  it("is up to date with the schemas (run `npm run openapi` after changing them)", async () => {
    expect(committed).toEqual(await buildOpenApiDocument());
  });

  it("is OpenAPI 3.1, version 1.0.0, and describes every route of the table", () => {
    expect(committed.openapi).toBe("3.1.0");
    expect(committed.info.version).toBe("1.0.0");
    for (const route of [...routes, streamRoute])
      expect(committed.paths[route.path]?.[route.method.toLowerCase()]).toBeDefined();
  });

  it("puts the streaming endpoint on the stream base URL, with a schema for each of its events", () => {
    const pathItem = committed.paths[streamRoute.path];
    expect(pathItem?.servers?.[0]?.url).toMatch(/lambda-url/);
    const ok = pathItem?.post?.responses[200] as { content: Record<string, { schema: unknown }> };
    expect(Object.keys(ok.content)).toEqual(["text/event-stream"]);
    expect(ok.content["text/event-stream"]?.schema).toEqual({
      $ref: "#/components/schemas/MessageStreamEvent",
    });
    const schemas = (
      committed as unknown as { components: { schemas: Record<string, Record<string, unknown>> } }
    ).components.schemas;
    const union = schemas.MessageStreamEvent as {
      oneOf: { $ref: string }[];
      discriminator: { mapping: object };
    };
    expect(union.discriminator.mapping).toEqual({
      "message.start": "#/components/schemas/MessageStartEvent",
      "message.delta": "#/components/schemas/MessageDeltaEvent",
      "message.end": "#/components/schemas/MessageEndEvent",
      error: "#/components/schemas/StreamErrorEvent",
    });
    // Each event: its name as a constant, and its data's own schema (not a bare string).
    type EventSchema = { properties: { event: unknown; data: { properties: Record<string, unknown> } } };
    const eventSchema = (component: string) => schemas[component] as unknown as EventSchema;
    const dataOf = (component: string) => eventSchema(component).properties.data.properties;
    expect(eventSchema("MessageStartEvent").properties.event).toEqual({
      type: "string",
      const: "message.start",
    });
    expect(Object.keys(dataOf("MessageStartEvent")).sort()).toEqual([
      "conversation_id",
      "message_id",
      "status",
    ]);
    expect(Object.keys(dataOf("MessageDeltaEvent"))).toEqual(["text"]);
    expect(Object.keys(dataOf("MessageEndEvent"))).toEqual(
      expect.arrayContaining(["message_id", "role", "content", "created_at"]),
    );
    expect(Object.keys(dataOf("StreamErrorEvent"))).toEqual(["detail"]);
  });

  it("names whom to contact", () => {
    const { contact } = committed.info as { contact?: { name?: string; email?: string } };
    expect(contact?.name).toBeTruthy();
    expect(contact?.email).toMatch(/^[^@\s]+@[^@\s]+$/);
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
      for (const [method, operation] of operationsOf(methods)) {
        visit(operation.requestBody?.content["application/json"]?.schema, `${method} ${path}`);
      }
    }
    expect(unbounded).toEqual([]);
  });

  it("types every query and path parameter as the server parses it, with its bounds and default", () => {
    const listMessages = parametersOf(committed.paths["/api/conversation/{conversation_id}/messages"]?.get);

    expect(listMessages.limit).toEqual({
      name: "limit",
      in: "query",
      required: false,
      description: expect.any(String),
      schema: { type: "integer", minimum: 1, maximum: 100, default: 20, description: expect.any(String) },
    });
    expect(listMessages.cursor).toMatchObject({
      in: "query",
      required: false,
      schema: { type: "string", maxLength: 200 },
    });
    expect(listMessages.conversation_id).toMatchObject({
      in: "path",
      required: true,
      schema: { type: "string", format: "uuid" },
    });
  });

  it("publishes the Idempotency-Key rule the server enforces", () => {
    for (const path of ["/api/conversation", "/api/message"]) {
      expect(parametersOf(committed.paths[path]?.post)["Idempotency-Key"]).toMatchObject({
        in: "header",
        required: false,
        schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]{1,255}$" },
      });
    }
  });

  it("describes every management operation with its required role, the organization header and Format A errors", () => {
    const managementError = { $ref: "#/components/schemas/ManagementError" };
    for (const route of manageRoutes) {
      const operation = committed.paths[route.path]?.[route.method.toLowerCase()] as unknown as Record<
        string,
        unknown
      >;
      expect([route.id, operation["x-required-role"]]).toEqual([route.id, route.access]);
      const parameters = parametersOf(operation as unknown as Operation);
      expect([route.id, "X-Organization-Id" in parameters]).toEqual([
        route.id,
        route.access === "viewer" || route.access === "admin",
      ]);
      const responses = operation.responses as Record<string, { $ref?: string }>;
      for (const status of ["401", "403", "429", "500"]) {
        expect([route.id, responses[status]?.$ref]).toEqual([
          route.id,
          `#/components/responses/Management${status}`,
        ]);
      }
    }
    const components = committed.components as unknown as {
      responses: Record<string, { content: Record<string, { schema: unknown }> }>;
      schemas: Record<string, { properties: { error: { properties: { code: { enum: string[] } } } } }>;
    };
    expect(components.responses.Management422?.content["application/json"]?.schema).toEqual(managementError);
    expect(components.schemas.ManagementError?.properties.error.properties.code.enum).toEqual(
      expect.arrayContaining([
        "unauthenticated",
        "forbidden",
        "invalid_argument",
        "conflict",
        "rate_limited",
      ]),
    );
  });

  it("declares every tag its operations use, with a description", () => {
    const declared = (committed as unknown as { tags?: { name: string; description?: string }[] }).tags ?? [];
    const used = new Set(
      Object.values(committed.paths).flatMap((methods) => operationsOf(methods).flatMap(([, op]) => op.tags)),
    );
    expect([...used].sort()).toEqual(declared.map((tag) => tag.name).sort());
    for (const tag of declared) expect(tag.description).toEqual(expect.any(String));
  });

  it("documents the 4XX answers of every operation that takes an API key or input", () => {
    const missing: string[] = [];
    for (const [path, methods] of Object.entries(committed.paths)) {
      for (const [method, operation] of operationsOf(methods)) {
        const takesKey = operation.security === undefined;
        const takesInput = (operation.parameters ?? []).length > 0 || operation.requestBody !== undefined;
        const documents4xx = Object.keys(operation.responses).some((status) => /^4\d\d$/.test(status));
        if ((takesKey || takesInput) && !documents4xx) missing.push(`${method} ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
