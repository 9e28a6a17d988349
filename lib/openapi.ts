/**
 * Builds the OpenAPI 3.1 document (served at GET /openapi.json) from the route table and the very schemas the
 * handlers validate with. `npm run openapi` writes it to docs/openapi.json (committed, and served
 * by GET /openapi.json); a test fails when the committed copy is stale.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import * as z from "zod/mini";
import { errorCodes, statusOf } from "#functions/errors";
import type { RouteContract } from "#functions/http/api-handler";
import { idempotencyKeyRule } from "#functions/http/idempotency";
import { installLambdaStreamingGlobals } from "./local/function-url-emulator.ts";
import { type RouteDefinition, routes, streamRoute } from "./routes.ts";

const root = resolve(import.meta.dirname, "..");

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodMiniType): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
  }) as JsonSchema;
  return rest;
}

async function contractOf(route: Pick<RouteDefinition, "entry">): Promise<RouteContract> {
  // A streaming handler asks Lambda's runtime for its streaming globals as it loads.
  installLambdaStreamingGlobals();
  const module = (await import(pathToFileURL(resolve(root, route.entry)).href)) as {
    contract: RouteContract;
  };
  return module.contract;
}

/** The stream's events: each event's name, and the component that describes it. */
const streamEventComponents = {
  "message.start": "MessageStartEvent",
  "message.delta": "MessageDeltaEvent",
  "message.end": "MessageEndEvent",
  error: "StreamErrorEvent",
} as const;

const streamEventSummaries: Record<keyof typeof streamEventComponents, string> = {
  "message.start": "A reply message begins.",
  "message.delta": "The next piece of the reply's text, as the model writes it.",
  "message.end": "The reply message is complete and stored.",
  error: "The reply failed after the start: drop what arrived since `message.start`.",
};

async function streamEventsOf(): Promise<Record<string, z.ZodMiniType>> {
  const module = (await import(pathToFileURL(resolve(root, streamRoute.entry)).href)) as {
    streamEvents: Record<string, z.ZodMiniType>;
  };
  return module.streamEvents;
}

/**
 * One component per event of the stream: `{"event": <its name>, "data": <its JSON>}`, as a client
 * reads it once it has parsed the `event:` and `data:` lines. So generated clients get a type per
 * event, and `MessageStreamEvent` is their union, told apart by `event`.
 */
async function streamEventSchemas(): Promise<Record<string, JsonSchema>> {
  const events = await streamEventsOf();
  const schemas: Record<string, JsonSchema> = {};
  for (const [name, component] of Object.entries(streamEventComponents)) {
    const data = events[name];
    if (!data) throw new Error(`the stream handler describes no event ${name}`);
    schemas[component] = {
      type: "object",
      description: `\`event: ${name}\`: ${streamEventSummaries[name as keyof typeof streamEventComponents]}`,
      properties: {
        event: { type: "string", const: name },
        data: jsonSchema(data),
      },
      required: ["event", "data"],
    };
  }
  schemas.MessageStreamEvent = {
    description:
      "One event of `POST /api/message/stream`: its `event:` line's name and its `data:` line's JSON. The body is a sequence of these, each written as `event: <name>` and `data: <JSON>` lines and ended by a blank line.",
    oneOf: Object.values(streamEventComponents).map((component) => ({
      $ref: `#/components/schemas/${component}`,
    })),
    discriminator: {
      propertyName: "event",
      mapping: Object.fromEntries(
        Object.entries(streamEventComponents).map(([name, component]) => [
          name,
          `#/components/schemas/${component}`,
        ]),
      ),
    },
  };
  return schemas;
}

/**
 * The streaming endpoint is not on the API's base URL but on a function URL of its own (the
 * `StreamUrl` output), so its path names that server; its 200 is a text/event-stream whose schema
 * is one event (`MessageStreamEvent`), as OpenAPI 3.1 tools read an event stream's schema.
 */
