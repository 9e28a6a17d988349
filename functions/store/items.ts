/**
 * The one module that knows the single table's keys and item shapes. Key builders are written out
 * literally so docs/data-model.md can be read side by side with them; every read maps an item to a
 * typed record here, every write builds its item here.
 *
 * Tenant isolation is structural: every key of an organization's data (chatbots, conversations,
 * messages, usage) starts with `ORG#{organizationId}#`, so a read built for one organization cannot
 * address another's items. Contacts and API keys are the two global look-ups, and both carry the
 * organization id that the caller checks. People (`USER#{userId}`) are global too: a person's
 * memberships name the organizations they may act on.
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
  /** A knowledge source of a chatbot: its own partition, which a turn never reads. */
  knowledgeSource: (organizationId: string, chatbotId: string, sourceId: string): Key => ({
    PK: `ORG#${organizationId}#BOT#${chatbotId}#KNOWLEDGE`,
    SK: `SRC#${sourceId}`,
  }),
  /** A chatbot's knowledge totals (sources, bytes, passages), checked against its limits. */
  knowledgeTotals: (organizationId: string, chatbotId: string): Key => ({
    PK: `ORG#${organizationId}#BOT#${chatbotId}#KNOWLEDGE`,
    SK: "TOTALS",
  }),
  tool: (organizationId: string, chatbotId: string, toolId: string): Key => ({
    PK: `ORG#${organizationId}#BOT#${chatbotId}`,
    SK: `TOOL#${toolId}`,
  }),
  /** Counts a chatbot's tools (store/counted.ts), for the limit per chatbot. */
  toolCount: (organizationId: string, chatbotId: string): Key => ({
    PK: `ORG#${organizationId}#BOT#${chatbotId}`,
    SK: "COUNT#TOOL",
  }),
  /** Reserves a tool name within its chatbot: names the model calls tools by are unique. */
  toolName: (organizationId: string, chatbotId: string, name: string): Key => ({
    PK: `ORG#${organizationId}#BOT#${chatbotId}`,
    SK: `TOOLNAME#${name}`,
  }),
  /** Counts a chatbot's knowledge entries (store/counted.ts), for the limit per chatbot. */
  knowledgeEntryCount: (organizationId: string, chatbotId: string): Key => ({
    PK: `ORG#${organizationId}#BOT#${chatbotId}`,
    SK: "COUNT#KNOW",
  }),
  /** A tool's request token bucket: its own partition, so turns never contend on the chatbot's. */
  toolBucket: (organizationId: string, chatbotId: string, toolId: string): Key => ({
    PK: `ORG#${organizationId}#BOT#${chatbotId}#TOOL#${toolId}`,
    SK: "BUCKET",
  }),
  contact: (contactId: string): Key => ({ PK: `CONTACT#${contactId}`, SK: "CONTACT" }),
  /** A contact's place in its organization's list of contacts, newest first; written once, at creation. */
  contactListEntry: (organizationId: string, createdAt: string, contactId: string): Key => ({
    PK: `ORG#${organizationId}#CONTACTS`,
    SK: `NEW#${createdAt}#${contactId}`,
  }),
  /** One search term of a contact (a normalized name, word, e-mail, domain, phone digits or external id). */
  contactSearchTerm: (organizationId: string, term: string, contactId: string): Key => ({
    PK: `ORG#${organizationId}#CONTACTS`,
    SK: `TERM#${term}#${contactId}`,
  }),
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
  /** A person who signs in (`userId` = the Cognito user's `sub`); holds the bucket of calls made outside any organization. */
  person: (userId: string): Key => ({ PK: `USER#${userId}`, SK: "PROFILE" }),
  /** A person's role in one organization, with their management bucket for it. */
  membership: (userId: string, organizationId: string): Key => ({
    PK: `USER#${userId}`,
    SK: `MEMBER#${organizationId}`,
  }),
  /** The explicit grant that makes a person a platform operator, with the operator's bucket. */
  operatorGrant: (userId: string): Key => ({ PK: `USER#${userId}`, SK: "OPERATOR" }),
  /** Usage counters of one chatbot on one day (UTC `YYYY-MM-DD`). */
  usage: (organizationId: string, day: string, chatbotId: string): Key => ({
    PK: `ORG#${organizationId}#USAGE`,
    SK: `DAY#${day}#BOT#${chatbotId}`,
  }),
  /**
   * Questions a chatbot's knowledge could not answer, one item per day and kind of question (a hash
   * of its words): their own partition, so the chatbot's stays the size of its settings.
   */
  knowledgeGap: (organizationId: string, chatbotId: string, day: string, signature: string): Key => ({
    PK: `ORG#${organizationId}#BOT#${chatbotId}#GAPS`,
    SK: `GAP#${day}#${signature}`,
  }),
  /**
   * Where a chatbot reply is (its conversation, turn and place), by the reply's id: written with the
   * reply, so feedback names a message by its id alone (POST /api/message/{message_id}/feedback).
   */
  replyReference: (organizationId: string, messageId: string): Key => ({
    PK: `ORG#${organizationId}#REPLY#${messageId}`,
    SK: "REPLY",
  }),
  /** An organization's analytics of one UTC day: all its chatbots (domain/analytics.ts). */
  analyticsDay: (organizationId: string, day: string): Key => ({
    PK: `ORG#${organizationId}#ANALYTICS`,
    SK: `ALL#${day}`,
  }),
  /** One chatbot's analytics of one UTC day. */
  chatbotAnalyticsDay: (organizationId: string, chatbotId: string, day: string): Key => ({
    PK: `ORG#${organizationId}#ANALYTICS`,
    SK: `BOT#${chatbotId}#${day}`,
  }),
  /** Lists a contact's conversations; written with the conversation. */
  contactConversation: (organizationId: string, contactId: string, conversationId: string): Key => ({
    PK: `ORG#${organizationId}#CONTACT#${contactId}`,
    SK: `CONV#${conversationId}`,
  }),
  /** Lists the conversations of one external id (hashed: the id is the caller's free text). */
  externalConversation: (organizationId: string, externalIdHash: string, conversationId: string): Key => ({
    PK: `ORG#${organizationId}#EXT#${externalIdHash}`,
    SK: `CONV#${conversationId}`,
  }),
  /** An organization's webhook endpoints share one partition: the fan-out reads them with one Query. */
  webhookEndpoint: (organizationId: string, endpointId: string): Key => ({
    PK: `ORG#${organizationId}#WEBHOOKS`,
    SK: `WHEP#${endpointId}`,
  }),
  /** Counts an organization's webhook endpoints (store/counted.ts), for the limit per organization. */
  webhookEndpointCount: (organizationId: string): Key => ({
    PK: `ORG#${organizationId}#WEBHOOKS`,
    SK: "COUNT",
  }),
  /** One event's delivery to one endpoint; delivery ids sort by event time (UUIDv7 layout). */
  webhookDelivery: (organizationId: string, endpointId: string, deliveryId: string): Key => ({
    PK: `ORG#${organizationId}#WHEP#${endpointId}`,
    SK: `DLV#${deliveryId}`,
  }),
  // ----- the website widget (domain/widget-settings.ts, domain/visitor-sessions.ts) -----
  /**
   * A chatbot's widget settings: a global look-up by chatbot id (the session route is given nothing
   * else), carrying the organization it belongs to.
   */
  widget: (chatbotId: string): Key => ({ PK: `WIDGET#${chatbotId}`, SK: "WIDGET" }),
  /** The session bucket of one client address for one chatbot (`address`: an IPv4 address or an IPv6 /64). */
  sessionBucket: (chatbotId: string, address: string): Key => ({
    PK: `WIDGET#${chatbotId}#ADDR#${address}`,
    SK: "BUCKET",
  }),
  /** One browser on a chatbot's widget, keyed by the hash of its visitor secret. */
  visitor: (visitorId: string): Key => ({ PK: `VISITOR#${visitorId}`, SK: "VISITOR" }),
  /** The contact of a verified identity (`sub` of the business's identity token), hashed. */
  identitySubject: (organizationId: string, subjectHash: string): Key => ({
    PK: `ORG#${organizationId}#SUBJECT#${subjectHash}`,
    SK: "SUBJECT",
  }),
} as const;

