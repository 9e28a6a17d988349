/**
 * Usage per organization, chatbot and UTC day: visitor messages, replies, fallbacks, look-ups by
 * outcome, and model tokens.
 *
 * A turn counts itself with one UpdateItem of ADDs on its day's item, sent in parallel with the
 * write of its reply, so it adds no waiting to the turn (docs/architecture.md says why it is not
 * folded into a transaction with the reply: concurrent turns of one chatbot would then conflict on
 * the shared counter item). A failure to count is logged and never fails the turn. Items expire
 * after USAGE_RETENTION_DAYS.
 *
 * Test traffic is never counted: a turn of a conversation marked `test` (started with the console's
 * Try it key; items.ts `ConversationRecord.test`) writes nothing here.
 */
import { QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { describeError, log } from "#functions/log";
import { refusedItem } from "#functions/store/conditions";
import {
  entities,
  type Item,
  keys,
  prefixes,
  records,
  USAGE_RETENTION_DAYS,
  type UsageRecord,
} from "#functions/store/items";

/** The outcomes of a look-up that reached (or tried to reach) a platform, as counted. */
export const lookupOutcomes = [
  "found",
  "not_found",
  "auth_failed",
  "rate_limited",
  "timeout",
  "unavailable",
] as const;
export type LookupOutcome = (typeof lookupOutcomes)[number];

const lookupAttribute: Record<LookupOutcome, keyof UsageRecord> = {
  found: "lookupFound",
  not_found: "lookupNotFound",
  auth_failed: "lookupAuthFailed",
  rate_limited: "lookupRateLimited",
  timeout: "lookupTimeout",
  unavailable: "lookupUnavailable",
};

export interface TurnUsage {
  organizationId: string;
  chatbotId: string;
  /** The conversation's `test` mark: test traffic, not counted. */
  test: boolean;
  /** When the turn started (epoch ms): picks the day. */
  at: number;
  replies: number;
  fallback: boolean;
  inputTokens?: number;
  outputTokens?: number;
  /** One entry per look-up made in the turn. */
  lookups: readonly string[];
}

export const dayOf = (epochMs: number): string => new Date(epochMs).toISOString().slice(0, 10);

/** Counts one turn. Never throws: counting must not cost the visitor their reply. */
export async function recordTurnUsage(ctx: DomainContext, usage: TurnUsage): Promise<void> {
  if (usage.test) return;
  const day = dayOf(usage.at);
  const counts: Partial<Record<keyof UsageRecord, number>> = {
    visitorMessages: 1,
    replies: usage.replies,
    ...(usage.fallback ? { fallbacks: 1 } : {}),
    ...(usage.inputTokens ? { inputTokens: usage.inputTokens } : {}),
    ...(usage.outputTokens ? { outputTokens: usage.outputTokens } : {}),
  };
  for (const outcome of usage.lookups) {
    const attribute = lookupAttribute[outcome as LookupOutcome];
    if (attribute) counts[attribute] = (counts[attribute] ?? 0) + 1;
  }
  const entries = Object.entries(counts).filter(([, value]) => value !== undefined && value > 0);
  const names: Record<string, string> = { "#entity": "entity", "#ttl": "ttl" };
  const values: Record<string, unknown> = {
    ":org": usage.organizationId,
    ":bot": usage.chatbotId,
    ":day": day,
    ":entity": entities.usage,
    ":ttl": Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000) + USAGE_RETENTION_DAYS * 86_400,
  };
  entries.forEach(([attribute, value], index) => {
    names[`#c${index}`] = attribute;
    values[`:c${index}`] = value;
  });
  try {
    await ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.usage(usage.organizationId, day, usage.chatbotId),
        UpdateExpression: `SET organizationId = :org, chatbotId = :bot, #day = :day, #entity = :entity, #ttl = :ttl ADD ${entries
          .map((_, index) => `#c${index} :c${index}`)
          .join(", ")}`,
        ExpressionAttributeNames: { ...names, "#day": "day" },
        ExpressionAttributeValues: values,
      }),
    );
  } catch (error) {
    log.warn("could not count the turn's usage", { errorName: describeError(error).errorName });
  }
}

/** What the daily budget said: admitted (with what is left), or refused until the next UTC day. */
export type BudgetAdmission =
  | { admitted: true; remaining: number }
  | { admitted: false; resetAt: number; retryAfterSeconds: number };

/**
 * Takes one visitor message from a chatbot's daily budget for its widget: one conditional ADD on the
 * chatbot's usage item of the day, refused (and nothing written) once `budget` messages were taken.
 * Plain ADDs on one item serialise without conflicts, so the budget holds under any concurrency.
 */
export async function takeFromDailyBudget(
  ctx: DomainContext,
  input: { organizationId: string; chatbotId: string; budget: number; at: number },
): Promise<BudgetAdmission> {
  const day = dayOf(input.at);
  const nextDay = Date.parse(`${day}T00:00:00Z`) + 86_400_000;
  try {
    const result = await ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.usage(input.organizationId, day, input.chatbotId),
        UpdateExpression:
          "SET organizationId = :org, chatbotId = :bot, #day = :day, #entity = :entity, #ttl = :ttl ADD widgetMessages :one",
        ConditionExpression: "attribute_not_exists(widgetMessages) OR widgetMessages < :budget",
        ExpressionAttributeNames: { "#day": "day", "#entity": "entity", "#ttl": "ttl" },
        ExpressionAttributeValues: {
          ":org": input.organizationId,
          ":bot": input.chatbotId,
          ":day": day,
          ":entity": entities.usage,
          ":ttl": Math.floor(nextDay / 1000) - 86_400 + USAGE_RETENTION_DAYS * 86_400,
          ":one": 1,
          ":budget": input.budget,
        },
        ReturnValues: "UPDATED_NEW",
      }),
    );
    const taken = Number(result.Attributes?.widgetMessages ?? input.budget);
    return { admitted: true, remaining: Math.max(0, input.budget - taken) };
  } catch (error) {
    refusedItem(error);
    return {
      admitted: false,
      resetAt: Math.ceil(nextDay / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil((nextDay - input.at) / 1000)),
    };
  }
}

/** The counters of the days `from`…`to` (UTC dates, inclusive), optionally of one chatbot, oldest first. */
export async function readUsage(
  ctx: DomainContext,
  input: { organizationId: string; from: string; to: string; chatbotId?: string },
): Promise<UsageRecord[]> {
  const found: UsageRecord[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND SK BETWEEN :first AND :last",
        ExpressionAttributeValues: {
          ":pk": prefixes.usagePartition(input.organizationId),
          ":first": prefixes.usageDay(input.from),
          // `~` sorts after every character of a chatbot id: the whole last day.
          ":last": `${prefixes.usageDay(input.to)}~`,
          ...(input.chatbotId ? { ":bot": input.chatbotId } : {}),
        },
        ...(input.chatbotId ? { FilterExpression: "chatbotId = :bot" } : {}),
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    found.push(...(page.Items ?? []).map(records.usage));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return found;
}

export { lookupAttribute };
