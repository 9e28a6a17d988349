/**
 * A chatbot's look-up tools (operator CLI and management API): add one from a template with its
 * credentials, list, show, update, remove, and test it against the real platform with sample
 * values; and the templates themselves, described for forms.
 *
 * Credentials are given once: validated against the template, sealed with the tool-credentials key
 * (KMS on AWS, a key file locally; secrets/envelope.ts) bound to the organization and tool, and
 * stored on the tool item. Nothing here ever returns them: views carry masked hints (`••••7c6b`).
 * Only `testTool` (and the message Lambda) decrypt them, to call the platform.
 */
import { randomUUID } from "node:crypto";
import { GetCommand, QueryCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod/mini";
import type { ToolOutcome } from "#functions/agent/engine";
import { versionBump, writeWithVersion } from "#functions/domain/chatbot-versions";
import { getChatbot } from "#functions/domain/chatbots";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { AppError } from "#functions/errors";
import type { EnvelopeCipher } from "#functions/secrets/envelope";
import { maskSecret } from "#functions/secrets/mask";
import {
  cancellationReasons,
  deleteExistingAction,
  putNewAction,
  type TransactAction,
} from "#functions/store/conditions";
import {
  type CountedScope,
  CountedWriteRefused,
  createCounted,
  deleteCounted,
  initialiseCounted,
} from "#functions/store/counted";
import { type Item, items, keys, prefixes, records, type ToolRecord } from "#functions/store/items";
import type { HttpGet } from "#functions/tools/http-get";
import { type ConfiguredTool, configureTool, lookupTemplates } from "#functions/tools/registry";
import { lookupReplyText } from "#functions/tools/reply-text";
import { type LookupResult, toToolOutcome } from "#functions/tools/result";
import { type TemplateKind, templateKinds } from "#functions/tools/template";

/** What operator commands need besides the table: the cipher for credentials (absent: none configured). */
export interface ToolsContext extends DomainContext {
  credentials?: EnvelopeCipher;
}

export const toolLimits = {
  perChatbot: 10,
  description: 1_000,
  requestsPerMinute: { min: 1, max: 600 },
} as const;

/** Default request caps, below each platform's own limit (from its API documentation) with room for the shop's other apps. */
export const defaultRequestsPerMinute: Record<TemplateKind, number> = {
  woocommerce: 60,
  shopify: 60,
  lightspeed: 30,
  sendcloud: 120,
  picqer: 120,
  http_get: 30,
};

/** A tool as operators see it: never its credentials, only masked hints. */
export interface ToolView {
  toolId: string;
  chatbotId: string;
  name: string;
  kind: string;
  platform: string;
  description: string;
  /** What the visitor must give before a look-up. */
  variables: { name: string; label: string }[];
  config: Record<string, unknown>;
  requestsPerMinute: number;
  credentials: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

export interface AddToolInput {
  organizationId: string;
  chatbotId: string;
  kind: string;
  /** Model-facing name; default `lookup_{kind}`. */
  name?: string;
  config: Record<string, unknown>;
  credentials: Record<string, string>;
  description?: string;
  requestsPerMinute?: number;
}

export interface UpdateToolInput {
  organizationId: string;
  chatbotId: string;
  toolId: string;
  name?: string;
  /** Merged into the current settings. */
  config?: Record<string, unknown>;
  /** Replaces all credentials. */
  credentials?: Record<string, string>;
  /** An empty text goes back to the template's description. */
  description?: string;
  requestsPerMinute?: number;
}

// ---------- the templates, for forms ----------

export interface TemplateDescription {
  kind: TemplateKind;
  platform: string;
  /** The template's settings as a JSON Schema (what the configuration form asks, with defaults). */
  config: Record<string, unknown>;
  /** The credential fields (write-only), and which of them are required. */
  credentials: { name: string; required: boolean }[];
  /** What the visitor must give before a look-up; empty when the configuration declares it (http_get). */
  variables: { name: string; label: string; description: string; kind: string }[];
  /** When the variables depend on the configuration, how. */
  variablesNote?: string;
  defaultRequestsPerMinute: number;
}

const jsonSchemaOf = (schema: z.ZodMiniType): Record<string, unknown> => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  return rest;
};

/** Sample settings under which each template names its fixed variables. */
const variableSamples: Record<TemplateKind, unknown> = {
  woocommerce: { shopUrl: "https://shop.example" },
  shopify: { shop: "shop" },
  lightspeed: { clusterUrl: "https://api.webshopapp.com" },
  sendcloud: {},
  picqer: { subdomain: "shop" },
  http_get: undefined,
};

/** Every template, described for the console's tool forms. */
export function describeTemplates(): TemplateDescription[] {
  return templateKinds.map((kind) => {
    const template = lookupTemplates[kind];
    const credentialSchema = jsonSchemaOf(template.secretSchema);
    const required = new Set((credentialSchema.required ?? []) as string[]);
    const sample = variableSamples[kind];
    let variables: TemplateDescription["variables"] = [];
    if (sample !== undefined) {
      const configured = configureTool({ id: "sample", name: "sample", kind, config: sample });
      if (configured.ok) {
        variables = configured.tool.variables.map(({ name, label, description, kind: variableKind }) => ({
          name,
          label,
          description,
          kind: variableKind,
        }));
      }
    }
    return {
      kind,
      platform: template.displayName,
      config: jsonSchemaOf(template.configSchema),
      credentials: Object.keys((credentialSchema.properties ?? {}) as Record<string, unknown>).map(
        (name) => ({
          name,
          required: required.has(name),
        }),
      ),
      variables,
      ...(kind === "http_get"
        ? { variablesNote: "Declared by the configuration's `variables` (1–5)." }
        : kind === "lightspeed"
          ? { variablesNote: "With `verifyEmail: true` the visitor also gives their e-mail address." }
          : {}),
      defaultRequestsPerMinute: defaultRequestsPerMinute[kind],
    };
  });
}

// ---------- operator CRUD ----------

export async function addTool(ctx: ToolsContext, input: AddToolInput): Promise<ToolView> {
  const kind = checkedKind(input.kind);
  await getChatbot(ctx, input.organizationId, input.chatbotId);
  const name = input.name ?? `lookup_${kind}`;
  const now = isoTime(ctx.clock());
  const toolId = randomUUID();
  const base: ToolRecord = {
    toolId,
    organizationId: input.organizationId,
    chatbotId: input.chatbotId,
    name,
    kind,
    config: input.config,
    ...(input.description?.trim() ? { description: input.description.trim() } : {}),
    requestsPerMinute: input.requestsPerMinute ?? defaultRequestsPerMinute[kind],
    createdAt: now,
    updatedAt: now,
  };
  const record = await withCredentials(ctx, checkedRecord(base), input.credentials);
  const { organizationId, chatbotId } = input;
  // One transaction: the count stays within the limit, the name is free, the tool is new, the
  // chatbot still exists and its tools version moves.
  try {
    await createCounted(ctx.db, toolsOf(ctx, organizationId, chatbotId), [
      putNewAction(ctx.db.tableName, items.toolName(organizationId, chatbotId, name, toolId)),
      putNewAction(ctx.db.tableName, items.tool(record)),
      versionBump(ctx, organizationId, chatbotId, "toolsVersion"),
    ]);
  } catch (error) {
    if (!(error instanceof CountedWriteRefused)) throw error;
    if (error.refusal.kind === "full")
      throw invalid(`A chatbot holds at most ${toolLimits.perChatbot} tools`);
    if (error.refusal.action === 0) throw duplicateName(name);
    if (error.refusal.action === 2) throw new AppError("chatbot_not_found");
    throw new AppError("conflict");
  }
  return viewOf(record);
}

/** A chatbot's tools as a counted scope: at most `perChatbot`, each name taken once, under any concurrency. */
function toolsOf(ctx: DomainContext, organizationId: string, chatbotId: string): CountedScope {
  return {
    counter: keys.toolCount(organizationId, chatbotId),
    limit: toolLimits.perChatbot,
    existing: async () => {
      const tools = await queryTools(ctx, organizationId, chatbotId, true);
      // Tools made before names were reserved get their reservations now (the first one of a name
      // keeps it, should an older race have made two).
      const reserved = new Map(tools.map((tool) => [tool.name, tool.toolId] as const).reverse());
      return {
        count: tools.length,
        alongside: [...reserved].map(([name, toolId]) =>
          items.toolName(organizationId, chatbotId, name, toolId),
        ),
      };
    },
  };
}

function duplicateName(name: string): AppError {
  return invalid(`The chatbot already has a tool named ${name}; choose another name`);
}

export async function listTools(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
): Promise<ToolView[]> {
  const found = await queryTools(ctx, organizationId, chatbotId);
  if (found.length === 0) await getChatbot(ctx, organizationId, chatbotId);
  return found.map(viewOf);
}

export async function getTool(
  ctx: DomainContext,
  input: { organizationId: string; chatbotId: string; toolId: string },
): Promise<ToolView> {
  return viewOf(await readTool(ctx, input));
}

export async function updateTool(ctx: ToolsContext, input: UpdateToolInput): Promise<ToolView> {
  const current = await readTool(ctx, input);
  const { description: _description, ...rest } = current;
  const description = input.description === undefined ? current.description : input.description.trim();
  let next: ToolRecord = checkedRecord({
    ...rest,
    ...(description ? { description } : {}),
    name: input.name ?? current.name,
    config: input.config ? { ...current.config, ...input.config } : current.config,
    requestsPerMinute: input.requestsPerMinute ?? current.requestsPerMinute,
    updatedAt: laterThan(current.updatedAt, isoTime(ctx.clock())),
  });
  if (input.credentials) next = await withCredentials(ctx, next, input.credentials);
  const { organizationId, chatbotId, toolId } = input;
  const tableName = ctx.db.tableName;
  const toolPut: TransactAction = {
    Put: {
      TableName: tableName,
      Item: items.tool(next),
      ConditionExpression: "updatedAt = :seen",
      ExpressionAttributeValues: { ":seen": current.updatedAt },
    },
  };
  if (next.name === current.name) {
    await writeWithVersion(
      ctx,
      { organizationId, chatbotId, part: "toolsVersion", actions: [toolPut] },
      () => new AppError("conflict"),
    );
    return viewOf(next);
  }
  // A new name: the tool, the new name's reservation and the old one's release in one
  // transaction (with the tools version), so two tools can never end up with one name.
  await ensureNamesReserved(ctx, organizationId, chatbotId);
  try {
    await ctx.db.client.send(
      new TransactWriteCommand({
        TransactItems: [
          putNewAction(tableName, items.toolName(organizationId, chatbotId, next.name, toolId)),
          toolPut,
          versionBump(ctx, organizationId, chatbotId, "toolsVersion"),
          ...(await releaseNameActions(ctx, organizationId, chatbotId, current.name, toolId)),
        ],
      }),
    );
  } catch (error) {
    const [name, tool] = cancellationReasons(error);
    if (name?.failed && name.code === "ConditionalCheckFailed") throw duplicateName(next.name);
    if (tool?.failed) throw new AppError("conflict");
    throw new AppError("conflict", { cause: error });
  }
  return viewOf(next);
}

/** Makes sure the chatbot's tool names are reserved (tools made before reservations existed). */
async function ensureNamesReserved(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
): Promise<void> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({
      TableName: ctx.db.tableName,
      Key: keys.toolCount(organizationId, chatbotId),
      ConsistentRead: true,
    }),
  );
  if (Item) return;
  // Creating the counter reserves every name (toolsOf); nothing else needs counting here.
  await initialiseCounted(ctx.db, toolsOf(ctx, organizationId, chatbotId));
}