/** Partition and sort-key prefixes used by Queries; each prefix ends in its separator. */
export const prefixes = {
  chatbotPartition: (organizationId: string, chatbotId: string) => `ORG#${organizationId}#BOT#${chatbotId}`,
  conversationPartition: (organizationId: string, conversationId: string) =>
    `ORG#${organizationId}#CONV#${conversationId}`,
  messages: "MSG#",
  knowledge: "KNOW#",
  knowledgePartition: (organizationId: string, chatbotId: string) =>
    `ORG#${organizationId}#BOT#${chatbotId}#KNOWLEDGE`,
  knowledgeSources: "SRC#",
  tools: "TOOL#",
  person: (userId: string) => `USER#${userId}`,
  memberships: "MEMBER#",
  usagePartition: (organizationId: string) => `ORG#${organizationId}#USAGE`,
  usageDay: (day: string) => `DAY#${day}#`,
  contactConversations: (organizationId: string, contactId: string) =>
    `ORG#${organizationId}#CONTACT#${contactId}`,
  externalConversations: (organizationId: string, externalIdHash: string) =>
    `ORG#${organizationId}#EXT#${externalIdHash}`,
  contactsPartition: (organizationId: string) => `ORG#${organizationId}#CONTACTS`,
  contactList: "NEW#",
  /** Search terms starting with `text` (normalized: domain/contacts.ts). */
  contactTerms: (text: string) => `TERM#${text}`,
  conversationLinks: "CONV#",
  webhooksPartition: (organizationId: string) => `ORG#${organizationId}#WEBHOOKS`,
  webhookEndpoints: "WHEP#",
  deliveriesPartition: (organizationId: string, endpointId: string) =>
    `ORG#${organizationId}#WHEP#${endpointId}`,
  deliveries: "DLV#",
  gapsPartition: (organizationId: string, chatbotId: string) => `ORG#${organizationId}#BOT#${chatbotId}#GAPS`,
  analyticsPartition: (organizationId: string) => `ORG#${organizationId}#ANALYTICS`,
  /** The organization's days (`ALL#{day}`), or one chatbot's (`BOT#{chatbotId}#{day}`). */
  analyticsDays: (chatbotId?: string) => (chatbotId ? `BOT#${chatbotId}#` : "ALL#"),
  gapDay: (day: string) => `GAP#${day}#`,
} as const;

