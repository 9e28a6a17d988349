/**
 * The token bucket: capacity `limit`, refilled continuously at `limit` per `periodMs`.
 *
 * It is kept in its GCRA form: the whole state is one number, the "theoretical arrival time" (TAT,
 * epoch ms): the moment the bucket would be full again. Admitting a request moves the TAT one
 * emission interval (periodMs / limit) later; a request is admitted while the TAT stays within one
 * period of now. This is exactly a token bucket, and it lets a single conditional UpdateItem decide
 * and record an admission atomically, so no burst, across any number of Lambda instances, can pass
 * more than `limit` requests. There is no read-modify-write race to lose.
 *
 * Because DynamoDB cannot compute max(TAT, now), a write takes one of two shapes, chosen from the
 * last known TAT; a refused condition returns the stored item, which tells us which shape was right:
 *   idle  (TAT <= now):               SET tat = now + interval
 *   busy  (now < TAT <= now + period - interval): SET tat = tat + interval
 */

import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { refusedItem } from "#functions/store/conditions";
import type { Db } from "#functions/store/dynamodb";
import type { Item, Key } from "#functions/store/items";

export interface BucketPolicy {
  limit: number;
  periodMs: number;
}

/** What the rate-limit headers report. */
export interface BucketState {
  limit: number;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Epoch seconds at which the bucket is full again. */
  resetAt: number;
}

export type Admission =
  | { admitted: true; state: BucketState; item: Item }
  | { admitted: false; state: BucketState; retryAfterSeconds: number; item: Item | undefined };

/** Floating-point slack when comparing sums of fractional intervals (1 µs, far below any meaningful time). */
const EPSILON_MS = 0.001;

export const interval = (policy: BucketPolicy): number => policy.periodMs / policy.limit;

/** The pure decision, for a known TAT. Used by the tests as the specification of the stored behaviour. */
export function decide(
  policy: BucketPolicy,
  storedTat: number | undefined,
  now: number,
): { admitted: true; tat: number } | { admitted: false; retryAfterMs: number } {
  const step = interval(policy);
  const tat = Math.max(storedTat ?? now, now) + step;
  if (tat - now > policy.periodMs + EPSILON_MS) {
    return { admitted: false, retryAfterMs: tat - now - policy.periodMs };
  }
  return { admitted: true, tat };
}

export function stateAfter(policy: BucketPolicy, tat: number, now: number): BucketState {
  const debt = Math.max(0, tat - now);
  const remaining = Math.floor((policy.periodMs - debt) / interval(policy) + EPSILON_MS / interval(policy));
  return {
    limit: policy.limit,
    remaining: Math.max(0, remaining),
    resetAt: Math.ceil(Math.max(tat, now) / 1000),
  };
}

/** Whole seconds until one request is allowed again: rounded up, at least 1 (the Retry-After value). */
export function retryAfterSeconds(retryAfterMs: number): number {
  return Math.max(1, Math.ceil((retryAfterMs - EPSILON_MS) / 1000));
}

/** An extra condition every admission must satisfy, and how to read a refusal of it. */
export interface BucketGuard<Refusal> {
  condition: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
  /**
   * Given the item as stored when the write was refused: a refusal to return, a corrected policy to
   * retry with (the stored limit changed), or undefined when the guard held (the bucket refused).
   */
  judge(stored: Item | undefined): { refusal: Refusal } | { policy: BucketPolicy } | undefined;
}

export interface TakeTokenInput<Refusal> {
  key: Key;
  /** Attribute holding the TAT on the item. */
  attribute: string;
  policy: BucketPolicy;
  now: number;
  /** Last TAT seen for this bucket, if any: picks the likely write shape first. */
  hint?: number;
  /** Built per attempt, since its condition may name the policy (which a refusal can correct). */
  guard?: (policy: BucketPolicy) => BucketGuard<Refusal>;
  /** Items created by an admission expire this many seconds after the bucket is full again. */
  ttlAfterFullSeconds?: number;
  /**
   * More assignments made by the same write when it admits (e.g. `lastUsedAt = :lastUsedAt`), so
   * bookkeeping about the request rides on the bucket's write instead of costing a call of its own.
   */
  alsoSet?: { assignments: string; names?: Record<string, string>; values?: Record<string, unknown> };
}

export type TakeTokenResult<Refusal> = Admission | { refusal: Refusal };

/** Shapes tried before giving up; more than two only happens when instance clocks disagree. */
const MAX_ATTEMPTS = 4;

/** Takes one token from the bucket stored on `key`, atomically. */
export async function takeToken<Refusal = never>(
  db: Db,
  input: TakeTokenInput<Refusal>,
): Promise<TakeTokenResult<Refusal>> {
  const { key, attribute, now } = input;
  let policy = input.policy;
  let busy = input.hint !== undefined && input.hint > now;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const step = interval(policy);
    const guard = input.guard?.(policy);
    const names: Record<string, string> = { "#tat": attribute, ...guard?.names };
    const values: Record<string, unknown> = { ":now": now, ...guard?.values };
    let update: string;
    let condition: string;
    if (busy) {
      update = "SET #tat = #tat + :step";
      condition = "#tat > :now AND #tat <= :maxTat";
      values[":step"] = step;
      values[":maxTat"] = now + policy.periodMs - step + EPSILON_MS;
    } else {
      update = "SET #tat = :nextTat";
      condition = "(attribute_not_exists(#tat) OR #tat <= :now)";
      values[":nextTat"] = now + step;
    }
    if (input.alsoSet) {
      update += `, ${input.alsoSet.assignments}`;
      Object.assign(names, input.alsoSet.names);
      Object.assign(values, input.alsoSet.values);
    }
    if (input.ttlAfterFullSeconds !== undefined) {
      update += ", #ttl = :ttl";
      names["#ttl"] = "ttl";
      values[":ttl"] = Math.ceil((now + policy.periodMs) / 1000) + input.ttlAfterFullSeconds;
    }
    if (guard) condition = `(${guard.condition}) AND ${condition}`;
    try {
      const result = await db.client.send(
        new UpdateCommand({
          TableName: db.tableName,
          Key: key,
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: "ALL_NEW",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      const item = result.Attributes ?? {};
      const tat = Number(item[attribute]);
      return { admitted: true, state: stateAfter(policy, tat, now), item };
    } catch (error) {
      const stored = refusedItem(error);
      const verdict = guard?.judge(stored);
      if (verdict && "refusal" in verdict) return { refusal: verdict.refusal };
      if (verdict && "policy" in verdict) {
        policy = verdict.policy;
        continue;
      }
      const storedTat = typeof stored?.[attribute] === "number" ? (stored[attribute] as number) : undefined;
      const decision = decide(policy, storedTat, now);
      if (!decision.admitted) {
        return {
          admitted: false,
          state: { ...stateAfter(policy, storedTat ?? now, now), remaining: 0 },
          retryAfterSeconds: retryAfterSeconds(decision.retryAfterMs),
          item: stored,
        };
      }
      busy = storedTat !== undefined && storedTat > now;
    }
  }
  // Only reachable when clocks of concurrent writers disagree enough to flip the shape every time;
  // refusing is the safe side of an exact limit.
  return {
    admitted: false,
    state: { limit: policy.limit, remaining: 0, resetAt: Math.ceil((now + policy.periodMs) / 1000) },
    retryAfterSeconds: 1,
    item: undefined,
  };
}