/**
 * Frees a tool's name if the tool holds it: nothing when another tool does (two tools of one name
 * from before names were reserved) or nobody does. Only the holder deletes it, conditionally.
 */
async function releaseNameActions(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
  name: string,
  toolId: string,
): Promise<TransactAction[]> {
  const key = keys.toolName(organizationId, chatbotId, name);
  const { Item } = await ctx.db.client.send(
    new GetCommand({ TableName: ctx.db.tableName, Key: key, ConsistentRead: true }),
  );
  if (Item?.toolId !== toolId) return [];
  return [
    {
      Delete: {
        TableName: ctx.db.tableName,
        Key: key,
        ConditionExpression: "toolId = :toolId",
        ExpressionAttributeValues: { ":toolId": toolId },
      },
    },
  ];
}

export async function removeTool(
  ctx: DomainContext,
  input: { organizationId: string; chatbotId: string; toolId: string },
): Promise<void> {
  const { organizationId, chatbotId, toolId } = input;
  const current = await readTool(ctx, input);
  const release = await releaseNameActions(ctx, organizationId, chatbotId, current.name, toolId);
  try {
    await deleteCounted(ctx.db, toolsOf(ctx, organizationId, chatbotId), [
      deleteExistingAction(ctx.db.tableName, keys.tool(organizationId, chatbotId, toolId)),
      versionBump(ctx, organizationId, chatbotId, "toolsVersion"),
      ...release,
    ]);
  } catch (error) {
    if (!(error instanceof CountedWriteRefused)) throw error;
    // Not there any more, or its chatbot is gone (and the tool with it).
    if (error.refusal.kind === "refused" && error.refusal.action <= 1) throw new AppError("tool_not_found");
    // The tool was renamed meanwhile (its old name no longer its own): the caller may try again.
    throw new AppError("conflict");
  }
}