/**
 * The organization and conversation a conversation-partition key (`ORG#{org}#CONV#{conv}`) names,
 * for code that gets items without their ids (table stream records of messages); undefined otherwise.
 */
export function conversationPartitionIds(
  partitionKey: string,
): { organizationId: string; conversationId: string } | undefined {
  const match = /^ORG#([^#]+)#CONV#([^#]+)$/.exec(partitionKey);
  return match?.[1] && match[2] ? { organizationId: match[1], conversationId: match[2] } : undefined;
}

/**
 * GSI1: an organization's API keys, chatbots and members, the list of organizations, and a
 * chatbot's conversations by status and recent activity.
 */
export const gsi1 = {
  name: tableSchema.globalSecondaryIndexes[0].indexName,
  organizationsPartition: "ORGS",
  organizationSortKey: (organizationId: string) => `ORG#${organizationId}`,
  organizationPartition: (organizationId: string) => `ORG#${organizationId}`,
  apiKeySortKey: (keyId: string) => `APIKEY#${keyId}`,
  apiKeysPrefix: "APIKEY#",
  chatbotSortKey: (chatbotId: string) => `BOT#${chatbotId}`,
  chatbotsPrefix: "BOT#",
  memberSortKey: (userId: string) => `MEMBER#${userId}`,
  membersPrefix: "MEMBER#",
  chatbotConversationsPartition: (organizationId: string, chatbotId: string) =>
    `ORG#${organizationId}#BOT#${chatbotId}#CONVS`,
  /** Url sources with a refresh schedule, by when they are next due (every organization's: the scheduler's one read). */
  refreshPartition: "KNOWLEDGE#REFRESH",
  refreshSortKey: (nextRefreshAt: string, organizationId: string, chatbotId: string, sourceId: string) =>
    `${nextRefreshAt}#${organizationId}#${chatbotId}#${sourceId}`,
} as const;

/** GSI2: an organization's conversations by status and recent activity. */
export const gsi2 = {
  name: tableSchema.globalSecondaryIndexes[1].indexName,
  conversationsPartition: (organizationId: string) => `ORG#${organizationId}#CONVS`,
} as const;

/**
 * The sort key of a conversation in both listing indexes: status first (a listing of one status
 * reads one key range; "any status" merges one range per status), then the last activity, newest
 * last in key order (listings read backwards), then the id for ties.
 */
export function conversationActivityKey(
  status: string,
  lastActivityAt: string,
  conversationId: string,
): string {
  return `${status}#${lastActivityAt}#${conversationId}`;
}

/** The listing-index attributes of a conversation item: set at creation and whenever status or activity changes. */
export function conversationIndexKeys(record: {
  organizationId: string;
  chatbotId: string;
  conversationId: string;
  status: string;
  lastActivityAt: string;
}): Item {
  const sortKey = conversationActivityKey(record.status, record.lastActivityAt, record.conversationId);
  return {
    GSI1PK: gsi1.chatbotConversationsPartition(record.organizationId, record.chatbotId),
    GSI1SK: sortKey,
    GSI2PK: gsi2.conversationsPartition(record.organizationId),
    GSI2SK: sortKey,
  };
}

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
  /**
   * Members with the role admin, kept in the same transaction as every membership change so the
   * last admin can never be removed or demoted, however requests interleave. Absent: none yet.
   */
  adminCount?: number;
}

/** What an API key may be used for: `chat` the public API only, `manage` also `/manage/*` (as an admin). */
export type ApiKeyScope = "chat" | "manage";

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
  /** Absent on keys made before scopes existed: those are `chat` keys. */
  scope?: ApiKeyScope;
  /** When the key last had a request admitted; set by the authorizer's own write, no extra call. */
  lastUsedAt?: string;
  /**
   * A console "Try it" key: short-lived (`expiresAt`), left out of key listings, and the
   * conversations it starts are marked as tests. Removed by TTL once expired.
   */
  test?: true;
}

export type Role = "admin" | "viewer";

/** A person who signs in to the console (a Cognito user; `userId` is its `sub`). */
export interface PersonRecord {
  userId: string;
  email?: string;
  displayName?: string;
  createdAt: string;
  /** Bucket of the calls this person makes outside any organization (`GET /manage/me`). */
  bucketTat?: number;
}

/** A person's role in an organization. */
export interface MembershipRecord {
  userId: string;
  organizationId: string;
  role: Role;
  /** Copies, so listing members needs no directory look-up. */
  email: string;
  displayName?: string;
  createdAt: string;
  /** Who invited them: a user id or `key:{keyId}` (absent when an operator's tool added them). */
  invitedBy?: string;
  /** This person's management bucket for this organization. */
  bucketTat?: number;
}

/** A platform operator's grant: manages organizations, subscriptions and rate limits. */
export interface OperatorGrantRecord {
  userId: string;
  email?: string;
  grantedAt: string;
  bucketTat?: number;
}

