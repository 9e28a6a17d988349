/**
 * The route table: every public endpoint, its Lambda and what that Lambda may do. The CDK stack,
 * the local API Gateway emulator and the OpenAPI generator are all built from it, so a route
 * exists everywhere or nowhere. From here, a route's behaviour is two steps away: its handler file,
 * then the one domain function that handler calls.
 *
 * Pure data (no CDK imports): the route-miss Lambda bundles it too.
 */
import type { StackName } from "./concerns.ts";
import { streamEndpoint } from "./stream-endpoint.ts";

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
  | "kms:decrypt-tool-credentials"
  | "kms:encrypt-tool-credentials"
  /** Invite people to the user pool (AdminCreateUser) and find them by e-mail (AdminGetUser). */
  | "cognito:invite-people"
  | "sqs:send-webhook-deliveries"
  | "sqs:send-conversation-timers"
  | "kms:decrypt-webhook-secrets"
  | "kms:seal-webhook-secrets"
  /** The model API keys admins paste for their chatbots' engines: sealed when saved, opened to call the model. */
  | "kms:seal-model-keys"
  | "kms:decrypt-model-keys"
  /** Open (the session route) and seal (rotation) widgets' identity secrets. */
  | "kms:decrypt-widget-secrets"
  | "kms:seal-widget-secrets";

export interface FunctionDefinition {
  /** Construct id and function-name suffix. */
  id: string;
  /** The stack that deploys it: its concern's nested stack, or the root (lib/concerns.ts). */
  stack: StackName;
  /** Handler module, relative to the repository root; it exports `handler`. */
  entry: string;
  memoryMb: number;
  timeoutSeconds: number;
  table: readonly TableAction[];
  /** Actions on GSI1 (index reads), if any. */
  index?: readonly "dynamodb:Query"[];
  grants?: readonly ExtraGrant[];
}

/**
 * Who may call a `/manage/*` route. `signedIn`: any person or manage key (nothing organization-
 * bound); `viewer` / `admin`: that role (or higher) in the organization acted on; `operator`: a
 * platform operator. The management authorizer picks the caller's bucket by it, and the handler
 * checks it again (a unit test keeps the two declarations equal).
 */
export type ManageAccess = "signedIn" | "viewer" | "admin" | "operator";

export interface RouteDefinition extends FunctionDefinition {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** HTTP API route path (`{name}` captures one segment). */
  path: string;
  /**
   * `apiKey`: the public API's key authorizer; `countApiKey`: the same authorizer on a route that
   * serves anyone (a valid key sent along is counted and gets its rate headers, never refused);
   * `manage`: the management authorizer; `none`: no authorizer.
   */
  auth: "apiKey" | "countApiKey" | "none" | "manage";
  /** Required with `auth: "manage"`. */
  access?: ManageAccess;
  /**
   * The website widget calls it from visitors' browsers: it answers CORS preflights (an `OPTIONS`
   * route of its own) and its answers carry CORS headers, except to an API key; on an `apiKey`
   * route a visitor's access token is accepted too, for the visitor's own contact and chatbot.
   * `messages`: it takes a visitor's message (the message bucket and the daily budget).
   */
  widget?: "requests" | "messages";
}

/**
 * Idempotency records are claimed (PutItem) and taken over, handed back or completed (UpdateItem) by
 * both POST routes, completions inside the work's own TransactWriteItems (which needs the actions of
 * its parts). A record is never deleted: it expires.
 */
const idempotency = ["dynamodb:PutItem", "dynamodb:UpdateItem"] as const;

/** Reads for listings through GSI1 or GSI2: the index gives keys, a batched read the items. */
const listing = ["dynamodb:Query", "dynamodb:BatchGetItem"] as const;

/**
 * A status change (domain/conversation-states.ts): the conversation (and, for a person's reply,
 * their membership) read, then one TransactWriteItems of an UpdateItem and PutItems.
 */
const transition = ["dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem"] as const;

/** A conversation answer carries its contact: one batched read of the contacts (domain/contacts.ts). */
const contactOfConversation = ["dynamodb:BatchGetItem"] as const;

/**
 * Management routes deployed by the nested stack `stack`: the management authorizer, one Lambda
 * each, 256 MB unless it needs more.
 */