function streamOperation(operation: Record<string, unknown>): Record<string, unknown> {
  const responses = operation.responses as Record<string, Record<string, unknown>>;
  const ok = responses[200] ?? {};
  const example = [
    'event: message.start\ndata: {"conversation_id":"4e182a9a-4425-4144-a4ba-d6998cd1143f","message_id":"9b2f0c1e-3d4a-4b5c-8d6e-7f8091a2b3c4","status":"open"}\n\n',
    'event: message.delta\ndata: {"text":"Your order"}\n\n',
    'event: message.delta\ndata: {"text":" shipped today."}\n\n',
    'event: message.end\ndata: {"message_id":"9b2f0c1e-3d4a-4b5c-8d6e-7f8091a2b3c4","role":"assistant","content":"Your order shipped today.","created_at":"2026-11-21T12:00:00.000Z"}\n\n',
  ].join("");
  return {
    ...operation,
    responses: {
      ...responses,
      200: {
        description:
          "The reply as Server-Sent Events, from the moment the visitor's message is stored: `message.start`, `message.delta` as the model writes, `message.end` once the reply is stored (one start … end per reply message). A failure after the start is an `error` event followed by the fallback reply's events. With an Idempotency-Key, a completed turn is replayed as events (`Idempotent-Replayed: true`). The schema describes one event (`MessageStreamEvent`, by its `event` name); the body is a sequence of them.",
        headers: ok.headers,
        content: {
          "text/event-stream": {
            schema: { $ref: "#/components/schemas/MessageStreamEvent" },
            example,
          },
        },
      },
    },
  };
}

const streamServer = {
  url: "https://{functionUrlId}.lambda-url.{region}.on.aws",
  description:
    "The stream base URL: the stack's `StreamUrl` output (locally, the stream URL `npm start` prints).",
  variables: {
    functionUrlId: { default: "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6", description: "The function URL's id." },
    region: { default: "eu-west-1", description: "The stack's region." },
  },
};

/** The groups operations are listed under; every contract's tags must be one of these. */
const tags = [
  { name: "Conversations", description: "Start a conversation between a visitor and one of your chatbots." },
  { name: "Messages", description: "Send the visitor's messages and read a conversation's history." },
  {
    name: "Feedback",
    description:
      "The visitor's thumbs on the chatbot's replies and rating of the conversation: they decide conversations' outcomes and feed the analytics.",
  },
  { name: "Account", description: "What the calling API key belongs to." },
  { name: "Health", description: "Liveness and this description; no API key needed." },
  {
    name: "Management: account",
    description:
      "Management API (console and manage keys): who is calling. Errors in the management format (`ManagementError`).",
  },
  {
    name: "Management: organization",
    description: "The organization acted on: read it, and (admins) rename it.",
  },
  {
    name: "Management: platform",
    description:
      "Platform operators: every organization, its subscription and rate limit, and its first admin.",
  },
  {
    name: "Management: members",
    description: "The people of the organization: invite by e-mail, roles, removal.",
  },
  {
    name: "Management: API keys",
    description: "The organization's API keys: create (the key is shown once), list with last use, revoke.",
  },
  {
    name: "Website widget",
    description:
      "Visitor sessions for the website widget: called from visitors' browsers (CORS), without an API key. A session's token then works on the conversation and message routes marked for it.",
  },
  {
    name: "Management: widget",
    description:
      "A chatbot's website widget: on or off, allowed origins, identity verification and its secret, appearance, daily message budget.",
  },
  {
    name: "Management: chatbots",
    description: "Chatbots and their settings: engine, model, instructions, replies.",
  },
  {
    name: "Management: knowledge",
    description: "What a chatbot answers from: question/answer pairs and snippets.",
  },
  {
    name: "Management: tools",
    description:
      "Look-up tools from the templates: settings, write-only credentials, and a test against the platform.",
  },
  {
    name: "Management: conversations",
    description: "The organization's conversations: filtered lists, transcripts, closing.",
  },
  {
    name: "Management: contacts",
    description:
      "The people behind conversations: list, search by name, e-mail, phone or external id, and each one's conversations.",
  },
  {
    name: "Management: usage",
    description: "Usage per day and chatbot: messages, replies, fallbacks, look-ups, tokens.",
  },
  {
    name: "Management: analytics",
    description:
      "Whether the chatbots help: conversations, outcomes, handoffs and why, fallbacks, thumbs, ratings, time to first reply, look-ups, per day.",
  },
  {
    name: "Management: webhooks",
    description:
      "Webhook endpoints (signed per Standard Webhooks), secret rotation, the delivery log, redelivery.",
  },
];

/** Format A example bodies, by status, for the management routes. */
const managementErrors: Record<
  number,
  { description: string; code: string; message: string; details?: unknown }