// ---------- testing a tool against its platform ----------

export interface TestToolInput {
  organizationId: string;
  chatbotId: string;
  toolId: string;
  /** Sample values, by variable name (e.g. a real order number and its e-mail). */
  values: Record<string, string>;
}

/** One request a test sent, as it may be shown: credentials replaced by `[redacted]`. */
export interface SentRequest {
  method: "GET";
  url: string;
  headers: Record<string, string>;
  /** The platform's answer: `ok` with its HTTP status, or the failure kind (never its body). */
  outcome: string;
  status?: number;
}

export interface ToolTestReport {
  tool: { toolId: string; name: string; platform: string };
  values: Record<string, string>;
  result: LookupResult["kind"];
  /** What the result means for the operator. */
  verdict: string;
  /** GET requests sent to the platform. */
  requests: number;
  /** What was sent, without secrets, and how the platform answered. */
  sent: SentRequest[];
  durationMs: number;
  /** Exactly what a model would be given as the tool's result. */
  modelSees: ToolOutcome;
  /** What the scripted engine would answer. */
  scriptedReply: string;
}

const TEST_TIMEOUT_MS = 10_000;

/**
 * Runs the tool once against the real platform (so an operator sees that the external API answers
 * with the expected data before a chatbot relies on it). Collect-before-call does not apply: the operator gives the values.
 */
