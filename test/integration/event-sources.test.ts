/**
 * The local emulator of Lambda's DynamoDB Streams event source mapping, on DynamoDB Local's real
 * stream of the suite's table: checkpoints survive a restart (nothing lost, nothing repeated), and
 * a failing record is isolated by halving the batch, retried a bounded number of times, handed to
 * the failure destination, and the shard moves on. Each test reads only its own organization's
 * items (a filter pattern, as Lambda applies them), with its own checkpoint file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import { afterAll, describe, expect, it } from "vitest";
import { startConversation } from "#functions/domain/conversations";
import type { EmulatedFunction } from "#lib/local/http-api-emulator";
import { type LambdaStreamRecord, startStreamEventSource } from "#lib/local/stream-event-source";
import { domain, environment, isLocal, seedTenant, type Tenant } from "#test/support/harness";
import { eventually } from "#test/support/webhooks";

const work = mkdtempSync(join(tmpdir(), "stream-source-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const credentials = { accessKeyId: "local", secretAccessKey: "local" };

async function streamArn(): Promise<string> {
  const client = new DynamoDBClient({
    endpoint: environment.dynamoDbEndpoint,
    region: environment.region,
    credentials,
  });
  const table = await client.send(new DescribeTableCommand({ TableName: environment.tableName }));
  client.destroy();
  return table.Table?.LatestStreamArn ?? "";
}

/** A recording function; `fails` decides which records make an invocation throw. */
function recorder(fails: (record: LambdaStreamRecord) => boolean = () => false) {
  const invocations: LambdaStreamRecord[][] = [];
  const fn: EmulatedFunction = {
    name: "test-recorder",
    timeoutSeconds: 10,
    memoryMb: 128,
    handler: async (event) => {
      const records = (event as { Records: LambdaStreamRecord[] }).Records;
      invocations.push(records);
      if (records.some(fails)) throw new Error("poison record");
      return null;
    },
  };
  return { fn, invocations };
}

const conversationOf = (record: LambdaStreamRecord) =>
  ((record.dynamodb.NewImage as Record<string, { S?: string }> | undefined)?.conversationId?.S ??
    "") as string;

async function conversations(tenant: Tenant, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push(
      (
        await startConversation(domain(), {
          organizationId: tenant.organizationId,
          chatbotId: tenant.chatbotId,
        })
      ).conversationId,
    );
  }
  return ids;
}

describe.runIf(isLocal)("the DynamoDB Streams event source emulator", () => {
  const definition = (tenant: Tenant) => ({
    startingPosition: "TRIM_HORIZON" as const,
    batchSize: 10,
    maxBatchingWindowSeconds: 0,
    bisectBatchOnFunctionError: true,
    retryAttempts: 2,
    maxRecordAgeSeconds: 3_600,
    // Only this test's organization's conversations, as inserted.
    filters: [
      {
        eventName: ["INSERT"],
        dynamodb: {
          NewImage: { entity: { S: ["Conversation"] }, organizationId: { S: [tenant.organizationId] } },
        },
      },
    ],
  });

  it("resumes from its checkpoint after a restart: every record once, none lost", async () => {
    // Prepare
    const tenant = await seedTenant();
    const arn = await streamArn();
    const checkpointFile = join(work, "restart.json");
    const streams = new DynamoDBStreamsClient({
      endpoint: environment.dynamoDbEndpoint,
      region: environment.region,
      credentials,
    });
    const { fn, invocations } = recorder();
    const seen = () => invocations.flat().map(conversationOf);
    const start = () =>
      startStreamEventSource({
        definition: definition(tenant),
        fn,
        streams,
        streamArn: arn,
        region: environment.region,
        checkpointFile,
        onFailure: async () => undefined,
        pollIntervalMs: 100,
      });
    // Act: three before the restart, three while stopped, three after.
    const first = start();
    const before = await conversations(tenant, 3);
    await eventually(
      async () => seen(),
      (list) => list.length >= 3,
    );
    await first.stop();
    const whileStopped = await conversations(tenant, 3);
    const second = start();
    const after = await conversations(tenant, 3);
    await eventually(
      async () => seen(),
      (list) => list.length >= 9,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await second.stop();
    streams.destroy();
    // Assess
    expect(seen().sort()).toEqual([...before, ...whileStopped, ...after].sort());
  });

  it("halves a failing batch down to the bad record, retries it a bounded number of times, reports it and moves on", async () => {
    // Prepare
    const tenant = await seedTenant();
    const arn = await streamArn();
    const streams = new DynamoDBStreamsClient({
      endpoint: environment.dynamoDbEndpoint,
      region: environment.region,
      credentials,
    });
    const ids = await conversations(tenant, 4);
    const poison = ids[1] ?? "";
    const { fn, invocations } = recorder((record) => conversationOf(record) === poison);
    const failures: Record<string, unknown>[] = [];
    // Act
    const source = startStreamEventSource({
      definition: definition(tenant),
      fn,
      streams,
      streamArn: arn,
      region: environment.region,
      onFailure: async (document) => {
        failures.push(document);
      },
      pollIntervalMs: 100,
      retryDelayMs: 50,
    });
    await eventually(
      async () => failures,
      (list) => list.length >= 1,
    );
    const later = await conversations(tenant, 1);
    await eventually(
      async () => invocations.flat().map(conversationOf),
      (list) => later.every((id) => list.includes(id)),
    );
    await source.stop();
    streams.destroy();
    // Assess: every good record was handed over successfully; the poison one alone, 1 + 2 retries.
    const alone = invocations.filter(
      (batch) => batch.length === 1 && conversationOf(batch[0] as LambdaStreamRecord) === poison,
    );
    expect(alone).toHaveLength(3);
    const succeeded = invocations
      .filter((batch) => !batch.some((record) => conversationOf(record) === poison))
      .flat()
      .map(conversationOf);
    for (const id of [...ids.filter((id) => id !== poison), ...later]) expect(succeeded).toContain(id);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      requestContext: { condition: "RetryAttemptsExhausted", approximateInvokeCount: 3 },
      DDBStreamBatchInfo: { batchSize: 1, streamArn: arn },
    });
  });
});
