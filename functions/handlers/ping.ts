/** GET /ping — liveness, no authentication (docs/api.md). */

import * as z from "zod/mini";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";

const response = z.object({ message: z.literal("pong") });

export const contract = {
  operationId: "ping",
  summary: "Check that the API is alive",
  description:
    "Answers `pong`. Needs no API key and is never refused; a valid key sent along is counted like any request, and the answer carries its `X-RateLimit-*` headers.",
  tags: ["Health"],
  auth: "countApiKey",
  response,
  errors: [500],
} as const satisfies RouteContract<"countApiKey", undefined, undefined, undefined, typeof response>;

export const handler = apiHandler(contract, async () => ({ body: { message: "pong" as const } }));