export async function testTool(
  ctx: ToolsContext,
  input: TestToolInput,
  dependencies: { http: HttpGet },
): Promise<ToolTestReport> {
  const record = await readTool(ctx, input);
  const tool = configured(record);
  const absent = tool.variables.filter((v) => !input.values[v.name]?.trim()).map((v) => v.name);
  if (absent.length > 0) throw invalid(`Give a sample value for: ${absent.join(", ")}`);
  const secrets = await decrypted(ctx, record);
  const sent: SentRequest[] = [];
  const redact = redactorFor(secrets);
  const http: HttpGet = async (request) => {
    const response = await dependencies.http(request);
    sent.push({
      method: "GET",
      url: redact(request.url.toString()),
      headers: Object.fromEntries(
        Object.entries(request.headers ?? {}).map(([name, value]) => [
          name.toLowerCase(),
          /^(authorization|proxy-authorization|x-[a-z-]*(key|token|secret|auth)[a-z-]*)$/i.test(name)
            ? "[redacted]"
            : redact(value),
        ]),
      ),
      outcome: response.kind,
      ...(response.kind === "ok" ? { status: response.status } : {}),
    });
    return response;
  };
  const started = ctx.clock();
  const result = await tool.lookup({
    secrets,
    variables: input.values,
    signal: AbortSignal.timeout(TEST_TIMEOUT_MS),
    deadline: started + TEST_TIMEOUT_MS,
    http,
  });
  return {
    tool: { toolId: record.toolId, name: record.name, platform: tool.displayName },
    values: input.values,
    result: result.kind,
    verdict: verdictOf(result),
    requests: sent.length,
    sent,
    durationMs: ctx.clock() - started,
    modelSees: toToolOutcome(result),
    scriptedReply: lookupReplyText(result, tool),
  };
}

