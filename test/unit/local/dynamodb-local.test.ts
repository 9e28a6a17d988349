/** DynamoDB Local as `npm start` runs it: data kept in a folder, the stack's table created once. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from "@aws-sdk/client-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { ensureTable, localCredentials, localRegion, startDynamoDbLocal } from "#lib/local/dynamodb-local";
import { tableSchema } from "#lib/table-schema";

const root = mkdtempSync(join(tmpdir(), "ddb-local-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("startDynamoDbLocal with a data folder", () => {
  it("creates a missing folder and keeps the table and its items between runs", async () => {
    const dataDirectory = join(root, "not", "there", "yet");
    const clientFor = (endpoint: string) =>
      new DynamoDBClient({ endpoint, region: localRegion, credentials: localCredentials });

    const first = await startDynamoDbLocal({ dataDirectory });
    const client = clientFor(first.endpoint);
    await ensureTable(client, "kept");
    await client.send(new PutItemCommand({ TableName: "kept", Item: { PK: { S: "a" }, SK: { S: "b" } } }));
    client.destroy();
    await first.stop();

    const second = await startDynamoDbLocal({ dataDirectory });
    const again = clientFor(second.endpoint);
    await ensureTable(again, "kept");
    const table = await again.send(new DescribeTableCommand({ TableName: "kept" }));
    const item = await again.send(
      new GetItemCommand({ TableName: "kept", Key: { PK: { S: "a" }, SK: { S: "b" } } }),
    );
    again.destroy();
    await second.stop();

    expect(table.Table?.KeySchema?.map((key) => key.AttributeName)).toEqual([
      tableSchema.partitionKey,
      tableSchema.sortKey,
    ]);
    expect(table.Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName).sort()).toEqual([
      "GSI1",
      "GSI2",
    ]);
    expect(item.Item).toEqual({ PK: { S: "a" }, SK: { S: "b" } });
  }, 60_000);
});
