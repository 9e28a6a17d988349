/**
 * Chatbots and their knowledge entries (operator side), and what a conversation turn reads of its
 * chatbot (`loadChatbotBundle`): its item, with its tools and knowledge kept per instance by version.
 */
import { randomUUID } from "node:crypto";
import { BatchWriteCommand, GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { versionBump, writeWithVersion } from "#functions/domain/chatbot-versions";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { getOrganization } from "#functions/domain/organizations";
import { AppError } from "#functions/errors";
import { readEntryKnowledge } from "#functions/knowledge/entry-passages";
import type { LoadedKnowledge } from "#functions/knowledge/retriever";
import type { EnvelopeCipher } from "#functions/secrets/envelope";
import { maskSecret } from "#functions/secrets/mask";
import {
  deleteExisting,
  deleteExistingAction,
  putNew,
  putNewAction,
  refusedItem,
} from "#functions/store/conditions";
import {
  type CountedScope,
  CountedWriteRefused,
  createCounted,
  deleteCounted,
} from "#functions/store/counted";
import { batchGetItems, gsi1Keys } from "#functions/store/index-reads";
import {
  type ChatbotRecord,
  type EngineConfig,
  gsi1,
  type Item,
  items,
  type KnowledgeEntryRecord,
  keys,
  prefixes,
  records,
} from "#functions/store/items";

/** Documented defaults (README "Chatbot settings"). */
export const chatbotDefaults = {
  instructions: "",
  engine: { kind: "scripted" } as EngineConfig,
  temperature: 0.3,
  maxOutputTokens: 800,
  historyWindow: 20,
  welcomeMessage: "Hi! How can I help you today?",
  fallbackReply: "Sorry, I can't help with that right now. Could you rephrase, or try again in a moment?",
} as const;

export const chatbotLimits = {
  name: 120,
  instructions: 8_000,
  welcomeMessage: 2_000,
  fallbackReply: 2_000,
  maxOutputTokens: { min: 16, max: 8_192 },
  temperature: { min: 0, max: 1 },
  historyWindow: { min: 0, max: 50 },
  knowledgeText: 8_000,
  knowledgeEntries: 500,
  handoffMessage: 2_000,
  handoffPhrase: 200,
  handoffPhrases: 50,
  /** One minute to 30 days. */
  inactivityTimeoutMinutes: { min: 1, max: 43_200 },
} as const;

export type ChatbotSettings = Omit<ChatbotRecord, "chatbotId" | "organizationId" | "createdAt" | "updatedAt">;

/** What changing chatbots needs besides the table: the cipher sealing model keys (absent: none configured). */
export interface ChatbotsContext extends DomainContext {
  modelKeys?: EnvelopeCipher;
}

/**
 * A model API key an admin pasted for an openai engine: sealed (bound to the organization and the
 * chatbot), kept with a masked hint; the plaintext goes nowhere else.
 */
async function withModelKey(
  ctx: ChatbotsContext,
  record: ChatbotRecord,
  modelKey: string | undefined,
): Promise<ChatbotRecord> {
  if (modelKey === undefined) return record;
  if (record.engine.kind !== "openai") {
    throw new AppError("invalid_argument", { detail: "A model API key goes with an openai engine" });
  }
  if (!ctx.modelKeys) {
    throw new AppError("invalid_argument", { detail: "This stage has no key to seal model API keys with" });
  }
  const { apiKeySecret: _secret, ...engine } = record.engine;
  const sealed = await ctx.modelKeys.encrypt(modelKey, {
    organizationId: record.organizationId,
    chatbotId: record.chatbotId,
  });
  return { ...record, engine: { ...engine, apiKey: sealed, apiKeyHint: maskSecret(modelKey) } };
}

export async function createChatbot(
  ctx: ChatbotsContext,
  input: { organizationId: string; chatbotId?: string; modelKey?: string } & Partial<ChatbotSettings> & {
      name: string;
    },
): Promise<ChatbotRecord> {
  const now = isoTime(ctx.clock());
  const { organizationId, chatbotId, modelKey, ...settings } = input;
  const checked: ChatbotRecord = checkedSettings({
    ...chatbotDefaults,
    ...settings,
    chatbotId: chatbotId ?? randomUUID(),
    organizationId,
    createdAt: now,
    updatedAt: now,
  });
  const record = await withModelKey(ctx, checked, modelKey);
  await getOrganization(ctx, organizationId);
  await putNew(ctx.db, items.chatbot(record), () => new AppError("conflict"));
  return record;
}

export async function getChatbot(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
): Promise<ChatbotRecord> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({ TableName: ctx.db.tableName, Key: keys.chatbot(organizationId, chatbotId) }),
  );
  if (!Item) throw new AppError("chatbot_not_found");
  return records.chatbot(Item);
}

