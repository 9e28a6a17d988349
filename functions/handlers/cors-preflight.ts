/**
 * `OPTIONS` on each path the website widget calls on the HTTP API (lib/routes.ts `widgetPaths`):
 * the CORS preflight, answered 204 with the methods of that path (http/cors.ts). No authorizer runs:
 * a browser sends no credentials with a preflight. Paths no widget route has never reach this
 * function (their `OPTIONS` is the route-miss's 405 or 404), so no other route answers CORS.
 */
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { preflightResponse } from "#functions/http/cors";
import { widgetPaths } from "#lib/routes";

export async function handler(event: APIGatewayProxyEventV2) {
  // The route key is `OPTIONS {path}`, the path as the route table spells it.
  const path = event.routeKey.replace(/^OPTIONS /, "");
  const response = preflightResponse(event.headers?.origin, widgetPaths.get(path) ?? []);
  return {
    ...response,
    headers: { ...response.headers, "x-request-id": event.requestContext.requestId },
  };
}