function manageRoutesIn(stack: StackName) {
  return (
    id: string,
    method: RouteDefinition["method"],
    path: string,
    access: ManageAccess,
    entry: string,
    table: readonly TableAction[],
    extra: Partial<Pick<RouteDefinition, "index" | "grants" | "memoryMb" | "timeoutSeconds">> = {},
  ): RouteDefinition => ({
    id,
    stack,
    method,
    path,
    auth: "manage",
    access,
    entry: `functions/handlers/manage/${entry}.ts`,
    memoryMb: 256,
    timeoutSeconds: 10,
    table,
    ...extra,
  });
}

/** The organization and access to it: the caller, organizations, members, API keys, usage, webhook endpoints. */
const account = manageRoutesIn("ManageAccounts");
/** Chatbots and what belongs to them: knowledge, tools, the console's conversation and contact views. */
const chatbot = manageRoutesIn("ManageChatbots");

/** The management API (`/manage/*`): what the console and programs with a manage key call. */
export const manageRoutes: readonly RouteDefinition[] = [
  account("ManageGetMe", "GET", "/manage/me", "signedIn", "get-me", ["dynamodb:GetItem", ...listing], {
    index: ["dynamodb:Query"],
  }),
  account("ManageGetOrganization", "GET", "/manage/organization", "viewer", "get-organization", [
    "dynamodb:GetItem",
  ]),
  account(
    "ManageUpdateOrganization",
    "PATCH",
    "/manage/organization",
    "admin",
    "update-organization",
    ["dynamodb:GetItem", "dynamodb:UpdateItem"],
    { index: ["dynamodb:Query"] },
  ),
  account(
    "ManageListOrganizations",
    "GET",
    "/manage/organizations",
    "operator",
    "list-organizations",
    ["dynamodb:BatchGetItem"],
    { index: ["dynamodb:Query"] },
  ),
  account(
    "ManageCreateOrganization",
    "POST",
    "/manage/organizations",
    "operator",
    "create-organization",
    ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem"],
    { grants: ["cognito:invite-people"] },
  ),
  account(
    "ManageGetOrganizationById",
    "GET",
    "/manage/organizations/{organization_id}",
    "operator",
    "get-organization-by-id",
    ["dynamodb:GetItem"],
  ),
  account(
    "ManageUpdateOrganizationById",
    "PATCH",
    "/manage/organizations/{organization_id}",
    "operator",
    "update-organization-by-id",
    ["dynamodb:GetItem", "dynamodb:UpdateItem"],
    { index: ["dynamodb:Query"] },
  ),
  account(
    "ManageListMembers",
    "GET",
    "/manage/members",
    "viewer",
    "list-members",
    ["dynamodb:BatchGetItem"],
    {
      index: ["dynamodb:Query"],
    },
  ),
  account(
    "ManageInviteMember",
    "POST",
    "/manage/members",
    "admin",
    "invite-member",
    ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"],
    { grants: ["cognito:invite-people"] },
  ),
  account("ManageUpdateMember", "PATCH", "/manage/members/{user_id}", "admin", "update-member", [
    "dynamodb:GetItem",
    "dynamodb:UpdateItem",
  ]),
  account("ManageRemoveMember", "DELETE", "/manage/members/{user_id}", "admin", "remove-member", [
    "dynamodb:GetItem",
    "dynamodb:DeleteItem",
    "dynamodb:UpdateItem",
  ]),
  account(
    "ManageListApiKeys",
    "GET",
    "/manage/api-keys",
    "admin",
    "list-api-keys",
    ["dynamodb:BatchGetItem"],
    {
      index: ["dynamodb:Query"],
    },
  ),
  account("ManageCreateApiKey", "POST", "/manage/api-keys", "admin", "create-api-key", [
    "dynamodb:GetItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:PutItem",
  ]),
  account(
    "ManageRevokeApiKey",
    "DELETE",
    "/manage/api-keys/{key_id}",
    "admin",
    "revoke-api-key",
    ["dynamodb:UpdateItem"],
    { index: ["dynamodb:Query"] },
  ),
  chatbot(
    "ManageListChatbots",
    "GET",
    "/manage/chatbots",
    "viewer",
    "list-chatbots",
    ["dynamodb:BatchGetItem"],
    {
      index: ["dynamodb:Query"],
    },
  ),
  chatbot(
    "ManageCreateChatbot",
    "POST",
    "/manage/chatbots",
    "admin",
    "create-chatbot",
    ["dynamodb:GetItem", "dynamodb:PutItem"],
    { grants: ["kms:seal-model-keys"] },
  ),
  chatbot("ManageGetChatbot", "GET", "/manage/chatbots/{chatbot_id}", "viewer", "get-chatbot", [
    "dynamodb:GetItem",
  ]),
  chatbot(
    "ManageUpdateChatbot",
    "PATCH",
    "/manage/chatbots/{chatbot_id}",
    "admin",
    "update-chatbot",
    ["dynamodb:GetItem", "dynamodb:PutItem"],
    { grants: ["kms:seal-model-keys"] },
  ),
  chatbot("ManageGetEngineOptions", "GET", "/manage/engine-options", "viewer", "get-engine-options", []),
  chatbot(
    "ManageTestEngine",
    "POST",
    "/manage/chatbots/{chatbot_id}/engine/test",
    "admin",
    "test-engine",
    ["dynamodb:GetItem"],
    {
      grants: ["bedrock:invoke-configured-models", "secrets:read-model-keys", "kms:decrypt-model-keys"],
      memoryMb: 512,
      timeoutSeconds: 25,
    },
  ),
  chatbot("ManageDeleteChatbot", "DELETE", "/manage/chatbots/{chatbot_id}", "admin", "delete-chatbot", [
    "dynamodb:Query",
    "dynamodb:BatchWriteItem",
    "dynamodb:DeleteItem",
  ]),
  chatbot(
    "ManageListKnowledge",
    "GET",
    "/manage/chatbots/{chatbot_id}/knowledge",
    "viewer",
    "list-knowledge",
    ["dynamodb:Query"],
  ),
  // Every knowledge or tool change moves the chatbot's version in the same transaction (UpdateItem).
  chatbot("ManageAddKnowledge", "POST", "/manage/chatbots/{chatbot_id}/knowledge", "admin", "add-knowledge", [
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
  ]),
  chatbot(
    "ManageUpdateKnowledge",
    "PATCH",
    "/manage/chatbots/{chatbot_id}/knowledge/{entry_id}",
    "admin",
    "update-knowledge",
    ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"],
  ),
  chatbot(
    "ManageRemoveKnowledge",
    "DELETE",
    "/manage/chatbots/{chatbot_id}/knowledge/{entry_id}",
    "admin",
    "remove-knowledge",
    ["dynamodb:DeleteItem", "dynamodb:UpdateItem"],
  ),
  chatbot(
    "ManageSearchKnowledge",
    "POST",
    "/manage/chatbots/{chatbot_id}/knowledge/search",
    "viewer",
    "search-knowledge",
    // The chatbot's item, its tools and knowledge as a turn reads them; the question embedded as a turn does.
    ["dynamodb:GetItem", "dynamodb:Query"],
    { grants: ["bedrock:invoke-configured-models", "secrets:read-model-keys"], memoryMb: 1024 },
  ),
  chatbot(
    "ManageListKnowledgeGaps",
    "GET",
    "/manage/chatbots/{chatbot_id}/knowledge-gaps",
    "viewer",
    "list-knowledge-gaps",
    ["dynamodb:GetItem", "dynamodb:Query"],
  ),
  chatbot("ManageListToolTemplates", "GET", "/manage/tool-templates", "viewer", "list-tool-templates", []),
  chatbot("ManageListTools", "GET", "/manage/chatbots/{chatbot_id}/tools", "viewer", "list-tools", [
    "dynamodb:GetItem",
    "dynamodb:Query",
  ]),
  chatbot(
    "ManageAddTool",
    "POST",
    "/manage/chatbots/{chatbot_id}/tools",
    "admin",
    "add-tool",
    ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem"],
    { grants: ["kms:encrypt-tool-credentials"] },
  ),
  chatbot("ManageGetTool", "GET", "/manage/chatbots/{chatbot_id}/tools/{tool_id}", "viewer", "get-tool", [
    "dynamodb:GetItem",
  ]),
  chatbot(
    "ManageUpdateTool",
    "PATCH",
    "/manage/chatbots/{chatbot_id}/tools/{tool_id}",
    "admin",
    "update-tool",
    ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem"],
    { grants: ["kms:encrypt-tool-credentials"] },
  ),
  chatbot(
    "ManageRemoveTool",
    "DELETE",
    "/manage/chatbots/{chatbot_id}/tools/{tool_id}",
    "admin",
    "remove-tool",
    ["dynamodb:DeleteItem", "dynamodb:UpdateItem"],
  ),
  chatbot(
    "ManageTestTool",
    "POST",
    "/manage/chatbots/{chatbot_id}/tools/{tool_id}/test",
    "admin",
    "test-tool",
    ["dynamodb:GetItem"],
    { grants: ["kms:decrypt-tool-credentials"], memoryMb: 512, timeoutSeconds: 20 },
  ),
  chatbot("ManageGetWidget", "GET", "/manage/chatbots/{chatbot_id}/widget", "viewer", "get-widget", [
    "dynamodb:GetItem",
  ]),
  chatbot(
    "ManageUpdateWidget",
    "PUT",
    "/manage/chatbots/{chatbot_id}/widget",
    "admin",
    "update-widget",
    // TransactWriteItems: a ConditionCheck on the chatbot and the widget's Put.
    ["dynamodb:GetItem", "dynamodb:ConditionCheckItem", "dynamodb:PutItem"],
  ),
  chatbot(
    "ManageRotateWidgetIdentitySecret",
    "POST",
    "/manage/chatbots/{chatbot_id}/widget/identity-secret",
    "admin",
    "rotate-widget-identity-secret",
    ["dynamodb:GetItem", "dynamodb:ConditionCheckItem", "dynamodb:PutItem"],
    { grants: ["kms:seal-widget-secrets"] },
  ),
  chatbot(
    "ManageListConversations",
    "GET",
    "/manage/conversations",
    "viewer",
    "list-conversations",
    [...listing],
    { index: ["dynamodb:Query"] },
  ),
  chatbot(
    "ManageGetConversation",
    "GET",
    "/manage/conversations/{conversation_id}",
    "viewer",
    "get-conversation",
    ["dynamodb:GetItem", "dynamodb:Query", ...contactOfConversation],
  ),
  chatbot(
    "ManageCloseConversation",
    "POST",
    "/manage/conversations/{conversation_id}/close",
    "admin",
    "close-conversation",
    [...transition, ...contactOfConversation],
  ),
  chatbot(
    "ManageTakeOverConversation",
    "POST",
    "/manage/conversations/{conversation_id}/take-over",
    "admin",
    "take-over-conversation",
    [...transition, ...contactOfConversation],
  ),
  chatbot(
    "ManageHandBackConversation",
    "POST",
    "/manage/conversations/{conversation_id}/hand-back",
    "admin",
    "hand-back-conversation",
    [...transition, ...contactOfConversation],
  ),
  chatbot(
    "ManageReplyToConversation",
    "POST",
    "/manage/conversations/{conversation_id}/reply",
    "admin",
    "reply-to-conversation",
    [...transition, ...contactOfConversation],
  ),
  account("ManageGetUsage", "GET", "/manage/usage", "viewer", "get-usage", ["dynamodb:Query"]),
  // One Query of the organization's (or a chatbot's) day counters (domain/analytics.ts).
  account("ManageGetAnalytics", "GET", "/manage/analytics", "viewer", "get-analytics", ["dynamodb:Query"]),
  chatbot("ManageListContacts", "GET", "/manage/contacts", "viewer", "list-contacts", [
    "dynamodb:Query",
    "dynamodb:BatchGetItem",
  ]),
  chatbot("ManageGetContact", "GET", "/manage/contacts/{contact_id}", "viewer", "get-contact", [
    "dynamodb:GetItem",
    ...listing,
  ]),
  account(
    "ManageListWebhookEndpoints",
    "GET",
    "/manage/webhook-endpoints",
    "viewer",
    "list-webhook-endpoints",
    ["dynamodb:Query"],
  ),
  account(
    "ManageCreateWebhookEndpoint",
    "POST",
    "/manage/webhook-endpoints",
    "admin",
    "create-webhook-endpoint",
    // Query: the organization's endpoint count (at most 20).
    ["dynamodb:Query", "dynamodb:PutItem"],
    { grants: ["kms:seal-webhook-secrets"] },
  ),
  account(
    "ManageGetWebhookEndpoint",
    "GET",
    "/manage/webhook-endpoints/{endpoint_id}",
    "viewer",
    "get-webhook-endpoint",
    ["dynamodb:GetItem"],
  ),
  account(
    "ManageUpdateWebhookEndpoint",
    "PATCH",
    "/manage/webhook-endpoints/{endpoint_id}",
    "admin",
    "update-webhook-endpoint",
    ["dynamodb:GetItem", "dynamodb:UpdateItem"],
  ),
  account(
    "ManageDeleteWebhookEndpoint",
    "DELETE",
    "/manage/webhook-endpoints/{endpoint_id}",
    "admin",
    "delete-webhook-endpoint",
    ["dynamodb:DeleteItem"],
  ),
  account(
    "ManageRotateWebhookSecret",
    "POST",
    "/manage/webhook-endpoints/{endpoint_id}/rotate-secret",
    "admin",
    "rotate-webhook-secret",
    ["dynamodb:GetItem", "dynamodb:UpdateItem"],
    { grants: ["kms:seal-webhook-secrets"] },
  ),
  account(
    "ManageListWebhookDeliveries",
    "GET",
    "/manage/webhook-endpoints/{endpoint_id}/deliveries",
    "viewer",
    "list-webhook-deliveries",
    ["dynamodb:GetItem", "dynamodb:Query"],
  ),
  account(
    "ManageRedeliverWebhookDelivery",
    "POST",
    "/manage/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/redeliver",
    "admin",
    "redeliver-webhook-delivery",
    ["dynamodb:GetItem", "dynamodb:UpdateItem"],
    { grants: ["sqs:send-webhook-deliveries"] },
  ),
];