/** Changes a chatbot's settings; `modelKey` (an openai engine's key, plaintext) is sealed and stored. */
export async function updateChatbot(
  ctx: ChatbotsContext,
  organizationId: string,
  chatbotId: string,
  changes: Partial<ChatbotSettings>,
  modelKey?: string,
): Promise<ChatbotRecord> {
  // The item also carries the knowledge and tools versions, which their changes bump at any time:
  // the write keeps the ones it read, so it is refused if one moved, and then made again on a fresh read.
  for (let attempt = 1; ; attempt++) {
    const current = await getChatbot(ctx, organizationId, chatbotId);
    const next = await withModelKey(
      ctx,
      checkedSettings({ ...current, ...changes, updatedAt: isoTime(ctx.clock()) }),
      modelKey,
    );
    const kept = (["knowledgeVersion", "toolsVersion"] as const).map((part) =>
      current[part] === undefined
        ? { condition: `attribute_not_exists(${part})`, values: {} }
        : { condition: `${part} = :${part}`, values: { [`:${part}`]: current[part] } },
    );
    try {
      await ctx.db.client.send(
        new PutCommand({
          TableName: ctx.db.tableName,
          Item: items.chatbot(next),
          ConditionExpression: ["updatedAt = :seen", ...kept.map((part) => part.condition)].join(" AND "),
          ExpressionAttributeValues: {
            ":seen": current.updatedAt,
            ...Object.assign({}, ...kept.map((part) => part.values)),
          },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      return next;
    } catch (error) {
      const stored = refusedItem(error);
      const onlyVersionMoved = stored !== undefined && stored.updatedAt === current.updatedAt;
      if (!onlyVersionMoved || attempt >= 3) throw new AppError("conflict");
    }
  }
}

export async function listChatbots(ctx: DomainContext, organizationId: string): Promise<ChatbotRecord[]> {
  const chatbotKeys = await gsi1Keys(ctx.db, gsi1.organizationPartition(organizationId), {
    beginsWith: gsi1.chatbotsPrefix,
  });
  const found = (await batchGetItems(ctx.db, chatbotKeys)).map(records.chatbot);
  return found.sort(
    (a, b) => a.createdAt.localeCompare(b.createdAt) || a.chatbotId.localeCompare(b.chatbotId),
  );
}

/**
 * Deletes a chatbot with its knowledge and tools (their credentials go with them). Its
 * conversations stay readable; a message to one of them is answered 409, as for a closed
 * conversation.
 */
export async function deleteChatbot(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
): Promise<void> {
  await deleteExisting(
    ctx.db,
    keys.chatbot(organizationId, chatbotId),
    () => new AppError("chatbot_not_found"),
  );
  const leftovers: Item[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk",
        ExpressionAttributeValues: { ":pk": prefixes.chatbotPartition(organizationId, chatbotId) },
        ProjectionExpression: "PK, SK",
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    leftovers.push(...(page.Items ?? []));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  // The widget's settings are a global item (by chatbot id): they go with the chatbot.
  leftovers.push({ ...keys.widget(chatbotId) });
  let pending: Item[] = leftovers.map((key) => ({ DeleteRequest: { Key: { PK: key.PK, SK: key.SK } } }));
  while (pending.length > 0) {
    const result = await ctx.db.client.send(
      new BatchWriteCommand({ RequestItems: { [ctx.db.tableName]: pending.slice(0, 25) } }),
    );
    pending = [
      ...((result.UnprocessedItems?.[ctx.db.tableName] as Item[] | undefined) ?? []),
      ...pending.slice(25),
    ];
  }
}

/**
 * What a turn needs about its chatbot: its item (settings and the versions of what instances keep),
 * its tools, and, read beside them by an instance that holds no knowledge index for it yet, its
 * knowledge entries. A turn's reads do not grow with the chatbot: one `GetItem` of its item (whose
 * size the settings' limits bound), the tools from this instance's memory while `toolsVersion` is
 * the one kept (else one `Query` of the tools' range, bounded by the tool limit), the knowledge from
 * the retriever's memory while `knowledgeVersion` is the one indexed (knowledge/retriever.ts).
 */
export interface ChatbotBundle {
  chatbot: ChatbotRecord;
  /** Raw tool items; tools/ maps them (kept opaque here so this module doesn't depend on tools/). */
  tools: Item[];
  /** The knowledge entries, when asked for (`readKnowledge`), as passages of the version read. */
  knowledge?: LoadedKnowledge;
}

/** Tools kept per instance, by chatbot: the version they were read at. */
const toolsKept = new Map<string, { version: number; tools: Item[]; verified: boolean; readAt: number }>();
const TOOLS_KEPT = 200;
/** A speculative read (beside the chatbot's item, unordered with it) is read again after this long. */
const UNVERIFIED_FOR_MS = 30_000;

export async function loadChatbotBundle(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
  options: { readKnowledge?: boolean } = {},
): Promise<ChatbotBundle | undefined> {
  const cacheKey = `${organizationId}/${chatbotId}`;
  const kept = toolsKept.get(cacheKey);
  const readTools = () => queryToolItems(ctx, organizationId, chatbotId);
  // Nothing kept: the tools (and knowledge) are read beside the item, so a cold instance's turn
  // keeps its round trips. Their version is then the item's, though the reads are not ordered; such
  // a read is checked again a little later (below), off the turn's path.
  const [item, speculativeTools, entries] = await Promise.all([
    ctx.db.client.send(
      new GetCommand({ TableName: ctx.db.tableName, Key: keys.chatbot(organizationId, chatbotId) }),
    ),
    kept ? undefined : readTools(),
    options.readKnowledge ? readEntryKnowledge(ctx, organizationId, chatbotId, 0) : undefined,
  ]);
  if (!item.Item) {
    toolsKept.delete(cacheKey);
    return undefined;
  }
  const chatbot = records.chatbot(item.Item);
  const version = chatbot.toolsVersion ?? 0;
  let tools: Item[];
  if (speculativeTools) {
    tools = speculativeTools;
    keepTools(cacheKey, { version, tools, verified: false, readAt: ctx.clock() });
  } else if (kept && kept.version === version) {
    tools = kept.tools;
    if (!kept.verified && ctx.clock() - kept.readAt > UNVERIFIED_FOR_MS) {
      kept.verified = true;
      void readTools()
        .then((fresh) => keepTools(cacheKey, { version, tools: fresh, verified: true, readAt: ctx.clock() }))
        .catch(() => {
          kept.verified = false;
        });
    }
  } else {
    // The tools changed since this instance read them: read them again (a rare extra round trip).
    tools = await readTools();
    keepTools(cacheKey, { version, tools, verified: true, readAt: ctx.clock() });
  }
  return {
    chatbot,
    tools,
    ...(entries ? { knowledge: { ...entries, version: chatbot.knowledgeVersion ?? 0 } } : {}),
  };
}

function keepTools(
  key: string,
  value: { version: number; tools: Item[]; verified: boolean; readAt: number },
): void {
  toolsKept.delete(key);
  toolsKept.set(key, value);
  while (toolsKept.size > TOOLS_KEPT) {
    const oldest = toolsKept.keys().next().value;
    if (oldest === undefined) break;
    toolsKept.delete(oldest);
  }
}

async function queryToolItems(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
): Promise<Item[]> {
  const tools: Item[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :tools)",
        ExpressionAttributeValues: {
          ":pk": prefixes.chatbotPartition(organizationId, chatbotId),
          ":tools": prefixes.tools,
        },
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    tools.push(...(page.Items ?? []));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return tools;
}

// ---------- knowledge entries ----------

export type KnowledgeEntryInput =
  | { kind: "qa"; question: string; answer: string }
  | { kind: "snippet"; title?: string; text: string };

export async function addKnowledgeEntry(
  ctx: DomainContext,
  input: { organizationId: string; chatbotId: string; entry: KnowledgeEntryInput },
): Promise<KnowledgeEntryRecord> {
  checkKnowledgeTexts(input.entry);
  const { organizationId, chatbotId } = input;
  const record: KnowledgeEntryRecord = {
    ...input.entry,
    entryId: randomUUID(),
    createdAt: isoTime(ctx.clock()),
  };
  // One transaction: the count stays within the limit, the entry is new, the chatbot exists and its
  // knowledge version moves.
  try {
    await createCounted(ctx.db, knowledgeEntriesOf(ctx, organizationId, chatbotId), [
      putNewAction(ctx.db.tableName, items.knowledgeEntry(organizationId, chatbotId, record)),
      versionBump(ctx, organizationId, chatbotId, "knowledgeVersion"),
    ]);
  } catch (error) {
    if (!(error instanceof CountedWriteRefused)) throw error;
    if (error.refusal.kind === "full") {
      throw new AppError("invalid_argument", {
        detail: `A chatbot holds at most ${chatbotLimits.knowledgeEntries} entries`,
      });
    }
    throw error.refusal.action === 1 ? new AppError("chatbot_not_found") : new AppError("conflict");
  }
  return record;
}

/** A chatbot's knowledge entries as a counted scope: at most `knowledgeEntries`, under any concurrency. */
function knowledgeEntriesOf(ctx: DomainContext, organizationId: string, chatbotId: string): CountedScope {
  return {
    counter: keys.knowledgeEntryCount(organizationId, chatbotId),
    limit: chatbotLimits.knowledgeEntries,
    existing: async () => {
      const found = await ctx.db.client.send(
        new QueryCommand({
          TableName: ctx.db.tableName,
          KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
          ExpressionAttributeValues: {
            ":pk": prefixes.chatbotPartition(organizationId, chatbotId),
            ":prefix": prefixes.knowledge,
          },
          Select: "COUNT",
          ConsistentRead: true,
        }),
      );
      return { count: found.Count ?? 0 };
    },
  };
}

export async function listKnowledgeEntries(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
): Promise<KnowledgeEntryRecord[]> {
  const found: KnowledgeEntryRecord[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :knowledge)",
        ExpressionAttributeValues: {
          ":pk": prefixes.chatbotPartition(organizationId, chatbotId),
          ":knowledge": prefixes.knowledge,
        },
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    found.push(...(page.Items ?? []).map(records.knowledgeEntry));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  if (found.length === 0) await getChatbot(ctx, organizationId, chatbotId);
  return found;
}

/** Replaces an entry's texts (its kind stays); the entry must exist. */
export async function updateKnowledgeEntry(
  ctx: DomainContext,
  input: { organizationId: string; chatbotId: string; entryId: string; entry: KnowledgeEntryInput },
): Promise<KnowledgeEntryRecord> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({
      TableName: ctx.db.tableName,
      Key: keys.knowledgeEntry(input.organizationId, input.chatbotId, input.entryId),
    }),
  );
  if (!Item) throw new AppError("knowledge_entry_not_found");
  const current = records.knowledgeEntry(Item);
  checkKnowledgeTexts(input.entry);
  const record: KnowledgeEntryRecord = {
    ...input.entry,
    entryId: current.entryId,
    createdAt: current.createdAt,
  };
  await writeWithVersion(
    ctx,
    {
      organizationId: input.organizationId,
      chatbotId: input.chatbotId,
      part: "knowledgeVersion",
      actions: [
        {
          Put: {
            TableName: ctx.db.tableName,
            Item: items.knowledgeEntry(input.organizationId, input.chatbotId, record),
            ConditionExpression: "attribute_exists(PK)",
          },
        },
      ],
    },
    () => new AppError("knowledge_entry_not_found"),
  );
  return record;
}

function checkKnowledgeTexts(entry: KnowledgeEntryInput): void {
  const texts = entry.kind === "qa" ? [entry.question, entry.answer] : [entry.text];
  if (texts.some((text) => text.trim() === "" || text.length > chatbotLimits.knowledgeText)) {
    throw new AppError("invalid_argument", {
      detail: `Knowledge texts must be 1 to ${chatbotLimits.knowledgeText} characters`,
    });
  }
}

export async function removeKnowledgeEntry(
  ctx: DomainContext,
  input: { organizationId: string; chatbotId: string; entryId: string },
): Promise<void> {
  const { organizationId, chatbotId, entryId } = input;
  try {
    await deleteCounted(ctx.db, knowledgeEntriesOf(ctx, organizationId, chatbotId), [
      deleteExistingAction(ctx.db.tableName, keys.knowledgeEntry(organizationId, chatbotId, entryId)),
      versionBump(ctx, organizationId, chatbotId, "knowledgeVersion"),
    ]);
  } catch (error) {
    // An entry that is not there, or of a chatbot that is gone, is not found.
    if (error instanceof CountedWriteRefused) throw new AppError("knowledge_entry_not_found");
    throw error;
  }
}

// ---------- checks ----------

function checkedSettings(record: ChatbotRecord): ChatbotRecord {
  const problems: string[] = [];
  const text = (field: keyof typeof chatbotLimits, value: string, required: boolean) => {
    const max = chatbotLimits[field] as number;
    if (value.length > max) problems.push(`${field} must be at most ${max} characters`);
    if (required && value.trim() === "") problems.push(`${field} must not be empty`);
  };
  const range = (field: string, value: number, bounds: { min: number; max: number }) => {
    if (!Number.isFinite(value) || value < bounds.min || value > bounds.max) {
      problems.push(`${field} must be between ${bounds.min} and ${bounds.max}`);
    }
  };
  text("name", record.name, true);
  text("instructions", record.instructions, false);
  text("welcomeMessage", record.welcomeMessage, true);
  text("fallbackReply", record.fallbackReply, true);
  range("temperature", record.temperature, chatbotLimits.temperature);
  range("maxOutputTokens", record.maxOutputTokens, chatbotLimits.maxOutputTokens);
  range("historyWindow", record.historyWindow, chatbotLimits.historyWindow);
  if (!Number.isInteger(record.maxOutputTokens) || !Number.isInteger(record.historyWindow)) {
    problems.push("maxOutputTokens and historyWindow must be whole numbers");
  }
  if (record.handoff) {
    text("handoffMessage", record.handoff.message, true);
    if (record.handoff.phrases.length > chatbotLimits.handoffPhrases) {
      problems.push(`handoff phrases must be at most ${chatbotLimits.handoffPhrases}`);
    }
    for (const phrase of record.handoff.phrases) text("handoffPhrase", phrase, true);
  }
  if (record.inactivityTimeoutMinutes !== undefined) {
    range(
      "inactivityTimeoutMinutes",
      record.inactivityTimeoutMinutes,
      chatbotLimits.inactivityTimeoutMinutes,
    );
    if (!Number.isInteger(record.inactivityTimeoutMinutes)) {
      problems.push("inactivityTimeoutMinutes must be a whole number");
    }
  }
  problems.push(...engineProblems(record.engine));
  if (problems.length > 0) throw new AppError("invalid_argument", { detail: problems.join("; ") });
  return record;
}

function engineProblems(engine: EngineConfig): string[] {
  switch (engine.kind) {
    case "scripted":
      return [];
    case "bedrock":
      return engine.modelId.trim() === "" ? ["bedrock engine needs a model id"] : [];
    case "openai": {
      const problems: string[] = [];
      try {
        const url = new URL(engine.baseUrl);
        if (url.protocol !== "https:" && url.protocol !== "http:")
          problems.push("openai base URL must be http(s)");
      } catch {
        problems.push("openai base URL is not a URL");
      }
      if (engine.model.trim() === "") problems.push("openai engine needs a model");
      if (engine.apiKeySecret !== undefined && engine.apiKeySecret.trim() === "")
        problems.push("openai API key secret name must not be empty (leave it out for servers without keys)");
      if (engine.apiKeySecret !== undefined && engine.apiKey !== undefined)
        problems.push("an openai engine has a pasted API key or a key secret, not both");
      return problems;
    }
  }
}