/** One chatbot's counters for one UTC day (every counter absent until first counted). */
export interface UsageRecord {
  organizationId: string;
  chatbotId: string;
  day: string;
  visitorMessages?: number;
  replies?: number;
  fallbacks?: number;
  inputTokens?: number;
  outputTokens?: number;
  lookupFound?: number;
  lookupNotFound?: number;
  lookupAuthFailed?: number;
  lookupRateLimited?: number;
  lookupTimeout?: number;
  lookupUnavailable?: number;
  /** Visitor messages the website widget took (its daily budget counts these). */
  widgetMessages?: number;
}

/** Visitors' questions of one kind, on one day, that the chatbot's knowledge could not answer. */
export interface KnowledgeGapRecord {
  organizationId: string;
  chatbotId: string;
  day: string;
  /** Hash of the question's words (stop words out, stemmed, sorted): one item per kind of question. */
  signature: string;
  /** The first question of this kind asked that day, as the visitor wrote it (at most 500 characters). */
  question: string;
  count: number;
  lastAskedAt: string;
  /** The conversation it was last asked in. */
  conversationId: string;
  /** The question's embedding (int8, base64) and its model, to group similar questions when listed. */
  vector?: string;
  model?: string;
}

/** Knowledge gaps are kept this long (the console lists up to 90 days). */
export const GAP_RETENTION_DAYS = 100;

/** A conversation as seen from a contact's or an external id's list of conversations. */
export interface ConversationLinkRecord {
  conversationId: string;
  organizationId: string;
  createdAt: string;
}

export type EngineConfig =
  | { kind: "scripted" }
  | { kind: "bedrock"; modelId: string }
  /**
   * The server's key, if it needs one (a local Ollama needs none): `apiKey`, a key an admin pasted,
   * sealed (secrets/envelope.ts, bound to the organization and the chatbot), with its masked
   * `apiKeyHint`; or `apiKeySecret`, the name of a secret of the stage an operator made. Never both.
   */
  | {
      kind: "openai";
      baseUrl: string;
      model: string;
      apiKeySecret?: string;
      apiKey?: string;
      apiKeyHint?: string;
    };

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
  /** Human handoff; absent on chatbots made before it existed: not allowed. */
  handoff?: HandoffSettings;
  /** Closes a conversation (cause `inactivity`) after this many minutes without activity; absent: never. */
  inactivityTimeoutMinutes?: number;
  /**
   * Bumped (atomically, `ADD`) every time the chatbot's published passages change
   * (knowledge/index-store.ts); absent: never changed. Settings writes keep it as they found it.
   */
  knowledgeVersion?: number;
  /**
   * Bumped (atomically, `ADD`, in the same transaction as the change) by every change of the
   * chatbot's tools: instances keep the tools they read while it stays the same. Absent: 0.
   * Settings writes keep it as they found it.
   */
  toolsVersion?: number;
  createdAt: string;
  updatedAt: string;
}

export interface HandoffSettings {
  /** Whether the visitor or the engine may hand the conversation to a person (clients and people always may). */
  allowed: boolean;
  /** The chatbot's answer to the turn that starts a handoff. */
  message: string;
  /** Scripted engine: a visitor message containing one of these (case-insensitive) asks for a person. */
  phrases: string[];
}

export type SourceType = "qa" | "text" | "file" | "url";
export type SourceStatus = "pending" | "processing" | "ready" | "failed";
export type RefreshSchedule = "off" | "daily" | "weekly";
/** One page, a sitemap's pages (index files followed), or a crawl of one site from its start page. */
export type CrawlMode = "page" | "sitemap" | "site";

/** Why a source failed: a code from a closed list (knowledge/source-errors.ts) and a sentence for people. */
export interface SourceError {
  code: string;
  message: string;
}

/** A chatbot's knowledge source (knowledge/sources.ts). */
export interface KnowledgeSourceRecord {
  sourceId: string;
  organizationId: string;
  chatbotId: string;
  type: SourceType;
  /** The question (qa), the title given (text), the file name (file), or the page title / URL (url). */
  title: string;
  status: SourceStatus;
  error?: SourceError;
  /** Passages published. */
  chunks: number;
  /** Bytes read: the texts' UTF-8 size, the file's size, or the pages' bodies. */
  bytes: number;
  refresh: RefreshSchedule;
  /**
   * Bumped by every change that needs processing (create, sync, an edited text, a new upload): a
   * job carries the generation it was made for, and one made for an older generation does nothing.
   */
  generation: number;
  /** When the current processing began (the view calls a run long past its deadline interrupted). */
  processingStartedAt?: string;
  lastSyncedAt?: string;
  /** Url sources with a refresh schedule: when the next refresh is due. */
  nextRefreshAt?: string;
  createdAt: string;
  updatedAt: string;
  question?: string;
  answer?: string;
  text?: string;
  /** File sources: as declared when the upload was requested. */
  fileName?: string;
  mediaType?: string;
  size?: number;
  /** The upload object expected (knowledge/storage.ts), and until when its presigned URL works. */
  uploadId?: string;
  uploadExpiresAt?: string;
  /** Url sources. */
  url?: string;
  crawl?: CrawlMode;
  maxPages?: number;
  include?: string[];
  exclude?: string[];
  /** Pages read in the last sync (url sources). */
  pages?: number;
}