/**
 * Replaces every credential value in a text by `[redacted]`, in the forms a request carries it:
 * as is, URL-encoded, and inside a Basic authorization's base64 (the header is redacted anyway).
 */
function redactorFor(secrets: unknown): (text: string) => string {
  const values = Object.values(typeof secrets === "object" && secrets !== null ? secrets : {})
    .filter((value): value is string => typeof value === "string" && value.length >= 4)
    .flatMap((value) => [
      value,
      encodeURIComponent(value),
      new URLSearchParams({ v: value }).toString().slice(2),
    ])
    .sort((a, b) => b.length - a.length);
  return (text) => values.reduce((out, value) => out.split(value).join("[redacted]"), text);
}

function verdictOf(result: LookupResult): string {
  switch (result.kind) {
    case "found":
      return "The platform answered and a record matches every sample value.";
    case "not_found":
      return "The platform answered, but no record matches all sample values (wrong number, or the e-mail/postal code is not the record's).";
    case "needs_input":
      return `Sample values are not valid: ${[...result.invalid, ...result.missing].map((v) => v.name).join(", ")}.`;
    case "auth_failed":
      return "The platform refused the credentials (401/403): check them and the key's read permission.";
    case "rate_limited":
      return `The platform is rate limiting${result.retryAfterSeconds === undefined ? "" : ` (retry after ${Math.ceil(result.retryAfterSeconds)} s)`}.`;
    case "timeout":
      return "The platform did not answer in time.";
    case "unavailable":
      return `The look-up could not be made (${result.reason}).`;
  }
}

// ---------- helpers ----------

async function queryTools(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
  consistent = false,
): Promise<ToolRecord[]> {
  const found: ToolRecord[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: {
          ":pk": prefixes.chatbotPartition(organizationId, chatbotId),
          ":prefix": prefixes.tools,
        },
        ConsistentRead: consistent,
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    for (const item of page.Items ?? []) found.push(records.tool(item));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.toolId.localeCompare(b.toolId));
}

async function readTool(
  ctx: DomainContext,
  input: { organizationId: string; chatbotId: string; toolId: string },
): Promise<ToolRecord> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({
      TableName: ctx.db.tableName,
      Key: keys.tool(input.organizationId, input.chatbotId, input.toolId),
    }),
  );
  if (!Item) throw new AppError("tool_not_found");
  return records.tool(Item);
}

function checkedKind(kind: string): TemplateKind {
  const known = templateKinds.find((candidate) => candidate === kind);
  if (!known) throw invalid(`Unknown tool kind ${kind}; one of ${templateKinds.join(", ")}`);
  return known;
}

