/**
 * An emulator of Lambda's DynamoDB Streams event source mapping, reading DynamoDB Local's stream
 * with the real `@aws-sdk/client-dynamodb-streams`:
 *  - shards and lineage: the stream's shards are listed again and again; a shard is read once its
 *    parent (if the stream still has it) has been read to its end, children from their start;
 *    shards present when the mapping first starts begin at its starting position;
 *  - polling: each shard is polled a few times a second (Lambda polls 4 times per second);
 *  - batches: up to `batchSize` records, waiting up to `maxBatchingWindowSeconds` for more;
 *  - filter criteria: records that match no pattern are dropped before invoking, and checkpointed
 *    as processed (lib/local/event-filter.ts);
 *  - checkpoints: per shard, the last sequence number handled, written to a file after every
 *    batch, so a restarted emulator resumes where it stopped (nothing lost, nothing repeated that
 *    had succeeded);
 *  - errors: a failing batch is halved (bisect) until the failing record is alone, which is
 *    retried up to `retryAttempts` times (halving does not count as a retry, as on Lambda) unless
 *    it is older than `maxRecordAgeSeconds`; then the batch is described to the failure destination
 *    (Lambda's `DDBStreamBatchInfo` document) and skipped, so the shard moves on.
 * Records reach the function in Lambda's event shape: eventID, eventName, eventVersion,
 * eventSource, awsRegion, eventSourceARN, and `dynamodb` with ApproximateCreationDateTime (epoch
 * seconds), Keys, NewImage, OldImage, SequenceNumber, SizeBytes, StreamViewType.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type Shard,
  type _Record as StreamRecord,
  TrimmedDataAccessException,
} from "@aws-sdk/client-dynamodb-streams";
import type { StreamSourceDefinition } from "../event-sources.ts";
import { matchesAny } from "./event-filter.ts";
import type { EmulatedFunction } from "./http-api-emulator.ts";
import { invokeFunction } from "./lambda-invoke.ts";

export interface StreamEventSourceOptions {
  definition: Pick<
    StreamSourceDefinition,
    | "startingPosition"
    | "batchSize"
    | "maxBatchingWindowSeconds"
    | "bisectBatchOnFunctionError"
    | "retryAttempts"
    | "maxRecordAgeSeconds"
    | "filters"
  >;
  fn: EmulatedFunction;
  streams: DynamoDBStreamsClient;
  streamArn: string;
  region: string;
  /** Where checkpoints are kept between runs; absent: in memory only. */
  checkpointFile?: string;
  /** Receives the failure document of a batch that could not be processed. */
  onFailure(document: Record<string, unknown>): Promise<void>;
  pollIntervalMs?: number;
  /** Wait before retrying a failed batch (doubles per retry, up to 5 s). */
  retryDelayMs?: number;
  onError?: (message: string, error: unknown) => void;
}

export interface RunningStreamEventSource {
  /** Stops polling, lets the batch in progress finish and keeps its checkpoint. */
  stop(): Promise<void>;
}

/** Lambda's stream record. */
export interface LambdaStreamRecord {
  eventID: string;
  eventName: string;
  eventVersion: string;
  eventSource: "aws:dynamodb";
  awsRegion: string;
  eventSourceARN: string;
  dynamodb: Record<string, unknown> & { SequenceNumber: string; ApproximateCreationDateTime: number };
}

const SHARD_END = "SHARD_END";

interface Checkpoints {
  streamArn: string;
  /** Last sequence number handled, or SHARD_END. */
  shards: Record<string, string>;
}