/** A chatbot's knowledge in numbers, kept in the same transactions as the sources that change it. */
export interface KnowledgeTotalsRecord {
  organizationId: string;
  chatbotId: string;
  sources: number;
  bytes: number;
  passages: number;
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
  /** The external ids its conversations were started with, newest first (at most contactLimits.externalIds). */
  externalIds?: string[];
  /** Conversations started with this contact (absent on contacts made before it was counted). */
  conversationCount?: number;
  lastConversationAt?: string;
  /** The search terms its index items hold (domain/contacts.ts), so a change knows which to remove. */
  searchTerms?: string[];
  /** Bumped by every write that changes its details or terms: the condition of the next such write. */
  version?: number;
  createdAt: string;
  /** When its details (name, e-mail, phone, external ids) last changed. */
  updatedAt: string;
}

/** A contact's search term item: which contact, the term, and all the contact's terms (one result per contact). */
export interface ContactSearchTermRecord {
  contactId: string;
  term: string;
  terms: string[];
}

export type ConversationStatus = "open" | "handoff" | "closed";

/** Where a conversation comes from: the website widget, or a client of the API (absent: `api`). */
export type ConversationChannel = "api" | "widget";

export interface ConversationRecord {
  conversationId: string;
  organizationId: string;
  chatbotId: string;
  contactId: string;
  externalId?: string;
  /** Absent on conversations started through the API (and on those made before channels existed). */
  channel?: "widget";
  status: ConversationStatus;
  /** When `status` last changed (its webhook event's time). */
  statusChangedAt?: string;
  /** Why `status` last changed (domain/conversation-states.ts `TransitionCause`). */
  statusCause?: string;
  /** Number of turns started; allocates each turn's message sort keys. */
  turns: number;
  createdAt: string;
  /** The last message or status change; orders listings (absent only on conversations made before listings existed). */
  lastActivityAt?: string;
  /** Messages in the history (every role: the visitor, the chatbot, people, status lines); absent on conversations made before it was counted. */
  messageCount?: number;
  /** Of those, the visitor's own messages (one per turn); absent on conversations made before it was counted. */
  visitorMessageCount?: number;
  /** When the last message was stored. */
  lastMessageAt?: string;
  /** Signs history cursors so one conversation's cursor is refused by another (domain/messages.ts). */
  cursorSecret?: string;
  /** Variables the visitor gave, kept for look-up tools across turns (see tools/). */
  collected?: Record<string, string>;
  /**
   * Started with a console "Try it" key: test traffic, not a visitor's conversation. The one fact
   * that says so: usage (and anything else that counts visitors) skips conversations that have it.
   */
  test?: true;
  // ---- the facts its outcome is decided by (domain/outcomes.ts), each kept by the write that makes it ----
  /** When the visitor's first message was stored (the turn's claim). */
  firstVisitorMessageAt?: string;
  /** Milliseconds from the visitor's first message to the first reply (the chatbot's or a person's). */
  firstReplyMs?: number;
  /** The chatbot's latest answer: its turn, when, and whether it was the fallback reply. */
  lastAnswerTurn?: number;
  lastAnswerAt?: string;
  lastAnswerFallback?: boolean;
  /** The visitor's feedback on a reply of the latest answer (cleared by the next answer). */
  lastAnswerFeedback?: FeedbackRating;
  /** Replies that were the fallback, and look-ups made, in this conversation. */
  fallbackReplies?: number;
  lookups?: number;
  lookupsFound?: number;
  lookupsNotFound?: number;
  lookupsAuthFailed?: number;
  lookupsRateLimited?: number;
  lookupsTimeout?: number;
  lookupsUnavailable?: number;
  /** Thumbs given on its replies (a replaced one moves from one count to the other). */
  feedbackUp?: number;
  feedbackDown?: number;
  /** The visitor's satisfaction with the conversation (sending again replaces it). */
  rating?: ConversationRating;
  /** The first handoff: when, and why (domain/outcomes.ts `handoffReasons`). */
  handoffAt?: string;
  handoffReason?: string;
  /** Set once the outcome is final: the outcome then, and when it became final. */
  finalOutcome?: string;
  outcomeFinalAt?: string;
}

export type FeedbackRating = "up" | "down";

/** The visitor's feedback on one reply (kept on the reply's message item). */
export interface MessageFeedback {
  rating: FeedbackRating;
  comment?: string;
  givenAt: string;
}

export interface ConversationRating {
  score: number;
  comment?: string;
  ratedAt: string;
}

