/**
 * What integration tests share: the environment global-setup provided, a domain context on the same
 * table (seeding goes through the same domain functions as the operator CLI), tenants, and a small
 * HTTP client. Every test seeds its own organizations, so tests never see each other's data.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { inject } from "vitest";
import { createApiKey, revokeApiKey } from "#functions/domain/api-keys";
import { addKnowledgeEntry, type ChatbotSettings, createChatbot } from "#functions/domain/chatbots";
import { type DomainContext, systemClock } from "#functions/domain/context";
import { createOrganization } from "#functions/domain/organizations";
import { type AddToolInput, addTool, type ToolsContext, type ToolView } from "#functions/domain/tools";
import type { KnowledgeContext } from "#functions/knowledge/index-store";
import { createLocalEnvelopeCipher } from "#functions/secrets/envelope";
import { createDb } from "#functions/store/dynamodb";
import type { Fault, PlatformName } from "#test/fakes/platforms/index";
import type { TestEnvironment } from "#test/support/global-setup";

export const environment: TestEnvironment = inject("environment");
export const isLocal = environment.mode === "local";

let context: DomainContext | undefined;
let knowledgeContext: KnowledgeContext | undefined;
export function domain(): DomainContext {
  if (!context) {
    const client = environment.dynamoDbEndpoint
      ? new DynamoDBClient({
          endpoint: environment.dynamoDbEndpoint,
          region: environment.region,
          credentials: { accessKeyId: "local", secretAccessKey: "local" },
        })
      : new DynamoDBClient({ region: environment.region });
    context = { db: createDb(environment.tableName, client), clock: systemClock };
  }
  return context;
}

/** The domain context plus the knowledge bucket (the runtime's local S3, or the stage's bucket). */
export function knowledgeDomain(): KnowledgeContext {
  if (!knowledgeContext) {
    const bucket = environment.knowledgeBucket;
    if (!bucket) throw new Error("the test environment names no knowledge bucket (KNOWLEDGE_BUCKET)");
    const client = new S3Client({
      region: environment.region,
      ...(environment.s3Endpoint
        ? {
            endpoint: environment.s3Endpoint,
            forcePathStyle: true,
            credentials: { accessKeyId: "local", secretAccessKey: "local" },
          }
        : {}),
    });
    knowledgeContext = { ...domain(), storage: { client, bucket } };
  }
  return knowledgeContext;
}

export interface Tenant {
  organizationId: string;
  apiKey: string;
  keyId: string;
  chatbotId: string;
}

export interface TenantOptions {
  rateLimit?: number;
  subscription?: "active" | "inactive";
  chatbot?: Partial<ChatbotSettings>;
  knowledge?: { question: string; answer: string }[];
}

/** A fresh organization with one API key and one chatbot. */
export async function seedTenant(options: TenantOptions = {}): Promise<Tenant> {
  const ctx = domain();
  const organization = await createOrganization(ctx, {
    name: `Test org ${randomUUID().slice(0, 8)}`,
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
    ...(options.subscription === undefined ? {} : { subscription: options.subscription }),
  });
  const key = await createApiKey(ctx, { organizationId: organization.organizationId, name: "test" });
  const chatbot = await createChatbot(ctx, {
    organizationId: organization.organizationId,
    name: "Test assistant",
    welcomeMessage: "Welcome to the test shop!",
    fallbackReply: "Sorry, I don't know that one.",
    ...options.chatbot,
  });
  for (const entry of options.knowledge ?? []) {
    await addKnowledgeEntry(ctx, {
      organizationId: organization.organizationId,
      chatbotId: chatbot.chatbotId,
      entry: { kind: "qa", ...entry },
    });
  }
  return {
    organizationId: organization.organizationId,
    apiKey: key.apiKey,
    keyId: key.record.keyId,
    chatbotId: chatbot.chatbotId,
  };
}

export async function revoke(tenant: Tenant): Promise<void> {
  await revokeApiKey(domain(), { organizationId: tenant.organizationId, keyId: tenant.keyId });
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | undefined;
  /** Overrides the Authorization header entirely (null: send none). */
  authorization?: string | null;
  headers?: Record<string, string>;
  /** Sent as is when a string, else as JSON. */
  body?: unknown;
}

