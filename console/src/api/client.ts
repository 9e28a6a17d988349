/**
 * The management and public API, through a client generated from docs/openapi.json (types from
 * openapi-typescript, calls through openapi-fetch): a path, parameter or field the API does not
 * have fails the console's type check, so the console cannot drift from the API.
 *
 * Requests go to the console's own origin, where the host routes /api, /manage and the stream path
 * to the API (no CORS). The organization acted on is sent as `X-Organization-Id`.
 */
import createClient, { type Middleware } from "openapi-fetch";
import { accessToken, sessionExpired } from "../lib/session.ts";
import { organizationId } from "../lib/workspace.ts";
import type { paths } from "./schema";

export type { paths };

/** Routes acting on no organization (the caller's own account, the operators' routes). */
const withoutOrganization = (pathname: string) =>
  pathname === "/manage/me" || pathname.startsWith("/manage/organizations");

const signedInRequests: Middleware = {
  async onRequest({ request }) {
    const token = await accessToken();
    if (token) request.headers.set("authorization", `Bearer ${token}`);
    const organization = organizationId.value;
    if (organization && !withoutOrganization(new URL(request.url).pathname)) {
      request.headers.set("x-organization-id", organization);
    }
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) sessionExpired();
    return response;
  },
};

/** The management API, as the signed-in person. */
export const api = createClient<paths>({ baseUrl: location.origin });
api.use(signedInRequests);

/** The public API with one key (Try it's test key), at the console's origin or `baseUrl`. */
export function publicApi(key: string, baseUrl = location.origin) {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${key}` } });
}

export interface FieldProblem {
  loc: (string | number)[];
  msg: string;
}

/** A refused request, with the API's own message (Format A `error.message`, or the public API's `detail`). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
    readonly fields: FieldProblem[],
  ) {
    super(message);
  }
}

function errorOf(body: unknown, response: Response): ApiError {
  const format = body as {
    error?: { code?: string; message?: string; details?: { fields?: FieldProblem[] } };
    detail?: unknown;
  } | null;
  if (format?.error?.message) {
    return new ApiError(
      format.error.message,
      response.status,
      format.error.code,
      format.error.details?.fields ?? [],
    );
  }
  if (typeof format?.detail === "string") return new ApiError(format.detail, response.status, undefined, []);
  if (Array.isArray(format?.detail)) {
    const fields = format.detail as FieldProblem[];
    return new ApiError("Some values are not valid.", response.status, "validation_failed", fields);
  }
  if (format?.detail && typeof format.detail === "object") {
    const message = (format.detail as { message?: string }).message;
    return new ApiError(message ?? `Request failed (${response.status})`, response.status, undefined, []);
  }
  return new ApiError(
    `Request failed (${response.status} ${response.statusText})`,
    response.status,
    undefined,
    [],
  );
}

/** The answer's data, or an ApiError with the API's message. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (error) {
    throw new ApiError(
      error instanceof Error
        ? `The service could not be reached: ${error.message}`
        : "The service could not be reached",
      0,
      undefined,
      [],
    );
  }
  if (!result.response.ok) throw errorOf(result.error, result.response);
  return result.data as T;
}