function configured(record: ToolRecord): ConfiguredTool {
  const result = configureTool({
    id: record.toolId,
    name: record.name,
    kind: checkedKind(record.kind),
    config: record.config,
    ...(record.description ? { description: record.description } : {}),
  });
  if (!result.ok) throw invalid(result.issues.join("; "));
  return result.tool;
}

/** Validates the stored settings (the template's config schema, name, limits). */
function checkedRecord(record: ToolRecord): ToolRecord {
  configured(record);
  const { min, max } = toolLimits.requestsPerMinute;
  if (
    !Number.isInteger(record.requestsPerMinute) ||
    record.requestsPerMinute < min ||
    record.requestsPerMinute > max
  ) {
    throw invalid(`requestsPerMinute must be a whole number from ${min} to ${max}`);
  }
  if ((record.description?.length ?? 0) > toolLimits.description) {
    throw invalid(`description must be at most ${toolLimits.description} characters`);
  }
  return record;
}

/** Validates credentials against the template (naming fields, never values), seals them, masks them. */
async function withCredentials(
  ctx: ToolsContext,
  record: ToolRecord,
  credentials: Record<string, string>,
): Promise<ToolRecord> {
  const template = lookupTemplates[checkedKind(record.kind)];
  const parsed = template.secretSchema.safeParse(credentials);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join(".") || "credentials"))];
    throw invalid(`Credentials for ${template.displayName} are incomplete or invalid: ${fields.join(", ")}`);
  }
  const accepted = parsed.data as Record<string, string | undefined>;
  const unknown = Object.keys(credentials).filter((field) => !(field in accepted));
  if (unknown.length > 0)
    throw invalid(`Unknown credential field(s) for ${template.displayName}: ${unknown.join(", ")}`);
  const { credentials: _old, credentialHints: _hints, ...rest } = record;
  const fields = Object.entries(accepted).filter(
    (entry): entry is [string, string] => entry[1] !== undefined,
  );
  if (fields.length === 0) {
    if (record.kind === "http_get" && record.config.auth)
      throw invalid("This tool's auth header needs a headerValue credential");
    return rest;
  }
  if (!ctx.credentials) {
    throw invalid(
      "No tool-credentials key is configured: set TOOL_CREDENTIALS_KEY_ID to the stack's ToolCredentialsKeyArn (or use the local runtime)",
    );
  }
  const envelope = await ctx.credentials.encrypt(JSON.stringify(Object.fromEntries(fields)), {
    organizationId: record.organizationId,
    toolId: record.toolId,
  });
  return {
    ...rest,
    credentials: envelope,
    credentialHints: Object.fromEntries(fields.map(([field, value]) => [field, maskSecret(value)])),
  };
}

async function decrypted(ctx: ToolsContext, record: ToolRecord): Promise<unknown> {
  if (!record.credentials) return {};
  if (!ctx.credentials)
    throw invalid("No tool-credentials key is configured to decrypt this tool's credentials");
  const json = await ctx.credentials.decrypt(record.credentials, {
    organizationId: record.organizationId,
    toolId: record.toolId,
  });
  return JSON.parse(json) as unknown;
}

function viewOf(record: ToolRecord): ToolView {
  let tool: ConfiguredTool | undefined;
  try {
    tool = configured(record);
  } catch {
    tool = undefined;
  }
  return {
    toolId: record.toolId,
    chatbotId: record.chatbotId,
    name: record.name,
    kind: record.kind,
    platform: tool?.displayName ?? record.kind,
    description: tool?.description ?? record.description ?? "",
    variables: (tool?.variables ?? []).map(({ name, label }) => ({ name, label })),
    config: record.config,
    requestsPerMinute: record.requestsPerMinute,
    credentials: { ...record.credentialHints },
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** A new `updatedAt` that differs from the old one even within the same millisecond (it versions the cache). */
function laterThan(previous: string, now: string): string {
  return now > previous ? now : isoTime(Date.parse(previous) + 1);
}

function invalid(detail: string): AppError {
  return new AppError("invalid_argument", { detail });
}
