/**
 * What the management API shows of each thing, shared by the routes that answer with it: the zod
 * schema (which the OpenAPI document publishes) and the mapping from the stored record. JSON is
 * snake_case; absent optional values are `null`; secrets never appear (tool credentials as masked
 * hints, API keys by their prefix).
 */

import * as z from "zod/mini";
import { handoffDefaults } from "#functions/agent/handoff";
import type { ConversationWithContact } from "#functions/domain/contacts";
import type { ToolView } from "#functions/domain/tools";
import { lookupAttribute, lookupOutcomes } from "#functions/domain/usage";
import type { WebhookDeliveryView, WebhookEndpointView } from "#functions/domain/webhooks";
import { contactSummaryView, toContactSummaryView } from "#functions/http/contact-view";
import {
  channelOf,
  conversationChannel,
  messageCounts,
  outcomeFields,
  testMark,
  toMessageCounts,
  toOutcomeFields,
} from "#functions/http/conversation-view";
import { isoTimestamp } from "#functions/http/schemas";
import type {
  ApiKeyRecord,
  ChatbotRecord,
  KnowledgeEntryRecord,
  MembershipRecord,
  OrganizationRecord,
  UsageRecord,
} from "#functions/store/items";
import { webhookEventTypes } from "#functions/webhooks/events";

const nullableText = (description: string) => z.nullable(z.string().check(z.describe(description)));

// ---------- page parameters ----------

export const pageLimits = { defaultPageSize: 20, maxPageSize: 100, cursorLength: 1_000 } as const;

/** `limit` and `cursor` of every listing: pass `next_cursor` back as `cursor` for the next page. */
export const pageQuery = {
  limit: z._default(
    z
      .int()
      .check(
        z.gte(1),
        z.lte(pageLimits.maxPageSize),
        z.describe(`Items per page, 1–${pageLimits.maxPageSize} (default ${pageLimits.defaultPageSize}).`),
      ),
    pageLimits.defaultPageSize,
  ),
  cursor: z.optional(
    z.string().check(z.maxLength(pageLimits.cursorLength), z.describe("`next_cursor` of the previous page.")),
  ),
};

// ---------- organizations ----------

export const organizationView = z.object({
  organization_id: z.string(),
  name: z.string(),
  subscription: z.enum(["active", "inactive"]),
  rate_limit: z.int().check(z.describe("Requests per minute per API key.")),
  created_at: isoTimestamp("When the organization was created"),
});

export const toOrganizationView = (record: OrganizationRecord): z.input<typeof organizationView> => ({
  organization_id: record.organizationId,
  name: record.name,
  subscription: record.subscription,
  rate_limit: record.rateLimit,
  created_at: record.createdAt,
});

// ---------- members ----------

export const role = z.enum(["admin", "viewer"]);

export const memberView = z.object({
  user_id: z.string().check(z.describe("The person's id (the user pool's `sub`).")),
  email: z.string(),
  display_name: nullableText("Name shown in the console."),
  role,
  created_at: isoTimestamp("When they were added"),
});

export const toMemberView = (record: MembershipRecord): z.input<typeof memberView> => ({
  user_id: record.userId,
  email: record.email,
  display_name: record.displayName ?? null,
  role: record.role,
  created_at: record.createdAt,
});

// ---------- API keys ----------

export const apiKeyScope = z.enum(["chat", "manage"]);

export const apiKeyView = z.object({
  key_id: z.string(),
  name: z.string(),
  scope: apiKeyScope,
  prefix: z.string().check(z.describe("The first characters of the key, to tell keys apart.")),
  created_at: isoTimestamp("When the key was created"),
  last_used_at: z.nullable(isoTimestamp("When the key last had a request admitted")),
  revoked_at: z.nullable(isoTimestamp("When the key was revoked")),
  expires_at: z.nullable(isoTimestamp("When the key stops working")),
});

