/** GET /ping — liveness, no authentication (docs/api.md). */

import * as z from "zod/mini";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";

const response = z.object({ message: z.literal("pong") });

export const contract = {
  operationId: "ping",
  summary: "Check that the API is alive",
  description: "Answers `pong`. Needs no API key and touches no data.",
  tags: ["Health"],
  auth: "none",
  response,
  errors: [500],
} as const satisfies RouteContract<"none", undefined, undefined, undefined, typeof response>;

export const handler = apiHandler(contract, async () => ({ body: { message: "pong" as const } }));