/** The public API. */
export const publicRoutes: readonly RouteDefinition[] = [
  {
    id: "CreateConversation",
    method: "POST",
    path: "/api/conversation",
    auth: "apiKey",
    stack: "PublicApi",
    widget: "requests",
    entry: "functions/handlers/create-conversation.ts",
    memoryMb: 512,
    timeoutSeconds: 10,
    // GetItem: the contact named, read first. TransactWriteItems needs the actions of its parts:
    // ConditionCheckItem, UpdateItem, PutItem, and DeleteItem (a changed contact's old search terms).
    table: ["dynamodb:GetItem", "dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", ...idempotency],
  },
  {
    id: "SendMessage",
    method: "POST",
    path: "/api/message",
    auth: "apiKey",
    stack: "PublicApi",
    widget: "messages",
    entry: "functions/handlers/send-message.ts",
    memoryMb: 1024,
    timeoutSeconds: 29,
    // GetItem: a look-up's cached result, and the conversation of a turn an earlier attempt began;
    // UpdateItem also takes tool request tokens and keeps collected details.
    table: ["dynamodb:Query", "dynamodb:GetItem", "dynamodb:BatchWriteItem", ...idempotency],
    grants: [
      "bedrock:invoke-configured-models",
      "secrets:read-model-keys",
      "kms:decrypt-model-keys",
      "kms:decrypt-tool-credentials",
    ],
  },
  {
    id: "ListMessages",
    method: "GET",
    path: "/api/conversation/{conversation_id}/messages",
    auth: "apiKey",
    stack: "PublicApi",
    widget: "requests",
    entry: "functions/handlers/list-messages.ts",
    memoryMb: 512,
    timeoutSeconds: 10,
    table: ["dynamodb:GetItem", "dynamodb:Query"],
  },
  {
    id: "GetConversation",
    method: "GET",
    path: "/api/conversation/{conversation_id}",
    auth: "apiKey",
    stack: "PublicApi",
    widget: "requests",
    entry: "functions/handlers/get-conversation.ts",
    memoryMb: 256,
    timeoutSeconds: 10,
    table: ["dynamodb:GetItem", ...contactOfConversation],
  },
  {
    id: "ListConversations",
    method: "GET",
    path: "/api/conversations",
    auth: "apiKey",
    stack: "PublicApi",
    entry: "functions/handlers/list-conversations.ts",
    memoryMb: 256,
    timeoutSeconds: 10,
    table: [...listing],
    index: ["dynamodb:Query"],
  },
  {
    id: "HandoffConversation",
    method: "POST",
    path: "/api/conversation/{conversation_id}/handoff",
    auth: "apiKey",
    stack: "PublicApi",
    widget: "requests",
    entry: "functions/handlers/handoff-conversation.ts",
    memoryMb: 256,
    timeoutSeconds: 10,
    table: [...transition, ...contactOfConversation],
  },
  {
    id: "CloseConversation",
    method: "POST",
    path: "/api/conversation/{conversation_id}/close",
    auth: "apiKey",
    stack: "PublicApi",
    entry: "functions/handlers/close-conversation.ts",
    memoryMb: 256,
    timeoutSeconds: 10,
    table: [...transition, ...contactOfConversation],
  },
  {
    id: "SendFeedback",
    method: "POST",
    path: "/api/message/{message_id}/feedback",
    auth: "apiKey",
    widget: "requests",
    stack: "PublicApi",
    entry: "functions/handlers/send-feedback.ts",
    memoryMb: 256,
    timeoutSeconds: 10,
    // GetItem: the reply's reference, the reply and its conversation; then one transaction of two
    // UpdateItems (the reply's feedback, the conversation's counts), or an UpdateItem and a
    // ConditionCheckItem.
    table: ["dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem"],
  },
  {
    id: "RateConversation",
    method: "POST",
    path: "/api/conversation/{conversation_id}/rating",
    auth: "apiKey",
    stack: "PublicApi",
    entry: "functions/handlers/rate-conversation.ts",
    memoryMb: 256,
    timeoutSeconds: 10,
    table: ["dynamodb:GetItem", "dynamodb:UpdateItem"],
  },
  {
    id: "GetMe",
    method: "GET",
    path: "/api/me",
    auth: "apiKey",
    stack: "PublicApi",
    entry: "functions/handlers/get-me.ts",
    memoryMb: 256,
    timeoutSeconds: 10,
    table: ["dynamodb:GetItem"],
  },
  {
    id: "StartWidgetSession",
    method: "POST",
    path: "/api/widget/session",
    auth: "none",
    stack: "PublicApi",
    widget: "requests",
    entry: "functions/handlers/widget-session.ts",
    memoryMb: 512,
    timeoutSeconds: 10,
    // UpdateItem: the address's session bucket and a returning visitor; GetItem: the widget and the
    // visitor; BatchGetItem: its chatbot and organization, a contact's conversations; Query: those
    // conversations' links and the identity's contact; PutItem: a new visitor, identity or contact;
    // moving an anonymous visitor's conversations to their identity is a transaction of
    // UpdateItem, DeleteItem and PutItem.
    table: [
      "dynamodb:UpdateItem",
      "dynamodb:GetItem",
      "dynamodb:BatchGetItem",
      "dynamodb:Query",
      "dynamodb:PutItem",
      "dynamodb:DeleteItem",
    ],
    grants: ["kms:decrypt-widget-secrets"],
  },
  {
    id: "Ping",
    method: "GET",
    path: "/ping",
    auth: "countApiKey",
    stack: "PublicApi",
    entry: "functions/handlers/ping.ts",
    memoryMb: 128,
    timeoutSeconds: 5,
    table: [],
  },
  {
    id: "OpenApi",
    method: "GET",
    path: "/openapi.json",
    auth: "countApiKey",
    stack: "PublicApi",
    entry: "functions/handlers/openapi.ts",
    memoryMb: 128,
    timeoutSeconds: 5,
    table: [],
  },
];

