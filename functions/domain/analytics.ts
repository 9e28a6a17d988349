/**
 * Analytics: per organization (and per chatbot) and UTC day, counters kept as conversations change,
 * never computed by reading conversations at request time.
 *
 * Where they come from: the table's stream (the EventFanout's batches). A conversation item holds
 * every fact its figures are made of (its visitor messages, fallbacks, look-ups, thumbs, rating,
 * first reply and outcome, each kept by the write that makes it); a change of the item moves the
 * counters of the conversation's start day by the difference between its contribution after and
 * before (`contributionOf`). So a conversation always counts once, on the day it started, as it
 * now stands: an outcome that changes (provisional → another) moves from one count to the other.
 * Test conversations (`test`) contribute nothing.
 *
 * Writes: one batch's differences are summed per item (the organization's day and the chatbot's
 * day), and written in one TransactWriteItems per 100 items whose ClientRequestToken is derived from
 * the batch's records: a batch the stream hands over again (its Lambda died after the write) is
 * applied once (DynamoDB keeps a token 10 minutes). They run after the webhook fan-out, so a
 * batch retried because the fan-out failed has written none yet. Batching is also what keeps an
 * organization's day item from getting hot: it takes at most one write per stream batch, not one
 * per turn.
 *
 * The median time to first reply is kept as a mergeable sketch: DDSketch's logarithmic mapping
 * (relative accuracy 2 %), one counter per bucket (`frt{index}`), so days and chatbots add up by
 * adding their buckets, and the median of any range is within 2 % of the exact one.
 */
