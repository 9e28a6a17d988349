/** GET /openapi.json — the OpenAPI 3.1 document, generated from the routes' schemas (bin/openapi.ts). */

import * as z from "zod/mini";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import document from "../../docs/openapi.json" with { type: "json" };

const response = z.record(z.string(), z.unknown());

export const contract = {
  operationId: "getOpenApiDocument",
  summary: "OpenAPI document",
  description:
    "This API's OpenAPI 3.1 description. Needs no API key and is never refused; a valid key sent along is counted like any request, and the answer carries its `X-RateLimit-*` headers.",
  tags: ["Health"],
  auth: "countApiKey",
  response,
  errors: [500],
} as const satisfies RouteContract<"countApiKey", undefined, undefined, undefined, typeof response>;

export const handler = apiHandler(contract, async () => ({
  body: document as Record<string, unknown>,
  headers: { "cache-control": "public, max-age=300" },
}));