/** Every route: the public API and the management API. */
export const routes: readonly RouteDefinition[] = [...publicRoutes, ...manageRoutes];

/**
 * POST /api/message/stream: the message turn with its reply streamed (Server-Sent Events). An HTTP
 * API cannot stream, so this function is served by its own Lambda function URL in response-streaming
 * mode (AuthType NONE), at a base URL of its own (the `StreamUrl` output; locally the runtime's
 * stream URL). With no authorizer in front, it authenticates and takes the rate-limit token itself,
 * with the authorizer's own code: hence the authorizer's actions on top of the turn's. Its timeout
 * is not held to the gateway's 30 s; the turn keeps the same budget as POST /api/message.
 */
export const streamRoute: FunctionDefinition & Pick<RouteDefinition, "method" | "path" | "auth" | "widget"> =
  {
    id: "StreamMessage",
    ...streamEndpoint,
    auth: "apiKey",
    widget: "messages",
    // The root: its function URL is the published StreamUrl, which a replaced function would change.
    stack: "Root",
    entry: "functions/handlers/stream-message.ts",
    memoryMb: 1024,
    timeoutSeconds: 30,
    table: ["dynamodb:Query", "dynamodb:GetItem", "dynamodb:BatchWriteItem", ...idempotency],
    grants: [
      "bedrock:invoke-configured-models",
      "secrets:read-model-keys",
      "kms:decrypt-model-keys",
      "kms:decrypt-tool-credentials",
    ],
  };