/** One HTTP request against the API under test. */
export async function call<T = unknown>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  const authorization =
    options.authorization === undefined
      ? options.key
        ? `Bearer ${options.key}`
        : undefined
      : options.authorization;
  if (authorization !== undefined && authorization !== null) headers.authorization = authorization;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(`${environment.baseUrl}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: keep the text (asserting on it shows what came back).
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

export const api = {
  startConversation: (key: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
    call<{ conversation_id: string; contact_id: string }>("POST", "/api/conversation", {
      key,
      body,
      ...(headers ? { headers } : {}),
    }),
  sendMessage: (key: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
    call<{
      conversation_id: string;
      messages: {
        message_id: string;
        role: string;
        content: string;
        created_at: string;
        sources: { source_id: string; title: string; url: string | null }[];
      }[];
    }>("POST", "/api/message", { key, body, ...(headers ? { headers } : {}) }),
  listMessages: (key: string, conversationId: string, query = "") =>
    call<{
      conversation_id: string;
      messages: {
        message_id: string;
        role: string;
        content: string;
        attachments: unknown[];
        created_at: string;
        sources: { source_id: string; title: string; url: string | null }[];
      }[];
      has_more: boolean;
      next_cursor: string | null;
    }>("GET", `/api/conversation/${conversationId}/messages${query}`, { key }),
};

/**
 * The URL at which the runtime reaches a server a test file started on loopback (a model server
 * fake): through the loopback relay, the one such address the runtime's outbound guard allows.
 */
export function reachable(url: string): string {
  if (!environment.loopbackRelayUrl) throw new Error("test files' own fakes are reachable only locally");
  const { port, pathname } = new URL(url);
  return `${environment.loopbackRelayUrl}/${port}${pathname === "/" ? "" : pathname}`;
}

/** Starts a conversation and returns its id (asserting success). */
export async function newConversation(tenant: Tenant, body: Record<string, unknown> = {}): Promise<string> {
  const response = await api.startConversation(tenant.apiKey, { chatbot_id: tenant.chatbotId, ...body });
  if (response.status !== 200)
    throw new Error(`could not start a conversation: ${response.status} ${response.text}`);
  return response.body.conversation_id;
}

/** The local runtime's log lines (JSON), for checking what was and wasn't logged. */
export function runtimeLog(): string {
  if (!environment.runtimeLogFile) throw new Error("runtime logs exist only locally");
  return readFileSync(environment.runtimeLogFile, "utf8");
}

export interface ValidationItemBody {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** The items of a 422's `detail` (empty when the body is something else). */
export function validationItems(response: { body: unknown }): ValidationItemBody[] {
  const detail = (response.body as { detail?: unknown } | null)?.detail;
  return Array.isArray(detail) ? (detail as ValidationItemBody[]) : [];
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// ---------- look-up tools (local only) ----------

/** A domain context that seals tool credentials with the runtime's key file. */
export function toolsContext(): ToolsContext {
  const keyFile = environment.toolCredentialsKeyFile;
  if (!keyFile) throw new Error("tool credentials can be seeded only locally");
  return { ...domain(), credentials: createLocalEnvelopeCipher({ keyFile }) };
}

/** Adds a look-up tool to the tenant's chatbot, as the operator CLI does. */
export function seedTool(
  tenant: Tenant,
  tool: Omit<AddToolInput, "organizationId" | "chatbotId">,
): Promise<ToolView> {
  return addTool(toolsContext(), {
    organizationId: tenant.organizationId,
    chatbotId: tenant.chatbotId,
    ...tool,
  });
}

export interface PlatformRequest {
  method: string;
  path: string;
  query: [string, string][];
}

/** The platform fakes the runtime's tools reach: what they were sent, and faults to answer with. */
export const platforms = {
  async requests(platform: PlatformName): Promise<PlatformRequest[]> {
    const response = await fetch(`${environment.platformControlUrl}/requests?platform=${platform}`);
    return (await response.json()) as PlatformRequest[];
  },
  async script(platform: PlatformName, ...faults: Fault[]): Promise<void> {
    await fetch(`${environment.platformControlUrl}/script`, {
      method: "POST",
      body: JSON.stringify({ platform, faults }),
    });
  },
};
