/**
 * The one module that knows the single table's keys and item shapes. Key builders are written out
 * literally so docs/data-model.md can be read side by side with them; every read maps an item to a
 * typed record here, every write builds its item here.
 *
 * Tenant isolation is structural: every key of an organization's data (chatbots, conversations,
 * messages) starts with `ORG#{organizationId}#`, so a read built for one organization cannot
 * address another's items. Contacts and API keys are the two global look-ups, and both carry the
 * organization id that the caller checks.
 */
import { tableSchema } from "#lib/table-schema";

export type Item = Record<string, unknown>;

export interface Key {
  PK: string;
  SK: string;
}

// ---------- keys ----------

export const keys = {
  organization: (organizationId: string): Key => ({ PK: `ORG#${organizationId}`, SK: "ORG" }),
  apiKey: (keyHash: string): Key => ({ PK: `APIKEY#${keyHash}`, SK: "APIKEY" }),
  chatbot: (organizationId: string, chatbotId: string): Key => ({
    PK: `ORG#${organizationId}#BOT#${chatbotId}`,
    SK: "BOT",
  }),
  knowledgeEntry: (organizationId: string, chatbotId: string, entryId: string): Key => ({
    PK: `ORG#${organizationId}#BOT#${chatbotId}`,
    SK: `KNOW#${entryId}`,
  }),
  tool: (organizationId: string, chatbotId: string, toolId: string): Key => ({
    PK: `ORG#${organizationId}#BOT#${chatbotId}`,
    SK: `TOOL#${toolId}`,
  }),
  /** A tool's request token bucket: its own partition, so turns never contend on the chatbot's. */
  toolBucket: (organizationId: string, chatbotId: string, toolId: string): Key => ({
    PK: `ORG#${organizationId}#BOT#${chatbotId}#TOOL#${toolId}`,
    SK: "BUCKET",
  }),
  contact: (contactId: string): Key => ({ PK: `CONTACT#${contactId}`, SK: "CONTACT" }),
  conversation: (organizationId: string, conversationId: string): Key => ({
    PK: `ORG#${organizationId}#CONV#${conversationId}`,
    SK: "CONV",
  }),
  message: (organizationId: string, conversationId: string, turn: number, index: number): Key => ({
    PK: `ORG#${organizationId}#CONV#${conversationId}`,
    SK: `MSG#${messageSortKey(turn, index)}`,
  }),
  /** A look-up's result, cached in its conversation; `lookupHash` hashes tool, version and values. */
  toolCache: (organizationId: string, conversationId: string, lookupHash: string): Key => ({
    PK: `ORG#${organizationId}#CONV#${conversationId}`,
    SK: `TOOLCACHE#${lookupHash}`,
  }),
  idempotencyRecord: (keyId: string, idempotencyKeyHash: string): Key => ({
    PK: `IDEM#${keyId}#${idempotencyKeyHash}`,
    SK: "IDEM",
  }),
} as const;

/** Partition and sort-key prefixes used by Queries; each prefix ends in its separator. */
export const prefixes = {
  chatbotPartition: (organizationId: string, chatbotId: string) => `ORG#${organizationId}#BOT#${chatbotId}`,
  conversationPartition: (organizationId: string, conversationId: string) =>
    `ORG#${organizationId}#CONV#${conversationId}`,
  messages: "MSG#",
  knowledge: "KNOW#",
  tools: "TOOL#",
} as const;

/** GSI1: an organization's API keys and chatbots, and the list of organizations. */
export const gsi1 = {
  name: tableSchema.globalSecondaryIndexes[0].indexName,
  organizationsPartition: "ORGS",
  organizationSortKey: (organizationId: string) => `ORG#${organizationId}`,
  organizationPartition: (organizationId: string) => `ORG#${organizationId}`,
  apiKeySortKey: (keyId: string) => `APIKEY#${keyId}`,
  apiKeysPrefix: "APIKEY#",
  chatbotSortKey: (chatbotId: string) => `BOT#${chatbotId}`,
  chatbotsPrefix: "BOT#",
} as const;