/**
 * Answers every request no route matched (the HTTP API's `$default` route). The authorizer runs on
 * it as on the apiKey routes, so a valid key's 404 / 405 carries its rate state and takes a token,
 * on AWS exactly as locally; the function itself serves requests without a valid key.
 */
export const routeMiss: FunctionDefinition & Pick<RouteDefinition, "auth"> = {
  id: "RouteMiss",
  auth: "apiKey",
  stack: "PublicApi",
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

/** The Lambda authorizer of every `auth: "apiKey"` and `"countApiKey"` route, and of `$default`. */
export const authorizer: FunctionDefinition = {
  id: "Authorizer",
  // The root, beside the HTTP API authorizer that points at it.
  stack: "Root",
  entry: "functions/handlers/authorizer.ts",
  memoryMb: 512,
  timeoutSeconds: 5,
  table: ["dynamodb:GetItem", "dynamodb:UpdateItem"],
};

/**
 * The Lambda authorizer of every `auth: "manage"` route: a console access token (verified against
 * the user pool's keys) or an API key of scope manage, the caller's role in the organization named,
 * and a token from the caller's bucket. Set up like the API-key authorizer (no identity source, no
 * cache), so every refusal is our own Format A answer.
 */
export const manageAuthorizer: FunctionDefinition = {
  id: "ManageAuthorizer",
  stack: "Root",
  entry: "functions/handlers/manage-authorizer.ts",
  memoryMb: 512,
  timeoutSeconds: 5,
  // GetItem and UpdateItem: the key's or the person's bucket; Query: a person's memberships.
  table: ["dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:Query"],
};

/**
 * Answers the CORS preflight (`OPTIONS`) of every path the widget calls on the HTTP API: one route per
 * path, without an authorizer (a preflight carries no credentials). The HTTP API's own CORS
 * configuration is not used: it applies to every route of the API, and no route for API keys or
 * `/manage/` may answer a browser on another origin (docs/architecture.md). The stream's function URL
 * answers its preflight in its own function, for the same reason.
 */
export const corsPreflight: FunctionDefinition = {
  id: "CorsPreflight",
  stack: "PublicApi",
  entry: "functions/handlers/cors-preflight.ts",
  memoryMb: 128,
  timeoutSeconds: 3,
  table: [],
};

/** The HTTP API paths the widget calls, each with the methods it calls them with. */
export const widgetPaths: ReadonlyMap<string, readonly string[]> = routes.reduce((paths, route) => {
  if (route.widget) paths.set(route.path, [...(paths.get(route.path) ?? []), route.method]);
  return paths;
}, new Map<string, string[]>());

/** Route keys (`POST /api/message`) a visitor's access token may call, with the bucket they draw on. */
export const widgetRouteKinds: ReadonlyMap<string, "requests" | "messages"> = new Map(
  [...routes, streamRoute]
    .filter((route) => route.widget && route.auth === "apiKey")
    .map((route) => [`${route.method} ${route.path}`, route.widget ?? "requests"]),
);

export const allFunctions: readonly FunctionDefinition[] = [
  ...routes,
  streamRoute,
  routeMiss,
  authorizer,
  manageAuthorizer,
  corsPreflight,
];

/** The management route a route key (`GET /manage/me`) names, for the management authorizer. */
export function manageRouteFor(routeKey: string): RouteDefinition | undefined {
  return manageRoutes.find((route) => `${route.method} ${route.path}` === routeKey);
}
