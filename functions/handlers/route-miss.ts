/**
 * The `$default` route: every request no route matched. The gateway's own answer would be
 * `{"message":"Not Found"}` both for an unknown path and for a known path with another method;
 * the API answers `404 {"detail":"Not Found"}` and `405 {"detail":"Method Not Allowed"}`.
 *
 * The authorizer runs here too (lib/routes.ts), so a request with a valid key is treated as on any
 * route: it takes a token, its answer carries the X-RateLimit-* headers (as every answer to a valid key), an
 * inactive organization gets its 403 and an empty bucket its 429. Without a valid key the answer is
 * the plain 404 / 405: an unknown path is no place to ask for credentials.
 */

import * as z from "zod/mini";
import { AppError } from "#functions/errors";
import { apiHandler, type RouteContract } from "#functions/http/api-handler";
import { allowedMethods } from "#lib/route-matching";
import { routes } from "#lib/routes";

export const contract = {
  operationId: "routeMiss",
  summary: "No such route",
  description: "Answers 404 for unknown paths and 405 (with `Allow`) for a known path with another method.",
  tags: [],
  auth: "optionalApiKey",
  response: z.never(),
  errors: [404, 405],
} as const satisfies RouteContract<"optionalApiKey">;

export const handler = apiHandler(contract, async ({ rawPath }) => {
  const allowed = allowedMethods(routes, rawPath);
  if (allowed.length > 0)
    throw new AppError("method_not_allowed", { headers: { allow: allowed.join(", ") } });
  throw new AppError("route_not_found");
});