/** `0000000042#01`: turn number then the message's place in the turn (00 = the visitor's). */
export function messageSortKey(turn: number, index: number): string {
  return `${String(turn).padStart(10, "0")}#${String(index).padStart(2, "0")}`;
}

// ---------- records ----------

export type SubscriptionStatus = "active" | "inactive";

export interface OrganizationRecord {
  organizationId: string;
  name: string;
  subscription: SubscriptionStatus;
  /** Requests per minute per API key (token-bucket capacity). */
  rateLimit: number;
  /** Bumped on every change; API keys copy the fields they need and are re-synced in the same transaction. */
  version: number;
  createdAt: string;
}

export interface ApiKeyRecord {
  keyId: string;
  organizationId: string;
  name: string;
  /** The first characters of the key, shown in listings so operators can tell keys apart. */
  displayPrefix: string;
  createdAt: string;
  revokedAt?: string;
  /** Epoch seconds after which the key is refused. */
  expiresAt?: number;
  /** Copies of the organization's state so one conditional write can authenticate and rate-limit. */
  organizationActive: boolean;
  rateLimit: number;
  /** Token bucket: theoretical arrival time in epoch ms (see domain/token-bucket.ts). */
  bucketTat?: number;
}

export type EngineConfig =
  | { kind: "scripted" }
  | { kind: "bedrock"; modelId: string }
  | { kind: "openai"; baseUrl: string; model: string; apiKeySecret: string };

export interface ChatbotRecord {
  chatbotId: string;
  organizationId: string;
  name: string;
  instructions: string;
  engine: EngineConfig;
  temperature: number;
  maxOutputTokens: number;
  /** How many earlier messages reach the model. */
  historyWindow: number;
  welcomeMessage: string;
  fallbackReply: string;
  createdAt: string;
  updatedAt: string;
}

export type KnowledgeEntryRecord =
  | { entryId: string; kind: "qa"; question: string; answer: string; createdAt: string }
  | { entryId: string; kind: "snippet"; title?: string; text: string; createdAt: string };

export interface ContactRecord {
  contactId: string;
  organizationId: string;
  userName?: string;
  userEmail?: string;
  userPhone?: string;
  createdAt: string;
  updatedAt: string;
}

export type ConversationStatus = "open" | "closed";

export interface ConversationRecord {
  conversationId: string;
  organizationId: string;
  chatbotId: string;
  contactId: string;
  externalId?: string;
  status: ConversationStatus;
  /** Number of turns started; allocates each turn's message sort keys. */
  turns: number;
  createdAt: string;
  /** Signs history cursors so one conversation's cursor is refused by another (domain/messages.ts). */
  cursorSecret?: string;
  /** Variables the visitor gave, kept for look-up tools across turns (see tools/). */
  collected?: Record<string, string>;
}