/** Where a reply is, by its id (keys.replyReference). */
export interface ReplyReferenceRecord {
  messageId: string;
  conversationId: string;
  turn: number;
  index: number;
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

/** One look-up a reply made (its `lookup.completed` event): never values, credentials or found data. */
export interface LookupSummary {
  toolId: string;
  toolName: string;
  /** The tool's template kind: the platform it reads (`woocommerce`, `sendcloud`, …, `http-get`). */
  platform: string;
  /** The result kind: found, not_found, auth_failed, rate_limited, timeout or unavailable. */
  outcome: string;
  latencyMs: number;
  cached?: true;
}

export interface MessageRecord {
  messageId: string;
  conversationId: string;
  /** The conversation's chatbot (webhook events name it; older items may lack it). */
  chatbotId?: string;
  turn: number;
  index: number;
  /** `agent`: a person of the organization; `system`: a status change (its `transition`). */
  role: "user" | "assistant" | "agent" | "system";
  content: string;
  attachments: StoredAttachment[];
  createdAt: string;
  /** Assistant messages: how the reply was made. */
  engine?: string;
  usage?: { inputTokens: number; outputTokens: number };
  modelLatencyMs?: number;
  fallback?: boolean;
  /** The first reply of a turn: the look-ups the turn made. */
  lookups?: LookupSummary[];
  /** The first reply of a turn: the knowledge sources it drew on (absent: none). */
  sources?: { sourceId: string; title: string; url?: string }[];
  /** Agent messages: the person's display name as shown to the visitor. */
  authorName?: string;
  /** System messages: the status change they record. */
  transition?: TransitionRecord;
  /** Assistant messages: the visitor's feedback (thumbs up or down, and a comment). */
  feedback?: MessageFeedback;
}

/** Who made a status change: a client's API key, the visitor, the chatbot's engine, a person, the timer. */
export interface TransitionActor {
  kind: "api_key" | "visitor" | "engine" | "person" | "timer";
  /** Key id, engine kind or person's user id. */
  id?: string;
  /** A person's display name. */
  name?: string;
}

/** One status change, kept on its `system` message. */
export interface TransitionRecord {
  from: ConversationStatus;
  to: ConversationStatus;
  /** client, visitor, engine, agent or inactivity. */
  cause: string;
  actor: TransitionActor;
  /** The client's reason for a handoff, when it gave one. */
  reason?: string;
  /** A handoff: why, from the closed list of domain/outcomes.ts (`handoffReasons`). */
  handoffReason?: string;
}

/** A webhook signing secret, sealed (secrets/envelope.ts); a rotated-out one signs until `expiresAt`. */
export interface StoredSigningSecret {
  envelope: string;
  createdAt: string;
  /** Epoch ms; absent for the current secret. */
  expiresAt?: number;
}

export interface WebhookEndpointRecord {
  endpointId: string;
  organizationId: string;
  url: string;
  /** The event types it receives. */
  events: string[];
  enabled: boolean;
  description?: string;
  /** Newest first: the current secret, then rotated-out ones still inside their overlap. */
  secrets: StoredSigningSecret[];
  createdAt: string;
  updatedAt: string;
  /** Epoch ms of the first failure since the last success; cleared by a success. */
  failingSince?: number;
  lastFailureAt?: string;
  /** Epoch ms until which attempts in flight are limited: the endpoint was slow recently. */
  slowUntil?: number;
  disabledAt?: string;
  disabledReason?: string;
  /** Attempts in flight: delivery id → lease end (epoch ms). Caps one endpoint's concurrency. */
  leases: Record<string, number>;
  /** Bumped by every lease taken, so the cap is checked against what the taker read. */
  leaseVersion: number;
}

export type DeliveryState = "pending" | "delivered" | "failed";

/** One attempt to deliver, as the organization sees it. */
export interface DeliveryAttempt {
  attempt: number;
  at: string;
  trigger: "event" | "retry" | "manual";
  /** The HTTP status, when the endpoint answered. */
  status?: number;
  /** Why there is no status: timeout, network, blocked_address. */
  error?: string;
  latencyMs: number;
  /** The first 1 KB of the answer's body. */
  response?: string;
}

export interface WebhookDeliveryRecord {
  deliveryId: string;
  endpointId: string;
  organizationId: string;
  /** The event's id: the `webhook-id` header of every attempt. */
  eventId: string;
  eventType: string;
  /** The JSON body, fixed at fan-out so every attempt signs and sends the same bytes. */
  payload: string;
  createdAt: string;
  state: DeliveryState;
  attemptCount: number;
  attempts: DeliveryAttempt[];
  /** Epoch ms of the next scheduled attempt while pending after a failure. */
  nextAttemptAt?: number;
  finishedAt?: string;
  /** Why a failed delivery stopped: retries_exhausted, endpoint_disabled, endpoint_deleted. */
  failedReason?: string;
  /** Epoch seconds: deliveries are kept 30 days. */
  expiresAt: number;
}

/** How the widget looks and greets (the session hands it to the widget with the welcome message). */
export interface WidgetAppearance {
  title: string;
  /** `#rrggbb`. */
  color: string;
  position: "right" | "left";
  /** The launcher's text; empty: the widget's own word for "Chat" in the visitor's language. */
  launcherLabel: string;
  starterQuestions: string[];
  /** `auto` (the host page's `lang`) or a BCP 47 tag. */
  language: string;
}

export type IdentityVerification = "off" | "optional" | "required";

export interface WidgetRecord {
  chatbotId: string;
  organizationId: string;
  enabled: boolean;
  /** Exact origins, or one leading wildcard label (`https://*.shop.example`); normalised. */
  allowedOrigins: string[];
  identityVerification: IdentityVerification;
  appearance: WidgetAppearance;
  /** Visitor messages a day (UTC) this chatbot's widget may take. */
  dailyMessageBudget: number;
  /** Identity secrets, sealed, newest first; a rotated-out one verifies until `expiresAt`. */
  identitySecrets: StoredSigningSecret[];
  createdAt: string;
  updatedAt: string;
}

/**
 * One browser on one chatbot's widget (`visitorId` = the hash of its visitor secret): the contact it
 * speaks for, its access tokens (hashes) and its buckets.
 */
export interface VisitorRecord {
  visitorId: string;
  organizationId: string;
  chatbotId: string;
  contactId: string;
  /** The hash of the identity `sub` this browser last proved; absent: anonymous. */
  subjectHash?: string;
  /** Access tokens by hash: epoch seconds at which each stops working. */
  tokens: Record<string, number>;
  /** The chatbot's daily budget as of the last session (the authorizer reads it here, not from the widget). */
  dailyMessageBudget: number;
  /** Token buckets (epoch ms TATs): requests, and messages. */
  requestTat?: number;
  messageTat?: number;
  createdAt: string;
  lastSeenAt: string;
}

export interface IdentitySubjectRecord {
  organizationId: string;
  subjectHash: string;
  contactId: string;
  createdAt: string;
}

// ---------- item <-> record ----------

const entity = {
  organization: "Organization",
  apiKey: "ApiKey",
  chatbot: "Chatbot",
  knowledgeEntry: "KnowledgeEntry",
  knowledgeSource: "KnowledgeSource",
  knowledgeTotals: "KnowledgeTotals",
  contact: "Contact",
  contactListEntry: "ContactListEntry",
  contactSearchTerm: "ContactSearchTerm",
  conversation: "Conversation",
  message: "Message",
  idempotencyRecord: "IdempotencyRecord",
  tool: "Tool",
  toolCache: "ToolCache",
  person: "Person",
  membership: "Membership",
  operatorGrant: "OperatorGrant",
  usage: "Usage",
  conversationLink: "ConversationLink",
  webhookEndpoint: "WebhookEndpoint",
  webhookDelivery: "WebhookDelivery",
  knowledgeGap: "KnowledgeGap",
  replyReference: "ReplyReference",
  analytics: "Analytics",
  counter: "Counter",
  toolName: "ToolName",
  widget: "Widget",
  sessionBucket: "SessionBucket",
  visitor: "Visitor",
  identitySubject: "IdentitySubject",
} as const;

/** Usage records are kept this long (reports cover at least the last 90 days). */
export const USAGE_RETENTION_DAYS = 400;

export const items = {
  /** A count of the items of one scope (store/counted.ts). */
  counter(key: Key, count: number): Item {
    return { ...key, entity: entity.counter, count };
  },
  /** A tool's name, taken within its chatbot by the tool `toolId`. */
  toolName(organizationId: string, chatbotId: string, name: string, toolId: string): Item {
    return { ...keys.toolName(organizationId, chatbotId, name), entity: entity.toolName, toolId };
  },
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
      // Try-it keys are throwaway: the table deletes them a day after they expire.
      ...(record.test && record.expiresAt !== undefined ? { ttl: record.expiresAt + 86_400 } : {}),
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
  knowledgeSource(record: KnowledgeSourceRecord): Item {
    return {
      ...keys.knowledgeSource(record.organizationId, record.chatbotId, record.sourceId),
      ...(record.nextRefreshAt
        ? {
            GSI1PK: gsi1.refreshPartition,
            GSI1SK: gsi1.refreshSortKey(
              record.nextRefreshAt,
              record.organizationId,
              record.chatbotId,
              record.sourceId,
            ),
          }
        : {}),
      entity: entity.knowledgeSource,
      ...record,
    };
  },
  knowledgeTotals(record: KnowledgeTotalsRecord): Item {
    return {
      ...keys.knowledgeTotals(record.organizationId, record.chatbotId),
      entity: entity.knowledgeTotals,
      ...record,
    };
  },
  conversation(record: ConversationRecord): Item {
    return {
      ...keys.conversation(record.organizationId, record.conversationId),
      ...conversationIndexKeys({ ...record, lastActivityAt: record.lastActivityAt ?? record.createdAt }),
      entity: entity.conversation,
      ...record,
    };
  },
  contactConversation(contactId: string, record: ConversationLinkRecord): Item {
    return {
      ...keys.contactConversation(record.organizationId, contactId, record.conversationId),
      entity: entity.conversationLink,
      ...record,
    };
  },
  externalConversation(externalIdHash: string, record: ConversationLinkRecord): Item {
    return {
      ...keys.externalConversation(record.organizationId, externalIdHash, record.conversationId),
      entity: entity.conversationLink,
      ...record,
    };
  },
  contact(record: ContactRecord): Item {
    return { ...keys.contact(record.contactId), entity: entity.contact, ...record };
  },
  contactListEntry(organizationId: string, createdAt: string, contactId: string): Item {
    return {
      ...keys.contactListEntry(organizationId, createdAt, contactId),
      entity: entity.contactListEntry,
      contactId,
    };
  },
  contactSearchTerm(organizationId: string, record: ContactSearchTermRecord): Item {
    return {
      ...keys.contactSearchTerm(organizationId, record.term, record.contactId),
      entity: entity.contactSearchTerm,
      ...record,
    };
  },
  person(record: PersonRecord): Item {
    return { ...keys.person(record.userId), entity: entity.person, ...record };
  },
  membership(record: MembershipRecord): Item {
    return {
      ...keys.membership(record.userId, record.organizationId),
      GSI1PK: gsi1.organizationPartition(record.organizationId),
      GSI1SK: gsi1.memberSortKey(record.userId),
      entity: entity.membership,
      ...record,
    };
  },
  operatorGrant(record: OperatorGrantRecord): Item {
    return { ...keys.operatorGrant(record.userId), entity: entity.operatorGrant, ...record };
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
  webhookEndpoint(record: WebhookEndpointRecord): Item {
    return {
      ...keys.webhookEndpoint(record.organizationId, record.endpointId),
      entity: entity.webhookEndpoint,
      ...record,
    };
  },
  replyReference(organizationId: string, record: ReplyReferenceRecord): Item {
    return {
      ...keys.replyReference(organizationId, record.messageId),
      entity: entity.replyReference,
      ...record,
    };
  },
  webhookDelivery(record: WebhookDeliveryRecord): Item {
    return {
      ...keys.webhookDelivery(record.organizationId, record.endpointId, record.deliveryId),
      entity: entity.webhookDelivery,
      ttl: record.expiresAt,
      ...record,
    };
  },
  widget(record: WidgetRecord): Item {
    return { ...keys.widget(record.chatbotId), entity: entity.widget, ...record };
  },
  /** Kept `VISITOR_RETENTION_DAYS` after its last session. */
  visitor(record: VisitorRecord): Item {
    return {
      ...keys.visitor(record.visitorId),
      entity: entity.visitor,
      ttl: visitorExpiry(Date.parse(record.lastSeenAt)),
      ...record,
    };
  },
  identitySubject(record: IdentitySubjectRecord): Item {
    return {
      ...keys.identitySubject(record.organizationId, record.subjectHash),
      entity: entity.identitySubject,
      ...record,
    };
  },
} as const;

/** A visitor secret resumes its contact for this many days after its last use. */
export const VISITOR_RETENTION_DAYS = 90;

/** Epoch seconds at which a visitor last seen at `lastSeenMs` is forgotten (its `ttl`). */
export const visitorExpiry = (lastSeenMs: number): number =>
  Math.ceil(lastSeenMs / 1000) + VISITOR_RETENTION_DAYS * 86_400;

/** Strips the key and bookkeeping attributes, leaving the record's own fields. */
function recordFields(item: Item): Item {
  const {
    PK: _pk,
    SK: _sk,
    GSI1PK: _g1pk,
    GSI1SK: _g1sk,
    GSI2PK: _g2pk,
    GSI2SK: _g2sk,
    entity: _entity,
    ttl: _ttl,
    ...fields
  } = item;
  return fields;
}

export const records = {
  organization: (item: Item) => recordFields(item) as unknown as OrganizationRecord,
  apiKey: (item: Item) => recordFields(item) as unknown as ApiKeyRecord,
  chatbot: (item: Item) => recordFields(item) as unknown as ChatbotRecord,
  knowledgeEntry: (item: Item) => recordFields(item) as unknown as KnowledgeEntryRecord,
  knowledgeSource: (item: Item) => recordFields(item) as unknown as KnowledgeSourceRecord,
  knowledgeTotals: (item: Item) => recordFields(item) as unknown as KnowledgeTotalsRecord,
  contact: (item: Item) => recordFields(item) as unknown as ContactRecord,
  contactSearchTerm: (item: Item) => recordFields(item) as unknown as ContactSearchTermRecord,
  conversation: (item: Item) => recordFields(item) as unknown as ConversationRecord,
  message: (item: Item) => recordFields(item) as unknown as MessageRecord,
  tool: (item: Item) => recordFields(item) as unknown as ToolRecord,
  toolCache: (item: Item) => recordFields(item) as unknown as ToolCacheRecord,
  person: (item: Item) => recordFields(item) as unknown as PersonRecord,
  membership: (item: Item) => recordFields(item) as unknown as MembershipRecord,
  operatorGrant: (item: Item) => recordFields(item) as unknown as OperatorGrantRecord,
  usage: (item: Item) => recordFields(item) as unknown as UsageRecord,
  conversationLink: (item: Item) => recordFields(item) as unknown as ConversationLinkRecord,
  webhookEndpoint: (item: Item) => recordFields(item) as unknown as WebhookEndpointRecord,
  webhookDelivery: (item: Item) => recordFields(item) as unknown as WebhookDeliveryRecord,
  knowledgeGap: (item: Item) => recordFields(item) as unknown as KnowledgeGapRecord,
  replyReference: (item: Item) => recordFields(item) as unknown as ReplyReferenceRecord,
  widget: (item: Item) => recordFields(item) as unknown as WidgetRecord,
  visitor: (item: Item) => recordFields(item) as unknown as VisitorRecord,
  identitySubject: (item: Item) => recordFields(item) as unknown as IdentitySubjectRecord,
} as const;

export const entityOf = (item: Item): string | undefined =>
  typeof item.entity === "string" ? item.entity : undefined;

export const entities = entity;