> = {
  401: {
    description:
      "No credential, or one that does not verify (expired, another client or issuer, tampered), or an unknown or revoked API key.",
    code: "unauthenticated",
    message: "Sign in (a bearer access token of the console) or send an API key of scope manage",
  },
  403: {
    description:
      "The caller's role (or the API key's scope `chat`) does not allow this, or the organization's subscription is inactive (API keys).",
    code: "forbidden",
    message: "Your role in this organization does not allow this: it needs an admin",
  },
  404: {
    description:
      "Not in the organization acted on (the same answer whether it exists elsewhere or not), or the organization is not the caller's.",
    code: "chatbot_not_found",
    message: "Chatbot not found",
  },
  409: {
    description: "Exists already, changed meanwhile, or would leave the organization without an admin.",
    code: "conflict",
    message: "An organization keeps at least one admin: make someone else an admin first",
    details: { reason: "last_admin" },
  },
  422: {
    description: "Invalid input: every failing field in `details.fields` (the value sent is never echoed).",
    code: "invalid_argument",
    message: "The request has invalid fields: see details.fields",
    details: {
      fields: [{ loc: ["body", "role"], type: "literal_error", msg: "Input should be 'admin' or 'viewer'" }],
    },
  },
  429: {
    description: "Rate limit exceeded (a bucket per API key, per person per organization, per operator).",
    code: "rate_limited",
    message: "Too many requests: 300 management requests per minute are allowed. Retry in 1 second.",
    details: { limit: 300, remaining: 0, reset: "2026-11-21T12:00:30Z", retry_after: 1 },
  },
  500: { description: "Unexpected failure.", code: "internal", message: "Internal server error" },
  503: {
    description:
      "The table, the user pool or another dependency did not answer in time: retry after `Retry-After` seconds.",
    code: "service_unavailable",
    message: "Service temporarily unavailable",
  },
};

const rateLimitHeaders = {
  "X-RateLimit-Limit": {
    description:
      "Requests per minute allowed for this key. This and the other X-RateLimit-* headers are on every answer to a request with a valid key, errors included.",
    schema: { type: "integer" },
  },
  "X-RateLimit-Remaining": { description: "Whole requests left right now.", schema: { type: "integer" } },
  "X-RateLimit-Reset": {
    description: "Unix time (seconds) at which the bucket is full again.",
    schema: { type: "integer" },
  },
};
const requestIdHeader = {
  "X-Request-Id": {
    description: "Identifies this request in the service's logs.",
    schema: { type: "string" },
  },
};

const errorExamples: Record<number, { description: string; example: unknown; schema: string }> = {
  401: {
    description:
      "Missing, malformed, unknown, revoked or expired API key (the same answer for each, with `WWW-Authenticate: Bearer`); takes no token.",
    example: { detail: "Invalid API key" },
    schema: "DetailString",
  },
  403: {
    description:
      "The organization has no active subscription, or the contact belongs to another organization.",
    example: { detail: "Organization subscription is not active" },
    schema: "DetailString",
  },
  404: {
    description: "Not found in your organization.",
    example: { detail: "Conversation not found" },
    schema: "DetailString",
  },
  405: {
    description: "Known path, other method.",
    example: { detail: "Method Not Allowed" },
    schema: "DetailString",
  },
  409: {
    description:
      'Conversation closed (`"Conversation is closed"`; also when its chatbot was deleted), or the same Idempotency-Key is still being processed (`"A request with this Idempotency-Key is still being processed"`, with `Retry-After`).',
    example: { detail: "Conversation is closed" },
    schema: "DetailString",
  },
  422: {
    description:
      "The request failed validation (Pydantic / FastAPI format), or an Idempotency-Key was reused with another request.",
    example: {
      detail: [
        {
          type: "literal_error",
          loc: ["body", "attachments", 0, "type"],
          msg: "Input should be 'image'",
          input: "img",
          ctx: { expected: "'image'" },
        },
      ],
    },
    schema: "ValidationError",
  },
  429: {
    description:
      "Rate limit exceeded: a token bucket per API key, the organization's limit per minute, refilled continuously. `Retry-After` and `retry_after` are the whole seconds until one request is allowed.",
    example: {
      detail: {
        error: "Rate limit exceeded",
        message: "Too many requests: this API key allows 100 requests per minute. Retry in 1 second.",
        limit: 100,
        remaining: 0,
        reset: "2026-11-21T12:00:30Z",
        retry_after: 1,
      },
    },
    schema: "RateLimitError",
  },
  500: {
    description: "Unexpected failure.",
    example: { detail: "Internal server error" },
    schema: "DetailString",
  },
  503: {
    description:
      "A service this API depends on (its database) is down or too slow. Retry after `Retry-After` seconds; with the same Idempotency-Key, a retry never repeats work the failed request may have done.",
    example: { detail: "Service temporarily unavailable" },
    schema: "DetailString",
  },
};