/** A look-up tool of a chatbot (tools/registry.ts validates `kind` and `config`). */
export interface ToolRecord {
  toolId: string;
  organizationId: string;
  chatbotId: string;
  /** Model-facing name, unique per chatbot. */
  name: string;
  /** Template kind (tools/template.ts). */
  kind: string;
  /** The template's public settings; may be shown to operators. */
  config: Record<string, unknown>;
  /** Replaces the template's description for the model. */
  description?: string;
  /** Cap on requests this tool sends to its platform (token bucket, per minute). */
  requestsPerMinute: number;
  /** The credentials, encrypted (secrets/envelope.ts envelope); decrypted only to call the platform. */
  credentials?: string;
  /** Masked credentials (`••••7c6b`), what operators are shown instead. */
  credentialHints?: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

/** A look-up result kept for a short while in its conversation (`expiresAt` doubles as the TTL). */
export interface ToolCacheRecord {
  lookupHash: string;
  toolId: string;
  /** The look-up result (tools/result.ts `LookupResult`: found or not_found only). */
  result: Record<string, unknown>;
  cachedAt: string;
  /** Epoch seconds. */
  expiresAt: number;
}

export type StoredAttachment =
  | { type: "image"; url: string; media_type?: string }
  | { type: "image"; media_type: string; sha256: string; size: number };

export interface MessageRecord {
  messageId: string;
  conversationId: string;
  turn: number;
  index: number;
  role: "user" | "assistant";
  content: string;
  attachments: StoredAttachment[];
  createdAt: string;
  /** Assistant messages: how the reply was made. */
  engine?: string;
  usage?: { inputTokens: number; outputTokens: number };
  modelLatencyMs?: number;
  fallback?: boolean;
}

// ---------- item <-> record ----------

const entity = {
  organization: "Organization",
  apiKey: "ApiKey",
  chatbot: "Chatbot",
  knowledgeEntry: "KnowledgeEntry",
  contact: "Contact",
  conversation: "Conversation",
  message: "Message",
  idempotencyRecord: "IdempotencyRecord",
  tool: "Tool",
  toolCache: "ToolCache",
} as const;

export const items = {
  organization(record: OrganizationRecord): Item {
    return {
      ...keys.organization(record.organizationId),
      GSI1PK: gsi1.organizationsPartition,
      GSI1SK: gsi1.organizationSortKey(record.organizationId),
      entity: entity.organization,
      ...record,
    };
  },
  apiKey(keyHash: string, record: ApiKeyRecord): Item {
    return {
      ...keys.apiKey(keyHash),
      GSI1PK: gsi1.organizationPartition(record.organizationId),
      GSI1SK: gsi1.apiKeySortKey(record.keyId),
      entity: entity.apiKey,
      ...record,
    };
  },
  chatbot(record: ChatbotRecord): Item {
    return {
      ...keys.chatbot(record.organizationId, record.chatbotId),
      GSI1PK: gsi1.organizationPartition(record.organizationId),
      GSI1SK: gsi1.chatbotSortKey(record.chatbotId),
      entity: entity.chatbot,
      ...record,
    };
  },
  knowledgeEntry(organizationId: string, chatbotId: string, record: KnowledgeEntryRecord): Item {
    return {
      ...keys.knowledgeEntry(organizationId, chatbotId, record.entryId),
      entity: entity.knowledgeEntry,
      ...record,
    };
  },
  conversation(record: ConversationRecord): Item {
    return {
      ...keys.conversation(record.organizationId, record.conversationId),
      entity: entity.conversation,
      ...record,
    };
  },
  message(organizationId: string, record: MessageRecord): Item {
    return {
      ...keys.message(organizationId, record.conversationId, record.turn, record.index),
      entity: entity.message,
      ...record,
    };
  },
  tool(record: ToolRecord): Item {
    return {
      ...keys.tool(record.organizationId, record.chatbotId, record.toolId),
      entity: entity.tool,
      ...record,
    };
  },
  toolCache(organizationId: string, conversationId: string, record: ToolCacheRecord): Item {
    return {
      ...keys.toolCache(organizationId, conversationId, record.lookupHash),
      entity: entity.toolCache,
      ttl: record.expiresAt,
      ...record,
    };
  },
} as const;

/** Strips the key and bookkeeping attributes, leaving the record's own fields. */
function recordFields(item: Item): Item {
  const { PK: _pk, SK: _sk, GSI1PK: _g1pk, GSI1SK: _g1sk, entity: _entity, ttl: _ttl, ...fields } = item;
  return fields;
}

export const records = {
  organization: (item: Item) => recordFields(item) as unknown as OrganizationRecord,
  apiKey: (item: Item) => recordFields(item) as unknown as ApiKeyRecord,
  chatbot: (item: Item) => recordFields(item) as unknown as ChatbotRecord,
  knowledgeEntry: (item: Item) => recordFields(item) as unknown as KnowledgeEntryRecord,
  contact: (item: Item) => recordFields(item) as unknown as ContactRecord,
  conversation: (item: Item) => recordFields(item) as unknown as ConversationRecord,
  message: (item: Item) => recordFields(item) as unknown as MessageRecord,
  tool: (item: Item) => recordFields(item) as unknown as ToolRecord,
  toolCache: (item: Item) => recordFields(item) as unknown as ToolCacheRecord,
} as const;

export const entityOf = (item: Item): string | undefined =>
  typeof item.entity === "string" ? item.entity : undefined;

export const entities = entity;