export const toApiKeyView = (record: ApiKeyRecord): z.input<typeof apiKeyView> => ({
  key_id: record.keyId,
  name: record.name,
  scope: record.scope ?? "chat",
  prefix: record.displayPrefix,
  created_at: record.createdAt,
  last_used_at: record.lastUsedAt ?? null,
  revoked_at: record.revokedAt ?? null,
  expires_at: record.expiresAt === undefined ? null : new Date(record.expiresAt * 1000).toISOString(),
});

// ---------- chatbots ----------

export const engineView = z.union([
  z.object({ kind: z.literal("scripted") }),
  z.object({ kind: z.literal("bedrock"), model_id: z.string() }),
  z.object({
    kind: z.literal("openai"),
    base_url: z.string(),
    model: z.string(),
    api_key_hint: nullableText(
      "The pasted API key, masked (`••••7c6b`); null when none is stored. The key is never shown.",
    ),
    api_key_secret: nullableText("Name of the stage's secret holding the server's API key (never the key)."),
  }),
]);

export const chatbotView = z.object({
  chatbot_id: z.string(),
  name: z.string(),
  engine: engineView,
  instructions: z.string(),
  welcome_message: z.string(),
  fallback_reply: z.string(),
  temperature: z.number(),
  max_output_tokens: z.int(),
  history_window: z.int(),
  handoff: z.object({ allowed: z.boolean(), message: z.string(), phrases: z.array(z.string()) }),
  inactivity_timeout_minutes: z.nullable(
    z.int().check(z.describe("null: conversations never close by themselves.")),
  ),
  created_at: isoTimestamp("When the chatbot was created"),
  updated_at: isoTimestamp("When its settings last changed"),
});

export const toChatbotView = (record: ChatbotRecord): z.input<typeof chatbotView> => ({
  chatbot_id: record.chatbotId,
  name: record.name,
  engine:
    record.engine.kind === "scripted"
      ? { kind: "scripted" }
      : record.engine.kind === "bedrock"
        ? { kind: "bedrock", model_id: record.engine.modelId }
        : {
            kind: "openai",
            base_url: record.engine.baseUrl,
            model: record.engine.model,
            api_key_hint: record.engine.apiKey === undefined ? null : (record.engine.apiKeyHint ?? "••••"),
            api_key_secret: record.engine.apiKeySecret ?? null,
          },
  instructions: record.instructions,
  welcome_message: record.welcomeMessage,
  fallback_reply: record.fallbackReply,
  temperature: record.temperature,
  max_output_tokens: record.maxOutputTokens,
  history_window: record.historyWindow,
  handoff: record.handoff ?? handoffDefaults,
  inactivity_timeout_minutes: record.inactivityTimeoutMinutes ?? null,
  created_at: record.createdAt,
  updated_at: record.updatedAt,
});

// ---------- knowledge ----------

export const knowledgeView = z.object({
  entry_id: z.string(),
  kind: z.enum(["qa", "snippet"]),
  question: nullableText("A question/answer pair's question."),
  answer: nullableText("A question/answer pair's answer."),
  title: nullableText("A snippet's optional title."),
  text: nullableText("A snippet's text."),
  created_at: isoTimestamp("When the entry was added"),
});

export const toKnowledgeView = (record: KnowledgeEntryRecord): z.input<typeof knowledgeView> => ({
  entry_id: record.entryId,
  kind: record.kind,
  question: record.kind === "qa" ? record.question : null,
  answer: record.kind === "qa" ? record.answer : null,
  title: record.kind === "snippet" ? (record.title ?? null) : null,
  text: record.kind === "snippet" ? record.text : null,
  created_at: record.createdAt,
});

// ---------- tools ----------