const retryAfterHeader = {
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } },
};

export async function buildOpenApiDocument(): Promise<JsonSchema> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of [...routes, streamRoute]) {
    const contract = await contractOf(route);
    const parameters: unknown[] = [];
    const pathSchema = contract.path ? jsonSchema(contract.path) : undefined;
    for (const [name, schema] of Object.entries(
      (pathSchema?.properties ?? {}) as Record<string, JsonSchema>,
    )) {
      parameters.push({ name, in: "path", required: true, schema, description: schema.description });
    }
    // Typed as the route declares them (an integer with bounds and default, say): the handler turns
    // the text it receives into that type before validating (functions/http/parameters.ts).
    const querySchema = contract.query ? jsonSchema(contract.query) : undefined;
    const requiredQuery = new Set((querySchema?.required ?? []) as string[]);
    for (const [name, schema] of Object.entries(
      (querySchema?.properties ?? {}) as Record<string, JsonSchema>,
    )) {
      parameters.push({
        name,
        in: "query",
        required: requiredQuery.has(name),
        schema,
        description: schema.description,
      });
    }
    if (contract.idempotent) parameters.push({ $ref: "#/components/parameters/IdempotencyKey" });
    const management = contract.auth === "manage";
    if (management && (contract.access === "viewer" || contract.access === "admin")) {
      parameters.push({ $ref: "#/components/parameters/OrganizationId" });
    }
    const authenticated = contract.auth === "apiKey" || management;
    // A countApiKey route serves anyone; a valid key sent along gets its rate headers all the same.
    const counted = contract.auth === "countApiKey";
    const headers = authenticated || counted ? { ...requestIdHeader, ...rateLimitHeaders } : requestIdHeader;
    const success = contract.status ?? 200;
    const responses: Record<string, unknown> = {
      [success]:
        success === 204
          ? { description: "Done; no body.", headers }
          : {
              description: success === 201 ? "Created." : success === 202 ? "Accepted." : "Success.",
              headers: contract.idempotent
                ? {
                    ...headers,
                    "Idempotent-Replayed": {
                      description: "`true` when this is a replay of an earlier response.",
                      schema: { type: "string" },
                    },
                  }
                : headers,
              content: { "application/json": { schema: jsonSchema(contract.response) } },
            },
    };
    for (const status of management ? [] : contract.errors) {
      const error = errorExamples[status];
      if (!error) continue;
      responses[status] = {
        description: error.description,
        headers:
          status === 429
            ? { ...headers, ...retryAfterHeader }
            : status === 503
              ? { ...requestIdHeader, ...retryAfterHeader }
              : status === 409 && contract.idempotent
                ? { ...headers, ...retryAfterHeader }
                : status === 401
                  ? { ...headers, "WWW-Authenticate": { schema: { type: "string", const: "Bearer" } } }
                  : headers,
        content: {
          "application/json": {
            schema: { $ref: `#/components/schemas/${error.schema}` },
            example: error.example,
          },
        },
      };
    }
    for (const status of management ? contract.errors : []) {
      if (managementErrors[status])
        responses[status] = { $ref: `#/components/responses/Management${status}` };
    }
    const operation: Record<string, unknown> = {
      operationId: contract.operationId,
      summary: contract.summary,
      description: contract.description,
      tags: contract.tags,
      ...(authenticated ? {} : { security: counted ? [{}, { bearerAuth: [] }] : [] }),
      ...(management ? { "x-required-role": contract.access } : {}),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(contract.body
        ? {
            requestBody: {
              required: contract.bodyOptional !== true,
              content: { "application/json": { schema: jsonSchema(contract.body) } },
            },
          }
        : {}),
      responses,
    };
    if (route === streamRoute) {
      paths[route.path] = {
        servers: [streamServer],
        [route.method.toLowerCase()]: streamOperation(operation),
      };
      continue;
    }
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method.toLowerCase()] = operation;
  }
  const managementHeaders = { ...requestIdHeader, ...rateLimitHeaders };
  const managementResponses = Object.fromEntries(
    Object.entries(managementErrors).map(([status, error]) => [
      `Management${status}`,
      {
        description: error.description,
        headers:
          status === "429" || status === "503"
            ? {
                ...managementHeaders,
                "Retry-After": { description: "Seconds to wait.", schema: { type: "integer" } },
              }
            : status === "401"
              ? { ...managementHeaders, "WWW-Authenticate": { schema: { type: "string", const: "Bearer" } } }
              : managementHeaders,
        content: {
          "application/json": {
            schema: { $ref: "#/components/schemas/ManagementError" },
            example: { error: { code: error.code, message: error.message, details: error.details ?? {} } },
          },
        },
      },
    ]),
  );
  return {
    openapi: "3.1.0",
    info: {
      title: "Chatbot Conversation API",
      version: "1.0.0",
      license: { name: "MIT", identifier: "MIT" },
      // The maintainers, at the address this repository's commits are made under.
      contact: {
        name: "Chatbot Conversation API maintainers",
        email: "maintainers@users.noreply.a-seed-69ff2e2a.example",
      },
      description:
        'Start conversations with your organization\'s chatbots and exchange messages with them (`/api/*`; errors `{"detail": …}`), and manage the organization (`/manage/*`: the console and programs with a manage key; errors `{"error": {code, message, details}}` with the codes listed in `x-management-error-codes`). Each management operation names the role it needs in `x-required-role`.',
    },
    servers: [{ url: "/" }],
    tags,
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "`Authorization: Bearer cbk_…`: an API key (shown once, when created). On `/manage/*` also the console's Cognito access token (sign in with USER_PASSWORD_AUTH), or an API key of scope `manage`.",
        },
      },
      responses: managementResponses,
      parameters: {
        OrganizationId: {
          name: "X-Organization-Id",
          in: "header",
          required: false,
          description:
            "The organization to act on (one of `GET /manage/me`'s memberships). May be left out by a person with exactly one organization, and by API keys (which act on their own; another value is a 404).",
          schema: { type: "string", maxLength: 64 },
        },
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description:
            "1–255 printable ASCII characters, a new value per logical request, kept 24 hours per API key. One key gives at most one conversation or one turn, whatever fails: a retry replays the stored answer (`Idempotent-Replayed: true`; definite errors too), completes work a failed attempt began, or, while that attempt may still run, gets 409 with `Retry-After`. The same key with another body or on another endpoint is a 422.",
          schema: { type: "string", minLength: 1, ...idempotencyKeyRule },
        },
      },
      schemas: {
        ...(await streamEventSchemas()),
        DetailString: { type: "object", properties: { detail: { type: "string" } }, required: ["detail"] },
        ValidationError: {
          type: "object",
          properties: {
            detail: {
              anyOf: [
                { type: "string" },
                {
                  type: "array",
                  items: {
                    type: "object",
                    properties: {
                      type: { type: "string" },
                      loc: { type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] } },
                      msg: { type: "string" },
                      input: {},
                      ctx: { type: "object" },
                    },
                    required: ["type", "loc", "msg", "input"],
                  },
                },
              ],
            },
          },
          required: ["detail"],
        },
        ManagementError: {
          type: "object",
          description: "Format A: every answer of the management API that is not a success.",
          properties: {
            error: {
              type: "object",
              properties: {
                code: { type: "string", enum: [...errorCodes] },
                message: { type: "string" },
                details: {
                  type: "object",
                  description:
                    "`fields` (422: `[{loc, type, msg}]`), `reason` (409: `already_member`, `last_admin`, `changed`), or the bucket (429: `limit`, `remaining`, `reset`, `retry_after`).",
                },
              },
              required: ["code", "message", "details"],
            },
          },
          required: ["error"],
        },
        RateLimitError: {
          type: "object",
          properties: {
            detail: {
              type: "object",
              properties: {
                error: { type: "string", const: "Rate limit exceeded" },
                message: { type: "string" },
                limit: { type: "integer" },
                remaining: { type: "integer", const: 0 },
                reset: { type: "string", format: "date-time" },
                retry_after: { type: "integer", minimum: 1 },
              },
              required: ["error", "message", "limit", "remaining", "reset", "retry_after"],
            },
          },
          required: ["detail"],
        },
      },
    },
    "x-management-error-codes": Object.fromEntries(errorCodes.map((code) => [code, statusOf(code)])),
  };
}