import { createHash } from "node:crypto";
import { QueryCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import {
  type HandoffReason,
  handoffReasons,
  type Outcome,
  outcomes,
  outcomeValue,
} from "#functions/domain/outcomes";
import { type LookupOutcome, lookupOutcomes } from "#functions/domain/usage";
import { log } from "#functions/log";
import { cancellationReasons, type TransactAction } from "#functions/store/conditions";
import {
  type ConversationRecord,
  entities,
  type Item,
  keys,
  prefixes,
  records,
  USAGE_RETENTION_DAYS,
} from "#functions/store/items";

const lookupCounterOf: Record<LookupOutcome, keyof ConversationRecord> = {
  found: "lookupsFound",
  not_found: "lookupsNotFound",
  auth_failed: "lookupsAuthFailed",
  rate_limited: "lookupsRateLimited",
  timeout: "lookupsTimeout",
  unavailable: "lookupsUnavailable",
};

// ---------- the latency sketch ----------

/** DDSketch's logarithmic mapping: γ = (1 + α) / (1 − α); a value v falls in bucket ⌈log_γ v⌉. */
export const SKETCH_RELATIVE_ACCURACY = 0.02;
const gamma = (1 + SKETCH_RELATIVE_ACCURACY) / (1 - SKETCH_RELATIVE_ACCURACY);
const logGamma = Math.log(gamma);

/** The bucket of a duration in milliseconds (durations under 1 ms count as 1 ms). */
export const sketchIndex = (milliseconds: number): number =>
  Math.ceil(Math.log(Math.max(1, milliseconds)) / logGamma);

/** The value a bucket stands for: within α of every value in it. */
export const sketchValue = (index: number): number => (2 * gamma ** index) / (1 + gamma);

/** The q-quantile of bucket counts (index → count), or null when there are none. */
export function sketchQuantile(buckets: ReadonlyMap<number, number>, quantile: number): number | null {
  const total = [...buckets.values()].reduce((sum, count) => sum + count, 0);
  if (total <= 0) return null;
  // DDSketch's rank: the bucket holding the value of rank q·(n − 1), counting from 0.
  const rank = quantile * (total - 1);
  let seen = 0;
  for (const index of [...buckets.keys()].sort((a, b) => a - b)) {
    seen += buckets.get(index) ?? 0;
    if (seen > rank) return sketchValue(index);
  }
  return null;
}

const SKETCH_PREFIX = "frt";

// ---------- what a conversation contributes ----------

/** Counter names on an analytics item (besides the sketch's buckets). */
export const counterNames = [
  "conversations",
  "visitorMessages",
  "fallbackReplies",
  "lookups",
  ...lookupOutcomes.map((result) => `lookups_${result}`),
  ...outcomes.map((outcome) => `outcome_${outcome}`),
  ...handoffReasons.map((reason) => `handoff_${reason}`),
  "feedbackUp",
  "feedbackDown",
  "ratings",
  "ratingSum",
  "firstReplies",
] as const;

export type Counts = Record<string, number>;

/** Everything a conversation adds to its day's counters, as it stands. */
export function contributionOf(conversation: ConversationRecord): Counts {
  const counts: Counts = { conversations: 1 };
  const add = (name: string, value: number | undefined) => {
    if (value) counts[name] = (counts[name] ?? 0) + value;
  };
  add("visitorMessages", conversation.visitorMessageCount);
  add("fallbackReplies", conversation.fallbackReplies);
  add("lookups", conversation.lookups);
  for (const result of lookupOutcomes)
    add(`lookups_${result}`, conversation[lookupCounterOf[result]] as number | undefined);
  const outcome = outcomeValue(conversation);
  add(`outcome_${outcome}`, 1);
  if (outcome === "handed_off" && conversation.handoffReason) add(`handoff_${conversation.handoffReason}`, 1);
  add("feedbackUp", conversation.feedbackUp);
  add("feedbackDown", conversation.feedbackDown);
  if (conversation.rating) {
    add("ratings", 1);
    add("ratingSum", conversation.rating.score);
  }
  if (conversation.firstReplyMs !== undefined) {
    add("firstReplies", 1);
    add(`${SKETCH_PREFIX}${sketchIndex(conversation.firstReplyMs)}`, 1);
  }
  return counts;
}

/** A conversation item's change, as the stream shows it. */
export interface ConversationChange {
  eventName: "INSERT" | "MODIFY" | "REMOVE";
  newImage?: Item;
  oldImage?: Item;
  sequenceNumber: string;
}

/** One counter item's increments from a batch. */
export interface CounterIncrement {
  organizationId: string;
  day: string;
  /** Absent: the organization's item. */
  chatbotId?: string;
  counts: Counts;
}

const dayOf = (iso: string): string => iso.slice(0, 10);

/** The increments a batch of item changes makes, summed per counter item (zeros left out). */
export function incrementsOf(changes: readonly ConversationChange[]): CounterIncrement[] {
  const byItem = new Map<string, CounterIncrement>();
  const addTo = (target: Omit<CounterIncrement, "counts">, counts: Counts, sign: 1 | -1) => {
    const key = `${target.organizationId}\n${target.chatbotId ?? ""}\n${target.day}`;
    let entry = byItem.get(key);
    if (!entry) {
      entry = { ...target, counts: {} };
      byItem.set(key, entry);
    }
    for (const [name, value] of Object.entries(counts))
      entry.counts[name] = (entry.counts[name] ?? 0) + sign * value;
  };
  for (const change of changes) {
    const after =
      change.newImage?.entity === entities.conversation ? records.conversation(change.newImage) : undefined;
    const before =
      change.eventName !== "INSERT" && change.oldImage?.entity === entities.conversation
        ? records.conversation(change.oldImage)
        : undefined;
    const conversation = after ?? before;
    // Deleted conversations are not a thing; test traffic is never counted.
    if (!conversation || !after || conversation.test) continue;
    const places = [
      { organizationId: conversation.organizationId, day: dayOf(conversation.createdAt) },
      {
        organizationId: conversation.organizationId,
        day: dayOf(conversation.createdAt),
        chatbotId: conversation.chatbotId,
      },
    ];
    for (const place of places) {
      addTo(place, contributionOf(after), 1);
      if (before) addTo(place, contributionOf(before), -1);
    }
  }
  return [...byItem.values()]
    .map((entry) => ({
      ...entry,
      counts: Object.fromEntries(Object.entries(entry.counts).filter(([, value]) => value !== 0)),
    }))
    .filter((entry) => Object.keys(entry.counts).length > 0);
}

// ---------- writing ----------

/** Actions per transaction (DynamoDB's limit). */
const TRANSACTION_ITEMS = 100;
/** Attempts of a transaction that met another one on the same item (a concurrent stream shard). */
const CONFLICT_ATTEMPTS = 8;

/** The counters' update of one item. */
function incrementAction(tableName: string, increment: CounterIncrement): TransactAction {
  const names: Record<string, string> = { "#entity": "entity", "#ttl": "ttl", "#day": "day" };
  const values: Record<string, unknown> = {
    ":org": increment.organizationId,
    ":day": increment.day,
    ":entity": entities.analytics,
    ":ttl": Math.floor(Date.parse(`${increment.day}T00:00:00Z`) / 1000) + USAGE_RETENTION_DAYS * 86_400,
  };
  const adds = Object.entries(increment.counts).map(([name, value], index) => {
    names[`#c${index}`] = name;
    values[`:c${index}`] = value;
    return `#c${index} :c${index}`;
  });
  if (increment.chatbotId) values[":bot"] = increment.chatbotId;
  return {
    Update: {
      TableName: tableName,
      Key: increment.chatbotId
        ? keys.chatbotAnalyticsDay(increment.organizationId, increment.chatbotId, increment.day)
        : keys.analyticsDay(increment.organizationId, increment.day),
      UpdateExpression: `SET organizationId = :org, #day = :day, #entity = :entity, #ttl = :ttl${
        increment.chatbotId ? ", chatbotId = :bot" : ""
      } ADD ${adds.join(", ")}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * Counts a stream batch: its conversation changes' increments, in transactions whose tokens come
 * from the batch's sequence numbers (the same batch again is applied once). Throws when a write
 * fails, so the stream hands the batch over again.
 */
export async function recordAnalytics(
  ctx: DomainContext,
  changes: readonly ConversationChange[],
): Promise<{ items: number; transactions: number }> {
  const increments = incrementsOf(changes);
  if (increments.length === 0) return { items: 0, transactions: 0 };
  const batch = createHash("sha256")
    .update(changes.map((change) => change.sequenceNumber).join(","))
    .digest("base64url");
  let transactions = 0;
  for (let start = 0; start < increments.length; start += TRANSACTION_ITEMS) {
    const part = increments.slice(start, start + TRANSACTION_ITEMS);
    // 36 characters at most: 32 of the batch's hash and the part's number.
    const token = `${batch.slice(0, 32)}${String(start / TRANSACTION_ITEMS).padStart(4, "0")}`;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await ctx.db.client.send(
          new TransactWriteCommand({
            TransactItems: part.map((increment) => incrementAction(ctx.db.tableName, increment)),
            ClientRequestToken: token,
          }),
        );
        break;
      } catch (error) {
        const conflict =
          (error as { name?: string }).name === "TransactionCanceledException" &&
          cancellationReasons(error).some((reason) => reason.code === "TransactionConflict");
        if (!conflict || attempt >= CONFLICT_ATTEMPTS) throw error;
        log.debug("analytics counters met another write; trying again", { attempt });
        await new Promise((resolveWait) => setTimeout(resolveWait, 20 * attempt + Math.random() * 30));
      }
    }
    transactions += 1;
  }
  return { items: increments.length, transactions };
}

// ---------- reading ----------

/** One counter item as stored: the day, and its counters (sketch buckets included). */
export interface AnalyticsDayRecord {
  day: string;
  counts: Counts;
}

/**
 * The counter items of the days `from`…`to` (inclusive), of the organization or one chatbot: one
 * key range of at most 366 small items (one page of a Query; more only if the items grow past 1 MB).
 */
export async function readAnalyticsDays(
  ctx: DomainContext,
  input: { organizationId: string; from: string; to: string; chatbotId?: string },
): Promise<AnalyticsDayRecord[]> {
  const prefix = prefixes.analyticsDays(input.chatbotId);
  const found: AnalyticsDayRecord[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND SK BETWEEN :first AND :last",
        ExpressionAttributeValues: {
          ":pk": prefixes.analyticsPartition(input.organizationId),
          ":first": `${prefix}${input.from}`,
          ":last": `${prefix}${input.to}`,
        },
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    for (const item of page.Items ?? []) found.push(toDayRecord(item));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return found;
}

function toDayRecord(item: Item): AnalyticsDayRecord {
  const counts: Counts = {};
  for (const [name, value] of Object.entries(item))
    if (typeof value === "number" && name !== "ttl") counts[name] = value;
  return { day: String(item.day), counts };
}

/** The figures of a day, or of a range. */
export interface AnalyticsFigures {
  conversations: number;
  visitorMessages: number;
  outcomes: Record<Outcome, number>;
  handoffReasons: Record<HandoffReason, number>;
  fallbackReplies: number;
  feedbackUp: number;
  feedbackDown: number;
  ratings: number;
  ratingAverage: number | null;
  firstReplies: number;
  firstReplyMsP50: number | null;
  lookups: number;
  lookupResults: Record<LookupOutcome, number>;
}

/** The figures of counter items added up (a range's totals merge the days' sketches). */
export function figuresOf(days: readonly AnalyticsDayRecord[]): AnalyticsFigures {
  const sum = (name: string) => days.reduce((total, day) => total + (day.counts[name] ?? 0), 0);
  const buckets = new Map<number, number>();
  for (const day of days) {
    for (const [name, value] of Object.entries(day.counts)) {
      if (!name.startsWith(SKETCH_PREFIX)) continue;
      const index = Number(name.slice(SKETCH_PREFIX.length));
      if (Number.isInteger(index) && value > 0) buckets.set(index, (buckets.get(index) ?? 0) + value);
    }
  }
  const ratings = sum("ratings");
  const p50 = sketchQuantile(buckets, 0.5);
  return {
    conversations: sum("conversations"),
    visitorMessages: sum("visitorMessages"),
    outcomes: Object.fromEntries(outcomes.map((outcome) => [outcome, sum(`outcome_${outcome}`)])) as Record<
      Outcome,
      number
    >,
    handoffReasons: Object.fromEntries(
      handoffReasons.map((reason) => [reason, sum(`handoff_${reason}`)]),
    ) as Record<HandoffReason, number>,
    fallbackReplies: sum("fallbackReplies"),
    feedbackUp: sum("feedbackUp"),
    feedbackDown: sum("feedbackDown"),
    ratings,
    ratingAverage: ratings > 0 ? Math.round((sum("ratingSum") / ratings) * 100) / 100 : null,
    firstReplies: sum("firstReplies"),
    firstReplyMsP50: p50 === null ? null : Math.round(p50),
    lookups: sum("lookups"),
    lookupResults: Object.fromEntries(
      lookupOutcomes.map((result) => [result, sum(`lookups_${result}`)]),
    ) as Record<LookupOutcome, number>,
  };
}
