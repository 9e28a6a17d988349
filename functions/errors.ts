/**
 * The one home of errors: a closed list of codes, each mapped to its HTTP status and client text,
 * and the two body formats of SPEC.md §7.
 *
 * - Format B (`{"detail": …}`) is what the public API answers (CONTRACT.md §2–§7).
 * - Format A (`{"error": {"code", "message", "details"}}`) is the management format, used by the
 *   operator CLI's `--json` output (CONTRACT.md §6). Its codes are the keys of `catalogue`.
 *
 * Domain code throws `AppError`s by code; anything else that escapes a handler is a bare 500.
 */

/** One Pydantic v2 / FastAPI validation item (CONTRACT.md §3). */
export interface ValidationItem {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** The body of a 429 (SPEC.md §7, CONTRACT.md §5). */
export interface RateLimitDetail {
  error: "Rate limit exceeded";
  message: string;
  limit: number;
  remaining: 0;
  reset: string;
  retry_after: number;
}

const catalogue = {
  // Public API (Format B). Texts marked "exact" are fixed by CONTRACT.md.
  invalid_api_key: { status: 401, detail: "Invalid API key" }, // exact
  subscription_inactive: { status: 403, detail: "Organization subscription is not active" }, // exact
  contact_other_organization: { status: 403, detail: "Contact does not belong to this organization" }, // exact
  chatbot_not_found: { status: 404, detail: "Chatbot not found" }, // exact
  conversation_not_found: { status: 404, detail: "Conversation not found" }, // exact
  route_not_found: { status: 404, detail: "Not Found" }, // exact
  method_not_allowed: { status: 405, detail: "Method Not Allowed" }, // exact
  conversation_closed: { status: 409, detail: "Conversation is closed" }, // exact
  idempotency_in_progress: {
    status: 409,
    detail: "A request with this Idempotency-Key is still being processed",
  }, // exact
  validation_failed: { status: 422, detail: "Request validation failed" },
  idempotency_key_reused: {
    status: 422,
    detail: "Idempotency-Key was already used with a different request", // exact
  },
  rate_limited: { status: 429, detail: "Rate limit exceeded" },
  internal: { status: 500, detail: "Internal server error" }, // exact
  // A dependency (the table, a key service) is down or too slow; the caller may retry (Retry-After).
  service_unavailable: { status: 503, detail: "Service temporarily unavailable" }, // exact
  // Management (operator CLI, Format A).
  invalid_argument: { status: 400, detail: "Invalid argument" },
  organization_not_found: { status: 404, detail: "Organization not found" },
  api_key_not_found: { status: 404, detail: "API key not found" },
  tool_not_found: { status: 404, detail: "Tool not found" },
  knowledge_entry_not_found: { status: 404, detail: "Knowledge entry not found" },
  webhook_endpoint_not_found: { status: 404, detail: "Webhook endpoint not found" },
  webhook_delivery_not_found: { status: 404, detail: "Webhook delivery not found" },
  conflict: { status: 409, detail: "The resource already exists or changed meanwhile" },
} as const satisfies Record<string, { status: number; detail: string }>;

export type ErrorCode = keyof typeof catalogue;

export const errorCodes = Object.keys(catalogue) as ErrorCode[];

export function statusOf(code: ErrorCode): number {
  return catalogue[code].status;
}

type Detail = string | ValidationItem[] | RateLimitDetail;

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Overrides the catalogue text (validation items, rate-limit object, or a more specific message). */
  readonly detail: Detail;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ErrorCode,
    options: { detail?: Detail; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    const detail = options.detail ?? catalogue[code].detail;
    super(typeof detail === "string" ? detail : catalogue[code].detail, { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.detail = detail;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return statusOf(this.code);
  }
}

/** Seconds a client is asked to wait before retrying after a 503. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/** 503: a dependency did not answer in time, or failed in a way worth retrying. */
export function serviceUnavailable(cause?: unknown): AppError {
  return new AppError("service_unavailable", {
    headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
    ...(cause === undefined ? {} : { cause }),
  });
}

export function validationError(items: ValidationItem[]): AppError {
  return new AppError("validation_failed", { detail: items });
}

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: { detail: Detail };
}

/** Format B: the public API's error body. Unknown errors become a bare 500 (no message, no stack). */
export function toFormatB(error: unknown): ErrorResponse {
  if (error instanceof AppError) {
    return { status: error.status, headers: { ...error.headers }, body: { detail: error.detail } };
  }
  return { status: 500, headers: {}, body: { detail: catalogue.internal.detail } };
}

/** Format A: the management error body. */
export function toFormatA(error: unknown): {
  status: number;
  body: { error: { code: ErrorCode; message: string; details: Record<string, unknown> } };
} {
  if (error instanceof AppError) {
    const details = typeof error.detail === "string" ? {} : { items: error.detail };
    return { status: error.status, body: { error: { code: error.code, message: error.message, details } } };
  }
  return {
    status: 500,
    body: { error: { code: "internal", message: catalogue.internal.detail, details: {} } },
  };
}
