/**
 * Count limits that hold under any concurrency: "at most 20 webhook endpoints", "at most 10 tools",
 * and the like. Counting the items and then writing one lets every concurrent creator see room for
 * itself (30 creations at once made 30 endpoints against a limit of 20), so the count lives in a
 * counter item, and each creation or deletion changes it in the same transaction as the item:
 *
 *   create: counter `ADD n 1` if `n < limit`, + the item's own writes (conditional)
 *   delete: counter `ADD n -1` if `n > 0`,    + the item's own deletes (conditional)
 *
 * DynamoDB serialises the transactions on the counter, so of any burst exactly `limit - n` pass.
 * Transactions touching the same counter at the same moment may be cancelled with a
 * `TransactionConflict`; those are retried with jitter.
 *
 * Scopes that held items before their counter existed get one on first use: it is written with the
 * number of items found (and whatever else the scope keeps beside its items, such as name
 * reservations), only if it does not exist yet, before any counted write. Every writer of a scope
 * counts, so no creation or deletion can slip between the counting and the counter's creation.
 */
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { PutCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { cancellationReasons, type TransactAction } from "#functions/store/conditions";
import type { Db } from "#functions/store/dynamodb";
import { type Item, items, type Key } from "#functions/store/items";

export interface CountedScope {
  /** The counter item's key. */
  counter: Key;
  /** The most items the scope may hold. */
  limit: number;
  /**
   * For a scope without a counter yet: how many items it holds, and items to write beside the
   * counter (kept in step with the items from then on, e.g. name reservations).
   */
  existing(): Promise<{ count: number; alongside?: Item[] }>;
}

/** Why a counted write did not happen. */
export type CountedRefusal =
  /** The scope is at its limit (a creation). */
  | { kind: "full" }
  /** The write's own action at this index (0-based, in the actions given) failed its condition. */
  | { kind: "refused"; action: number; item: Item | undefined };

export class CountedWriteRefused extends Error {
  constructor(readonly refusal: CountedRefusal) {
    super(refusal.kind === "full" ? "count limit reached" : `action ${refusal.action} refused`);
    this.name = "CountedWriteRefused";
  }
}

/** How often a transaction cancelled by a concurrent one on the same counter is tried again. */
const CONFLICT_RETRIES = 12;

/** Creates what `actions` write, counted against the scope's limit. Throws CountedWriteRefused. */
export async function createCounted(db: Db, scope: CountedScope, actions: TransactAction[]): Promise<void> {
  await countedWrite(db, scope, +1, actions);
}

/** Deletes what `actions` delete and counts it out of the scope. Throws CountedWriteRefused. */
export async function deleteCounted(db: Db, scope: CountedScope, actions: TransactAction[]): Promise<void> {
  await countedWrite(db, scope, -1, actions);
}

async function countedWrite(
  db: Db,
  scope: CountedScope,
  change: 1 | -1,
  actions: TransactAction[],
): Promise<void> {
  let counterAction: TransactAction = {
    Update: {
      TableName: db.tableName,
      Key: scope.counter,
      UpdateExpression: "ADD #n :change",
      ConditionExpression:
        change > 0 ? "attribute_exists(PK) AND #n < :limit" : "attribute_exists(PK) AND #n > :zero",
      ExpressionAttributeNames: { "#n": "count" },
      ExpressionAttributeValues:
        change > 0 ? { ":change": 1, ":limit": scope.limit } : { ":change": -1, ":zero": 0 },
      ReturnValuesOnConditionCheckFailure: "ALL_OLD",
    },
  };
  let initialised = false;
  for (let attempt = 0; ; attempt++) {
    try {
      await db.client.send(new TransactWriteCommand({ TransactItems: [counterAction, ...actions] }));
      return;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = cancellationReasons(error);
      const ownFailure = reasons.slice(1).findIndex((reason) => reason.code === "ConditionalCheckFailed");
      if (ownFailure >= 0) {
        throw new CountedWriteRefused({
          kind: "refused",
          action: ownFailure,
          item: reasons[ownFailure + 1]?.item,
        });
      }
      const counter = reasons[0];
      if (counter?.code === "ConditionalCheckFailed") {
        if (counter.item === undefined && !initialised) {
          await initialiseCounter(db, scope);
          initialised = true;
          continue;
        }
        if (counter.item !== undefined && change < 0) {
          // A counter already at 0 (it cannot be, unless written by hand): the deletion goes ahead
          // without counting below zero.
          counterAction = {
            ConditionCheck: {
              TableName: db.tableName,
              Key: scope.counter,
              ConditionExpression: "attribute_exists(PK)",
            },
          };
          continue;
        }
        if (counter.item === undefined) throw error;
        throw new CountedWriteRefused({ kind: "full" });
      }
      const conflicted = reasons.some((reason) => reason.code === "TransactionConflict");
      if (!conflicted || attempt >= CONFLICT_RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40 * Math.min(attempt + 1, 5)));
    }
  }
}

/** Writes the scope's counter from what it holds, unless another writer just did. */
export async function initialiseCounted(db: Db, scope: CountedScope): Promise<void> {
  await initialiseCounter(db, scope);
}

async function initialiseCounter(db: Db, scope: CountedScope): Promise<void> {
  const { count, alongside = [] } = await scope.existing();
  const counter = items.counter(scope.counter, count);
  const put = (item: Item, onlyNew: boolean): TransactAction => ({
    Put: {
      TableName: db.tableName,
      Item: item,
      ...(onlyNew ? { ConditionExpression: "attribute_not_exists(PK)" } : {}),
    },
  });
  try {
    if (alongside.length === 0) {
      await db.client.send(
        new PutCommand({
          TableName: db.tableName,
          Item: counter,
          ConditionExpression: "attribute_not_exists(PK)",
        }),
      );
    } else {
      await db.client.send(
        new TransactWriteCommand({
          TransactItems: [put(counter, true), ...alongside.map((item) => put(item, false))],
        }),
      );
    }
  } catch (error) {
    // Another writer initialised it first: its count is as good as ours.
    if (error instanceof TransactionCanceledException) return;
    if (error instanceof Error && error.name === "ConditionalCheckFailedException") return;
    throw error;
  }
}
