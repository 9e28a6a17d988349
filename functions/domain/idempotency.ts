/**
 * Idempotency records: one per (API key, Idempotency-Key), kept 24 hours. One key
 * produces its work (a conversation, a turn) at most once, whatever fails and whenever.
 *
 * Main course: a conditional Put claims the key for one attempt (its `owner`), leased for as long as
 * that attempt can run → the work's writes go through the key's fence: each is a transaction that
 * also checks, on the record, that this attempt still owns the key and the work is not done yet;
 * the work's last write completes the record with the response in the same transaction. So the
 * record and the work cannot disagree, and a write that lands late (sent before a timeout, applied
 * after it) is refused once another attempt owns the key.
 *
 * A refused claim returns the stored record, which decides: another request → mismatch; completed
 * → replay; owned by an attempt that may still run → in progress (409, Retry-After); its lease over
 * (that attempt died, or gave up on a dependency and handed the key back) → take it over, with the
 * progress the record holds: a turn whose visitor message is stored is completed, not started again.
 * An attempt that fails never deletes the record: its writes may still land.
 */
import { createHash } from "node:crypto";
import { PutCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { AppError, serviceUnavailable } from "#functions/errors";
import { cancellationReasons, refusedItem, type TransactAction } from "#functions/store/conditions";
import { type Item, keys } from "#functions/store/items";

export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;

export interface StoredResponse {
  statusCode: number;
  body: string;
  headers: Record<string, string>;
}

/** What an attempt recorded on the key before it stopped: the turn number a message turn claimed. */
export interface Progress {
  turn?: number;
}

export type Claim =
  | { kind: "claimed"; progress: Progress }
  | { kind: "replay"; response: StoredResponse }
  | { kind: "mismatch" }
  | { kind: "in_progress"; retryAfterSeconds: number };

export interface IdempotencyScope {
  keyId: string;
  idempotencyKey: string;
}

export interface ClaimRequest {
  scope: IdempotencyScope;
  fingerprint: string;
  /** This attempt's identity, chosen by the caller so it can hand the key back even when the claim's own outcome is unknown. */
  owner: string;
  /** How long this attempt may run: no other attempt takes the key over before. */
  leaseMs: number;
}

const recordKey = (scope: IdempotencyScope) =>
  keys.idempotencyRecord(scope.keyId, createHash("sha256").update(scope.idempotencyKey).digest("hex"));

const names = { "#state": "state", "#owner": "owner" };
const IN_PROGRESS = "in_progress";
const COMPLETED = "completed";

export async function claimIdempotencyKey(ctx: DomainContext, request: ClaimRequest): Promise<Claim> {
  const now = ctx.clock();
  try {
    await ctx.db.client.send(
      new PutCommand({
        TableName: ctx.db.tableName,
        Item: {
          ...recordKey(request.scope),
          entity: "IdempotencyRecord",
          state: IN_PROGRESS,
          fingerprint: request.fingerprint,
          owner: request.owner,
          leaseUntil: now + request.leaseMs,
          ttl: Math.floor(now / 1000) + IDEMPOTENCY_RETENTION_SECONDS,
        },
        // Items may outlive their TTL by days: an expired record counts as absent.
        ConditionExpression: "attribute_not_exists(PK) OR #ttl < :nowSeconds",
        ExpressionAttributeNames: { "#ttl": "ttl" },
        ExpressionAttributeValues: { ":nowSeconds": Math.floor(now / 1000) },
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return { kind: "claimed", progress: {} };
  } catch (error) {
    const stored = refusedItem(error) ?? {};
    // The SDK retried this very Put after a timeout, and the first one had landed.
    if (stored.owner === request.owner) return { kind: "claimed", progress: progressOf(stored) };
    const decided = decide(stored, request.fingerprint, now);
    if (decided) return decided;
    return takeOver(ctx, request, stored, now);
  }
}

/** Replay, mismatch or in progress; undefined when the record's lease is over and it may be taken over. */
function decide(stored: Item, fingerprint: string, now: number): Claim | undefined {
  if (stored.fingerprint !== fingerprint) return { kind: "mismatch" };
  if (stored.state === COMPLETED) return { kind: "replay", response: stored.response as StoredResponse };
  const leaseUntil = Number(stored.leaseUntil ?? 0);
  if (leaseUntil > now) {
    return { kind: "in_progress", retryAfterSeconds: Math.max(1, Math.ceil((leaseUntil - now) / 1000)) };
  }
  return undefined;
}

/** Takes over a key whose previous attempt's lease is over, keeping the progress it recorded. */
async function takeOver(
  ctx: DomainContext,
  request: ClaimRequest,
  stored: Item,
  now: number,
): Promise<Claim> {
  try {
    const result = await ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: recordKey(request.scope),
        UpdateExpression: "SET #owner = :owner, leaseUntil = :leaseUntil",
        ConditionExpression: "#owner = :previous AND #state = :inProgress AND leaseUntil < :now",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: {
          ":owner": request.owner,
          ":previous": stored.owner,
          ":inProgress": IN_PROGRESS,
          ":now": now,
          ":leaseUntil": now + request.leaseMs,
        },
        ReturnValues: "ALL_NEW",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return { kind: "claimed", progress: progressOf(result.Attributes ?? {}) };
  } catch (error) {
    const current = refusedItem(error) ?? {};
    if (current.owner === request.owner) return { kind: "claimed", progress: progressOf(current) };
    // Someone else took it over (or finished) first.
    return decide(current, request.fingerprint, now) ?? { kind: "in_progress", retryAfterSeconds: 1 };
  }
}

function progressOf(stored: Item): Progress {
  return typeof stored.turn === "number" ? { turn: stored.turn } : {};
}

/** Stores the response of a request whose work needed no fence (a definite error answer, say). */
export async function completeIdempotencyKey(
  ctx: DomainContext,
  scope: IdempotencyScope,
  owner: string,
  response: StoredResponse,
): Promise<void> {
  await ctx.db.client.send(new UpdateCommand(completion(ctx, scope, owner, response)));
}

function completion(ctx: DomainContext, scope: IdempotencyScope, owner: string, response: StoredResponse) {
  return {
    TableName: ctx.db.tableName,
    Key: recordKey(scope),
    UpdateExpression: "SET #state = :completed, #response = :response REMOVE leaseUntil",
    ConditionExpression: "#owner = :owner AND #state = :inProgress",
    ExpressionAttributeNames: { ...names, "#response": "response" },
    ExpressionAttributeValues: {
      ":completed": COMPLETED,
      ":response": response,
      ":owner": owner,
      ":inProgress": IN_PROGRESS,
    },
  };
}

/**
 * Ends this attempt's lease now, keeping the record and its progress, so that a retry can take the
 * key over at once instead of waiting for the lease to run out. For an attempt that gives up
 * without knowing what its writes did: a retry completes the work, never repeats it.
 */
export async function handBackIdempotencyKey(
  ctx: DomainContext,
  scope: IdempotencyScope,
  owner: string,
): Promise<void> {
  await ctx.db.client.send(
    new UpdateCommand({
      TableName: ctx.db.tableName,
      Key: recordKey(scope),
      UpdateExpression: "SET leaseUntil = :ended",
      ConditionExpression: "#owner = :owner AND #state = :inProgress",
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ":ended": 0, ":owner": owner, ":inProgress": IN_PROGRESS },
    }),
  );
}

/**
 * The writes of an Idempotency-Key's work: only the key's current owner can make them, each in one
 * transaction with the record. `R` is the work's result, which `respond` turns into the stored answer.
 */
export interface WorkFence<R> {
  /** What an earlier attempt with this key already did (empty for a fresh key). */
  readonly progress: Progress;
  /** Writes `actions` and records `progress`, in one transaction. */
  record(actions: TransactAction[], progress: Progress): Promise<void>;
  /** Writes `actions` and completes the key with the response for `result`, in one transaction. */
  complete(actions: TransactAction[], result: R): Promise<void>;
}

export interface FenceOwner {
  scope: IdempotencyScope;
  owner: string;
  progress: Progress;
  /** Called once the work's completion is stored (nothing is left for the caller to store). */
  onCompleted(): void;
}

/**
 * A fence for the attempt that owns the key. A cancelled transaction is judged by the record:
 * if this attempt's own write already landed (the SDK retried it after a timeout), that is success;
 * if the key belongs to another attempt now, the answer is 409 (the other attempt finishes the
 * work); anything else the caller's actions refused is rethrown for the caller to judge.
 */
export function workFence<R>(
  ctx: DomainContext,
  owner: FenceOwner,
  respond: (result: R) => StoredResponse,
): WorkFence<R> {
  const run = async (actions: TransactAction[], fence: TransactAction, landed: (stored: Item) => boolean) => {
    try {
      await ctx.db.client.send(new TransactWriteCommand({ TransactItems: [...actions, fence] }));
    } catch (error) {
      const reasons = cancellationReasons(error);
      const own = reasons.at(-1);
      if (own?.code === "ConditionalCheckFailed") {
        if (own.item && landed(own.item)) return;
        throw new AppError("idempotency_in_progress");
      }
      if (
        reasons.some((reason) => reason.code === "TransactionConflict" || reason.code === "ThrottlingError")
      ) {
        throw serviceUnavailable(error);
      }
      throw error;
    }
  };
  /** An update of the record that only succeeds while this attempt owns the unfinished key. */
  const fenceUpdate = (
    update: { expression: string; names?: Record<string, string>; values: Record<string, unknown> },
    extraCondition = "",
  ): TransactAction => ({
    Update: {
      TableName: ctx.db.tableName,
      Key: recordKey(owner.scope),
      UpdateExpression: update.expression,
      ConditionExpression: `#owner = :owner AND #state = :inProgress${extraCondition}`,
      ExpressionAttributeNames: { ...names, ...update.names },
      ExpressionAttributeValues: { ":owner": owner.owner, ":inProgress": IN_PROGRESS, ...update.values },
      ReturnValuesOnConditionCheckFailure: "ALL_OLD",
    },
  });
  return {
    progress: owner.progress,
    async record(actions, progress) {
      await run(
        actions,
        fenceUpdate(
          { expression: "SET turn = :turn", values: { ":turn": progress.turn } },
          " AND attribute_not_exists(turn)",
        ),
        (stored) => stored.owner === owner.owner && stored.turn === progress.turn,
      );
    },
    async complete(actions, result) {
      const done = completion(ctx, owner.scope, owner.owner, respond(result));
      await run(
        actions,
        fenceUpdate({
          expression: done.UpdateExpression,
          names: done.ExpressionAttributeNames,
          values: done.ExpressionAttributeValues,
        }),
        (stored) => stored.owner === owner.owner && stored.state === COMPLETED,
      );
      owner.onCompleted();
    },
  };
}

/** Same request ⇔ same route and the same JSON (key order and whitespace do not matter). */
export function requestFingerprint(route: string, path: string, body: unknown): string {
  return createHash("sha256")
    .update(`${route}\n${path}\n${canonicalJson(body)}`)
    .digest("hex");
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
