/**
 * The one home of errors: a closed list of codes, each mapped to its HTTP status and client text,
 * and the two body formats (docs/api.md).
 *
 * - Format B (`{"detail": …}`) is what the public API answers.
 * - Format A (`{"error": {"code", "message", "details"}}`) is the management format: every answer
 *   of `/manage/*` and the operator CLI's `--json` output. Its codes are the keys of `catalogue`.
 *
 * Domain code throws `AppError`s by code; anything else that escapes a handler is a bare 500.
 */

/** One Pydantic v2 / FastAPI validation item. */
export interface ValidationItem {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** The body of a 429 (public API). */
export interface RateLimitDetail {
  error: "Rate limit exceeded";
  message: string;
  limit: number;
  remaining: 0;
  reset: string;
  retry_after: number;
}

/** "1 second", "12 seconds". */
export const secondsText = (seconds: number): string => `${seconds} ${seconds === 1 ? "second" : "seconds"}`;

/** Which bucket refused a request: an API key's, a person's (management), or one of a website visitor's. */
export type RateLimitKind =
  | "apiKey"
  | "management"
  | "widgetSessions"
  | "visitor_requests"
  | "visitor_messages"
  | "daily_budget";

const refusals: Record<RateLimitKind, (limit: number) => string> = {
  apiKey: (limit) => `Too many requests: this API key allows ${limit} requests per minute.`,
  management: (limit) => `Too many requests: ${limit} management requests per minute are allowed.`,
  widgetSessions: (limit) => `Too many sessions: ${limit} per 10 minutes may start from one address.`,
  visitor_requests: (limit) => `Too many requests: a visitor may make ${limit} requests per minute.`,
  visitor_messages: (limit) => `Too many messages: a visitor may send ${limit} messages per minute.`,
  daily_budget: (limit) =>
    `This chatbot has taken its ${limit} visitor messages for today; it answers again tomorrow (UTC).`,
};

/**
 * A 429's detail: the bucket that refused, when it is full again, and a sentence saying which limit
 * it met and how long to wait.
 */
export function rateLimitDetail(bucket: {
  kind: RateLimitKind;
  limit: number;
  /** Unix seconds at which the bucket is full again. */
  resetAt: number;
  retryAfter: number;
}): RateLimitDetail {
  return {
    error: "Rate limit exceeded",
    message: `${refusals[bucket.kind](bucket.limit)} Retry in ${secondsText(bucket.retryAfter)}.`,
    limit: bucket.limit,
    remaining: 0,
    reset: new Date(bucket.resetAt * 1000).toISOString().replace(".000Z", "Z"),
    retry_after: bucket.retryAfter,
  };
}

const catalogue = {
  // Public API (Format B). Texts marked "exact" are part of the documented API (docs/api.md): never reword them.
  invalid_api_key: { status: 401, detail: "Invalid API key" }, // exact
  subscription_inactive: { status: 403, detail: "Organization subscription is not active" }, // exact
  contact_other_organization: { status: 403, detail: "Contact does not belong to this organization" }, // exact
  // The website widget's session route (POST /api/widget/session).
  origin_not_allowed: { status: 403, detail: "Origin not allowed" }, // exact
  invalid_identity_token: { status: 401, detail: "Invalid identity token" }, // exact
  chatbot_not_found: { status: 404, detail: "Chatbot not found" }, // exact
  conversation_not_found: { status: 404, detail: "Conversation not found" }, // exact
  message_not_found: { status: 404, detail: "Message not found" }, // exact
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
  // Management (/manage/* and the operator CLI, Format A).
  unauthenticated: {
    status: 401,
    detail: "Sign in (a bearer access token of the console) or send an API key of scope manage",
  },
  forbidden: { status: 403, detail: "Your role does not allow this" },
  invalid_argument: { status: 422, detail: "Invalid argument" },
  organization_not_found: { status: 404, detail: "Organization not found" },
  member_not_found: { status: 404, detail: "Member not found" },
  api_key_not_found: { status: 404, detail: "API key not found" },
  tool_not_found: { status: 404, detail: "Tool not found" },
  contact_not_found: { status: 404, detail: "Contact not found" },
  knowledge_entry_not_found: { status: 404, detail: "Knowledge entry not found" },
  knowledge_source_not_found: { status: 404, detail: "Knowledge source not found" },
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
  /** Format A only: machine-readable specifics (e.g. `{"reason": "last_admin"}`). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: ErrorCode,
    options: {
      detail?: Detail;
      headers?: Record<string, string>;
      details?: Record<string, unknown>;
      cause?: unknown;
    } = {},
  ) {
    const detail = options.detail ?? catalogue[code].detail;
    super(typeof detail === "string" ? detail : catalogue[code].detail, { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.detail = detail;
    this.headers = options.headers ?? {};
    this.details = options.details ?? {};
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

/** One failing field in a Format A 422: where, which rule, and what is wrong (never the value sent). */
export interface FieldProblem {
  loc: (string | number)[];
  type: string;
  msg: string;
}

export interface FormatABody {
  error: { code: ErrorCode; message: string; details: Record<string, unknown> };
}

/**
 * Format A: the management error body. Validation failures become `invalid_argument` with
 * `details.fields` (the Pydantic-style items without their `input`: a refused credential must not
 * be echoed back), a 429 carries its bucket in `details`, anything unknown is a bare 500.
 */
export function toFormatA(error: unknown): {
  status: number;
  headers: Record<string, string>;
  body: FormatABody;
} {
  if (!(error instanceof AppError)) {
    return {
      status: 500,
      headers: {},
      body: { error: { code: "internal", message: catalogue.internal.detail, details: {} } },
    };
  }
  const headers = { ...error.headers };
  const detail = error.detail;
  if (Array.isArray(detail)) {
    const fields: FieldProblem[] = detail.map(({ loc, type, msg }) => ({ loc, type, msg }));
    return {
      status: statusOf("invalid_argument"),
      headers,
      body: {
        error: {
          code: "invalid_argument",
          message: "The request has invalid fields: see details.fields",
          details: { ...error.details, fields },
        },
      },
    };
  }
  if (typeof detail === "object") {
    const { error: _title, message, ...bucket } = detail;
    return { status: error.status, headers, body: { error: { code: error.code, message, details: bucket } } };
  }
  return {
    status: error.status,
    headers,
    body: { error: { code: error.code, message: error.message, details: { ...error.details } } },
  };
}