export const toolView = z.object({
  tool_id: z.string(),
  chatbot_id: z.string(),
  name: z.string().check(z.describe("The name the model calls the tool by.")),
  kind: z
    .string()
    .check(z.describe("Template: woocommerce, shopify, lightspeed, sendcloud, picqer or http_get.")),
  platform: z.string(),
  description: z.string().check(z.describe("What the model is told about the tool.")),
  variables: z
    .array(z.object({ name: z.string(), label: z.string() }))
    .check(z.describe("What the visitor must give before a look-up.")),
  config: z.record(z.string(), z.unknown()).check(z.describe("The template's settings (no credentials).")),
  requests_per_minute: z.int(),
  credentials: z
    .record(z.string(), z.string())
    .check(z.describe("Masked hints of the stored credentials (`••••7c6b`); the values are never shown.")),
  created_at: isoTimestamp("When the tool was added"),
  updated_at: isoTimestamp("When it last changed"),
});

export const toToolView = (view: ToolView): z.input<typeof toolView> => ({
  tool_id: view.toolId,
  chatbot_id: view.chatbotId,
  name: view.name,
  kind: view.kind,
  platform: view.platform,
  description: view.description,
  variables: view.variables,
  config: view.config,
  requests_per_minute: view.requestsPerMinute,
  credentials: view.credentials,
  created_at: view.createdAt,
  updated_at: view.updatedAt,
});

// ---------- conversations ----------

export const conversationStatus = z.enum(["open", "handoff", "closed"]);

export const conversationView = z.object({
  conversation_id: z.string(),
  chatbot_id: z.string(),
  contact_id: z.string(),
  contact: contactSummaryView,
  external_id: nullableText("The caller's own identifier for the conversation."),
  status: conversationStatus,
  created_at: isoTimestamp("When the conversation started"),
  last_activity_at: isoTimestamp("The last message or status change"),
  status_changed_at: z.nullable(isoTimestamp("When the status last changed (null: open since it started)")),
  ...messageCounts,
  test: testMark,
  ...outcomeFields,
  channel: conversationChannel,
});

export const toConversationView = ({
  conversation: record,
  contact,
}: ConversationWithContact): z.input<typeof conversationView> => ({
  conversation_id: record.conversationId,
  chatbot_id: record.chatbotId,
  contact_id: record.contactId,
  contact: toContactSummaryView(record.contactId, contact),
  external_id: record.externalId ?? null,
  status: record.status,
  created_at: record.createdAt,
  last_activity_at: record.lastActivityAt ?? record.createdAt,
  status_changed_at: record.statusChangedAt ?? null,
  ...toMessageCounts(record),
  test: record.test === true,
  ...toOutcomeFields(record),
  channel: channelOf(record),
});

// ---------- usage ----------

export const usageDayView = z.object({
  date: z.string().check(z.describe("UTC day, YYYY-MM-DD.")),
  chatbot_id: z.string(),
  visitor_messages: z.int(),
  replies: z.int(),
  fallbacks: z
    .int()
    .check(z.describe("Turns answered with the fallback reply (engine failed, too slow, or no answer).")),
  lookups: z.object(
    Object.fromEntries(lookupOutcomes.map((outcome) => [outcome, z.int()])) as Record<
      (typeof lookupOutcomes)[number],
      z.ZodMiniInt
    >,
  ),
  input_tokens: z.int(),
  output_tokens: z.int(),
});

export const toUsageDayView = (record: UsageRecord): z.input<typeof usageDayView> => ({
  date: record.day,
  chatbot_id: record.chatbotId,
  visitor_messages: record.visitorMessages ?? 0,
  replies: record.replies ?? 0,
  fallbacks: record.fallbacks ?? 0,
  lookups: Object.fromEntries(
    lookupOutcomes.map((outcome) => [outcome, Number(record[lookupAttribute[outcome]] ?? 0)]),
  ) as Record<(typeof lookupOutcomes)[number], number>,
  input_tokens: record.inputTokens ?? 0,
  output_tokens: record.outputTokens ?? 0,
});

// ---------- webhook endpoints ----------