export function startStreamEventSource(options: StreamEventSourceOptions): RunningStreamEventSource {
  const stopping = new AbortController();
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const { definition } = options;
  const checkpoints = loadCheckpoints(options.checkpointFile, options.streamArn);
  // Shards that existed when this mapping first ran start at its starting position; later ones
  // (children of a split or a roll-over) from their beginning.
  const firstRun = Object.keys(checkpoints.shards).length === 0;
  const known = new Map<string, Shard>();
  const readers = new Map<string, Promise<void>>();
  const startAt = new Map<string, "TRIM_HORIZON" | "LATEST">();

  const save = () => {
    if (!options.checkpointFile) return;
    mkdirSync(dirname(options.checkpointFile), { recursive: true });
    const temporary = `${options.checkpointFile}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(checkpoints, null, 2)}\n`);
    renameSync(temporary, options.checkpointFile);
  };

  async function discover(initial: boolean): Promise<void> {
    let exclusiveStartShardId: string | undefined;
    do {
      const page = await options.streams.send(
        new DescribeStreamCommand({
          StreamArn: options.streamArn,
          ExclusiveStartShardId: exclusiveStartShardId,
        }),
      );
      for (const shard of page.StreamDescription?.Shards ?? []) {
        if (!shard.ShardId) continue;
        if (!known.has(shard.ShardId)) {
          known.set(shard.ShardId, shard);
          if (initial && firstRun && checkpoints.shards[shard.ShardId] === undefined) {
            startAt.set(shard.ShardId, definition.startingPosition);
          }
        }
      }
      exclusiveStartShardId = page.StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId);
    for (const [shardId, shard] of known) {
      if (readers.has(shardId) || checkpoints.shards[shardId] === SHARD_END) continue;
      const parent = shard.ParentShardId;
      const parentPending =
        parent !== undefined && known.has(parent) && checkpoints.shards[parent] !== SHARD_END;
      if (parentPending) continue;
      readers.set(
        shardId,
        readShard(shardId).finally(() => readers.delete(shardId)),
      );
    }
  }

  async function iteratorFor(shardId: string): Promise<string | undefined> {
    const checkpoint = checkpoints.shards[shardId];
    const result = await options.streams.send(
      new GetShardIteratorCommand({
        StreamArn: options.streamArn,
        ShardId: shardId,
        ...(checkpoint
          ? { ShardIteratorType: "AFTER_SEQUENCE_NUMBER", SequenceNumber: checkpoint }
          : { ShardIteratorType: startAt.get(shardId) ?? "TRIM_HORIZON" }),
      }),
    );
    return result.ShardIterator;
  }

  async function readShard(shardId: string): Promise<void> {
    let iterator: string | undefined;
    let pending: StreamRecord[] = [];
    let firstPendingAt = 0;
    while (!stopping.signal.aborted) {
      try {
        iterator ??= await iteratorFor(shardId);
        if (!iterator) break;
        const page = await options.streams.send(
          new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }),
        );
        const records = page.Records ?? [];
        if (records.length > 0 && pending.length === 0) firstPendingAt = Date.now();
        pending.push(...records);
        iterator = page.NextShardIterator;
        const shardEnded = iterator === undefined;
        // Hand over full batches; a partial one once its window has passed or the shard ended.
        while (
          pending.length > 0 &&
          (pending.length >= definition.batchSize ||
            shardEnded ||
            Date.now() - firstPendingAt >= definition.maxBatchingWindowSeconds * 1000)
        ) {
          const batch = pending.slice(0, definition.batchSize);
          pending = pending.slice(batch.length);
          await handleBatch(shardId, batch);
          firstPendingAt = Date.now();
          if (stopping.signal.aborted) return;
        }
        if (shardEnded) {
          checkpoints.shards[shardId] = SHARD_END;
          save();
          return;
        }
        if (records.length === 0) await sleep(pollIntervalMs, stopping.signal);
      } catch (error) {
        // Stopped mid-batch: no checkpoint, so the next run hands the batch over again.
        if (stopping.signal.aborted || error instanceof Stopped) return;
        if (error instanceof ExpiredIteratorException || error instanceof TrimmedDataAccessException) {
          // Start again from the checkpoint; records not yet handed over are read again.
          iterator = undefined;
          pending = [];
          if (error instanceof TrimmedDataAccessException) delete checkpoints.shards[shardId];
          continue;
        }
        options.onError?.(`reading stream shard ${shardId} failed`, error);
        iterator = undefined;
        pending = [];
        await sleep(1_000, stopping.signal);
      }
    }
  }

  function toLambdaRecord(record: StreamRecord): LambdaStreamRecord {
    const stream = record.dynamodb ?? {};
    return {
      eventID: record.eventID ?? randomUUID(),
      eventName: record.eventName ?? "",
      eventVersion: record.eventVersion ?? "1.1",
      eventSource: "aws:dynamodb",
      awsRegion: options.region,
      eventSourceARN: options.streamArn,
      dynamodb: {
        ApproximateCreationDateTime: Math.floor(
          (stream.ApproximateCreationDateTime?.getTime() ?? Date.now()) / 1000,
        ),
        ...(stream.Keys ? { Keys: lambdaAttributes(stream.Keys) } : {}),
        ...(stream.NewImage ? { NewImage: lambdaAttributes(stream.NewImage) } : {}),
        ...(stream.OldImage ? { OldImage: lambdaAttributes(stream.OldImage) } : {}),
        SequenceNumber: stream.SequenceNumber ?? "",
        SizeBytes: stream.SizeBytes ?? 0,
        StreamViewType: stream.StreamViewType ?? "NEW_AND_OLD_IMAGES",
      },
    };
  }

  async function handleBatch(shardId: string, batch: StreamRecord[]): Promise<void> {
    const records = batch.map(toLambdaRecord);
    const passing = records.filter((record) => matchesAny(definition.filters, record));
    if (passing.length > 0) await deliver(shardId, passing, definition.retryAttempts);
    const last = records.at(-1)?.dynamodb.SequenceNumber;
    if (last) {
      checkpoints.shards[shardId] = last;
      save();
    }
  }

  /** Invokes until the batch succeeds, halving on error, then hands what still fails to the destination. */
  async function deliver(shardId: string, records: LambdaStreamRecord[], retriesLeft: number): Promise<void> {
    let retries = retriesLeft;
    let invocations = 0;
    for (;;) {
      invocations++;
      try {
        await invokeFunction(options.fn, { Records: records });
        return;
      } catch (error) {
        options.onError?.(`${options.fn.name} failed on ${records.length} stream records`, error);
      }
      if (definition.bisectBatchOnFunctionError && records.length > 1) {
        const half = Math.ceil(records.length / 2);
        await deliver(shardId, records.slice(0, half), retries);
        await deliver(shardId, records.slice(half), retries);
        return;
      }
      const oldest = Math.min(...records.map((record) => record.dynamodb.ApproximateCreationDateTime));
      const tooOld = Date.now() / 1000 - oldest > definition.maxRecordAgeSeconds;
      if (stopping.signal.aborted) throw new Stopped();
      if (retries <= 0 || tooOld) {
        await options.onFailure(failureDocument(shardId, records, invocations, tooOld));
        return;
      }
      await sleep(
        Math.min(5_000, (options.retryDelayMs ?? 500) * 2 ** (retriesLeft - retries)),
        stopping.signal,
      );
      if (stopping.signal.aborted) throw new Stopped();
      retries--;
    }
  }

  function failureDocument(
    shardId: string,
    records: LambdaStreamRecord[],
    invocations: number,
    tooOld: boolean,
  ): Record<string, unknown> {
    const first = records[0]?.dynamodb;
    const last = records.at(-1)?.dynamodb;
    return {
      requestContext: {
        requestId: randomUUID(),
        functionArn: `arn:aws:lambda:${options.region}:123456789012:function:${options.fn.name}`,
        condition: tooOld ? "RecordAgeExceeded" : "RetryAttemptsExhausted",
        approximateInvokeCount: invocations,
      },
      responseContext: { statusCode: 200, executedVersion: "$LATEST", functionError: "Unhandled" },
      version: "1.0",
      timestamp: new Date().toISOString(),
      DDBStreamBatchInfo: {
        shardId,
        startSequenceNumber: first?.SequenceNumber,
        endSequenceNumber: last?.SequenceNumber,
        approximateArrivalOfFirstRecord: new Date(
          (first?.ApproximateCreationDateTime ?? 0) * 1000,
        ).toISOString(),
        approximateArrivalOfLastRecord: new Date(
          (last?.ApproximateCreationDateTime ?? 0) * 1000,
        ).toISOString(),
        batchSize: records.length,
        streamArn: options.streamArn,
      },
    };
  }

  const discovery = (async () => {
    let initial = true;
    while (!stopping.signal.aborted) {
      try {
        await discover(initial);
        initial = false;
      } catch (error) {
        if (!stopping.signal.aborted) options.onError?.("listing stream shards failed", error);
      }
      await sleep(1_000, stopping.signal);
    }
  })();

  return {
    async stop() {
      stopping.abort();
      await discovery;
      await Promise.allSettled([...readers.values()]);
    },
  };
}

class Stopped extends Error {}

function loadCheckpoints(file: string | undefined, streamArn: string): Checkpoints {
  if (file) {
    try {
      const stored = JSON.parse(readFileSync(file, "utf8")) as Checkpoints;
      // A checkpoint of another stream (the table was re-created) means nothing for this one.
      if (stored.streamArn === streamArn && typeof stored.shards === "object") return stored;
    } catch {
      // No checkpoint yet.
    }
  }
  return { streamArn, shards: {} };
}

/** The SDK's attribute values (binary as bytes) in the event's JSON form (binary as base64). */
function lambdaAttributes(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, lambdaAttribute(value)]));
}

function lambdaAttribute(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  const attribute = value as Record<string, unknown>;
  if (attribute.B instanceof Uint8Array) return { B: Buffer.from(attribute.B).toString("base64") };
  if (Array.isArray(attribute.BS))
    return { BS: attribute.BS.map((bytes: Uint8Array) => Buffer.from(bytes).toString("base64")) };
  if (Array.isArray(attribute.L)) return { L: attribute.L.map(lambdaAttribute) };
  if (attribute.M && typeof attribute.M === "object")
    return { M: lambdaAttributes(attribute.M as Record<string, unknown>) };
  return attribute;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
