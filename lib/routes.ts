/**
 * The route table: every public endpoint, its Lambda and what that Lambda may do. The CDK stack,
 * the local API Gateway emulator and the OpenAPI generator are all built from it, so a route
 * exists everywhere or nowhere. From here, a route's behaviour is two steps away: its handler file,
 * then the one domain function that handler calls.
 *
 * Pure data (no CDK imports): the route-miss Lambda bundles it too.
 */

/** DynamoDB actions a function (or the operator CLI) may use on the table: least privilege, per role. */
export type TableAction =
  | "dynamodb:GetItem"
  | "dynamodb:BatchGetItem"
  | "dynamodb:PutItem"
  | "dynamodb:UpdateItem"
  | "dynamodb:DeleteItem"
  | "dynamodb:Query"
  | "dynamodb:BatchWriteItem"
  | "dynamodb:ConditionCheckItem";

/** Other AWS permissions a function may need, resolved by the stack from its configuration. */
export type ExtraGrant =
  | "bedrock:invoke-configured-models"
  | "secrets:read-model-keys"
  | "kms:decrypt-tool-credentials";

export interface FunctionDefinition {
  /** Construct id and function-name suffix. */
  id: string;
  /** Handler module, relative to the repository root; it exports `handler`. */
  entry: string;
  memoryMb: number;
  timeoutSeconds: number;
  table: readonly TableAction[];
  /** Actions on GSI1 (index reads), if any. */
  index?: readonly "dynamodb:Query"[];
  grants?: readonly ExtraGrant[];
}

export interface RouteDefinition extends FunctionDefinition {
  method: "GET" | "POST";
  /** HTTP API route path (`{name}` captures one segment). */
  path: string;
  auth: "apiKey" | "none";
}

/**
 * Idempotency records are claimed (PutItem) and taken over, handed back or completed (UpdateItem) by
 * both POST routes, completions inside the work's own TransactWriteItems (which needs the actions of
 * its parts). A record is never deleted: it expires.
 */
const idempotency = ["dynamodb:PutItem", "dynamodb:UpdateItem"] as const;

export const routes: readonly RouteDefinition[] = [
  {
    id: "CreateConversation",
    method: "POST",
    path: "/api/conversation",
    auth: "apiKey",
    entry: "functions/handlers/create-conversation.ts",
    memoryMb: 512,
    timeoutSeconds: 10,
    // TransactWriteItems needs the actions of its parts: ConditionCheckItem, UpdateItem, PutItem.
    table: ["dynamodb:ConditionCheckItem", ...idempotency],
  },
  {
    id: "SendMessage",
    method: "POST",
    path: "/api/message",
    auth: "apiKey",
    entry: "functions/handlers/send-message.ts",
    memoryMb: 1024,
    timeoutSeconds: 29,
    // GetItem: a look-up's cached result, and the conversation of a turn an earlier attempt began;
    // UpdateItem also takes tool request tokens and keeps collected details.
    table: ["dynamodb:Query", "dynamodb:GetItem", "dynamodb:BatchWriteItem", ...idempotency],
    grants: ["bedrock:invoke-configured-models", "secrets:read-model-keys", "kms:decrypt-tool-credentials"],
  },
  {
    id: "ListMessages",
    method: "GET",
    path: "/api/conversation/{conversation_id}/messages",
    auth: "apiKey",
    entry: "functions/handlers/list-messages.ts",
    memoryMb: 512,
    timeoutSeconds: 10,
    table: ["dynamodb:GetItem", "dynamodb:Query"],
  },
  {
    id: "GetMe",
    method: "GET",
    path: "/api/me",
    auth: "apiKey",
    entry: "functions/handlers/get-me.ts",
    memoryMb: 256,
    timeoutSeconds: 10,
    table: ["dynamodb:GetItem"],
  },
  {
    id: "Ping",
    method: "GET",
    path: "/ping",
    auth: "none",
    entry: "functions/handlers/ping.ts",
    memoryMb: 128,
    timeoutSeconds: 5,
    table: [],
  },
  {
    id: "OpenApi",
    method: "GET",
    path: "/openapi.json",
    auth: "none",
    entry: "functions/handlers/openapi.ts",
    memoryMb: 128,
    timeoutSeconds: 5,
    table: [],
  },
];

/**
 * POST /api/message/stream: the message turn with its reply streamed (Server-Sent Events). An HTTP
 * API cannot stream, so this function is served by its own Lambda function URL in response-streaming
 * mode (AuthType NONE), at a base URL of its own (the `StreamUrl` output; locally the runtime's
 * stream URL). With no authorizer in front, it authenticates and takes the rate-limit token itself,
 * with the authorizer's own code: hence the authorizer's actions on top of the turn's. Its timeout
 * is not held to the gateway's 30 s; the turn keeps the same budget as POST /api/message.
 */
export const streamRoute: FunctionDefinition & Pick<RouteDefinition, "method" | "path" | "auth"> = {
  id: "StreamMessage",
  method: "POST",
  path: "/api/message/stream",
  auth: "apiKey",
  entry: "functions/handlers/stream-message.ts",
  memoryMb: 1024,
  timeoutSeconds: 30,
  table: ["dynamodb:Query", "dynamodb:GetItem", "dynamodb:BatchWriteItem", ...idempotency],
  grants: ["bedrock:invoke-configured-models", "secrets:read-model-keys", "kms:decrypt-tool-credentials"],
};

/**
 * Answers every request no route matched (the HTTP API's `$default` route). The authorizer runs on
 * it as on the apiKey routes, so a valid key's 404 / 405 carries its rate state and takes a token,
 * on AWS exactly as locally; the function itself serves requests without a valid key.
 */
export const routeMiss: FunctionDefinition & Pick<RouteDefinition, "auth"> = {
  id: "RouteMiss",
  auth: "apiKey",
  entry: "functions/handlers/route-miss.ts",
  memoryMb: 128,
  timeoutSeconds: 5,
  table: [],
};

/**
 * How API Gateway calls the authorizer (docs/architecture.md explains why): simple responses, no
 * identity source (so requests without a key still reach our code and its exact 401 body) and no
 * result cache (every request takes a token from its bucket).
 */
export const authorizerSettings = {
  identitySource: [] as readonly string[],
  resultsCacheTtlSeconds: 0,
} as const;

/** The Lambda authorizer of every `auth: "apiKey"` route. */
export const authorizer: FunctionDefinition = {
  id: "Authorizer",
  entry: "functions/handlers/authorizer.ts",
  memoryMb: 512,
  timeoutSeconds: 5,
  table: ["dynamodb:GetItem", "dynamodb:UpdateItem"],
};

export const allFunctions: readonly FunctionDefinition[] = [...routes, streamRoute, routeMiss, authorizer];