export const webhookEventType = z.enum(webhookEventTypes);

export const webhookEndpointView = z.object({
  endpoint_id: z.string(),
  url: z.string(),
  events: z.array(webhookEventType),
  enabled: z.boolean(),
  description: nullableText("What the endpoint is for."),
  created_at: isoTimestamp("When the endpoint was registered"),
  updated_at: isoTimestamp("When it last changed"),
  previous_secret_expires_at: z.nullable(
    isoTimestamp(
      "While rotated-out secrets still sign (each delivery then carries one signature per secret): when the last stops",
    ),
  ),
  failing_since: z.nullable(
    isoTimestamp("Since when its deliveries fail (it is disabled after 5 days of failures)"),
  ),
  last_failure_at: z.nullable(isoTimestamp("The last failed attempt")),
  slow_until: z.nullable(
    isoTimestamp("Until then at most a few attempts run at once: it answered slowly or not at all"),
  ),
  disabled_at: z.nullable(isoTimestamp("When deliveries were stopped")),
  disabled_reason: nullableText(
    "Why deliveries were stopped (e.g. failing for 5 days); enabling it clears this.",
  ),
});

export const toWebhookEndpointView = (view: WebhookEndpointView): z.input<typeof webhookEndpointView> => ({
  endpoint_id: view.endpointId,
  url: view.url,
  events: view.events,
  enabled: view.enabled,
  description: view.description ?? null,
  created_at: view.createdAt,
  updated_at: view.updatedAt,
  previous_secret_expires_at: view.previousSecretExpiresAt ?? null,
  failing_since: view.failingSince ?? null,
  last_failure_at: view.lastFailureAt ?? null,
  slow_until: view.slowUntil ?? null,
  disabled_at: view.disabledAt ?? null,
  disabled_reason: view.disabledReason ?? null,
});

export const webhookDeliveryView = z.object({
  delivery_id: z.string(),
  endpoint_id: z.string(),
  event_id: z.string().check(z.describe("The `webhook-id` header of every attempt (the same on retries).")),
  event_type: z.string(),
  state: z.enum(["pending", "delivered", "failed"]),
  created_at: isoTimestamp("When the event happened"),
  attempt_count: z.int(),
  attempts: z
    .array(
      z.object({
        attempt: z.int(),
        at: isoTimestamp("When the attempt was made"),
        trigger: z.enum(["event", "retry", "manual"]),
        status: z.nullable(z.int()).check(z.describe("The endpoint's HTTP status, when it answered.")),
        error: nullableText("Why there is no status: timeout, network, blocked_address."),
        latency_ms: z.int(),
        response: nullableText("The first 1 KB of the endpoint's answer."),
      }),
    )
    .check(z.describe("Newest first.")),
  next_attempt_at: z.nullable(isoTimestamp("The next scheduled retry")),
  finished_at: z.nullable(isoTimestamp("When it was delivered or given up")),
  failed_reason: nullableText(
    "Why a failed delivery stopped: retries_exhausted, endpoint_disabled, endpoint_deleted.",
  ),
});

export const toWebhookDeliveryView = (view: WebhookDeliveryView): z.input<typeof webhookDeliveryView> => ({
  delivery_id: view.deliveryId,
  endpoint_id: view.endpointId,
  event_id: view.eventId,
  event_type: view.eventType,
  state: view.state,
  created_at: view.createdAt,
  attempt_count: view.attemptCount,
  attempts: view.attempts.map((attempt) => ({
    attempt: attempt.attempt,
    at: attempt.at,
    trigger: attempt.trigger,
    status: attempt.status ?? null,
    error: attempt.error ?? null,
    latency_ms: Math.round(attempt.latencyMs),
    response: attempt.response ?? null,
  })),
  next_attempt_at: view.nextAttemptAt ?? null,
  finished_at: view.finishedAt ?? null,
  failed_reason: view.failedReason ?? null,
});
