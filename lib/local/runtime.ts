/**
 * The local runtime: DynamoDB Local with the stack's table, every function bundled exactly as for
 * Lambda, and the HTTP API emulator wired from the same route table as the stack.
 */
import { resolve } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { allFunctions, authorizer, authorizerSettings, routeMiss, routes } from "../routes.ts";
import {
  ensureTable,
  localCredentials,
  localRegion,
  type RunningDynamoDb,
  startDynamoDbLocal,
} from "./dynamodb-local.ts";
import { bundleFunctions, loadFunctions } from "./functions.ts";
import { type RunningEmulator, startHttpApiEmulator } from "./http-api-emulator.ts";

export const repositoryRoot = resolve(import.meta.dirname, "../..");
export const localDirectory = resolve(repositoryRoot, ".local");

export interface LocalRuntimeOptions {
  /** 0 picks a free port. */
  port: number;
  host?: string;
  /** Keep DynamoDB Local's data here between runs; absent: in memory. */
  dataDirectory?: string;
  tableName?: string;
  /** Extra environment for the functions (e.g. endpoints of local fakes). */
  environment?: Record<string, string>;
}

export interface LocalRuntime {
  baseUrl: string;
  tableName: string;
  dynamoDbEndpoint: string;
  /** A DynamoDB client for the local table (seeding, the operator CLI). */
  dynamoDb: DynamoDBClient;
  stop(): Promise<void>;
}

export async function startLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const tableName = options.tableName ?? "chatbot-api-local";
  let dynamo: RunningDynamoDb | undefined;
  let emulator: RunningEmulator | undefined;
  try {
    dynamo = await startDynamoDbLocal(options.dataDirectory ? { dataDirectory: options.dataDirectory } : {});
    const dynamoDb = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: localRegion,
      credentials: localCredentials,
    });
    await ensureTable(dynamoDb, tableName);

    // The functions run in this process and read their configuration from its environment, as
    // they read the environment the stack gives them on Lambda.
    Object.assign(process.env, {
      TABLE_NAME: tableName,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_REGION: process.env.AWS_REGION ?? localRegion,
      LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
      MODEL_SECRETS: process.env.MODEL_SECRETS ?? `local:${resolve(localDirectory, "secrets")}`,
      ...(process.env.AWS_ACCESS_KEY_ID
        ? {}
        : {
            AWS_ACCESS_KEY_ID: localCredentials.accessKeyId,
            AWS_SECRET_ACCESS_KEY: localCredentials.secretAccessKey,
          }),
      ...options.environment,
    });

    const bundles = await bundleFunctions(allFunctions, resolve(localDirectory, "build"));
    const functions = await loadFunctions(allFunctions, bundles, "local");
    const fn = (id: string) => {
      const found = functions.get(id);
      if (!found) throw new Error(`function ${id} missing`);
      return found;
    };
    emulator = await startHttpApiEmulator({
      port: options.port,
      ...(options.host ? { host: options.host } : {}),
      routes: routes.map((route) => ({
        method: route.method,
        path: route.path,
        fn: fn(route.id),
        authorized: route.auth === "apiKey",
      })),
      defaultRoute: fn(routeMiss.id),
      authorizer: {
        fn: fn(authorizer.id),
        identitySource: authorizerSettings.identitySource,
        resultsCacheTtlSeconds: authorizerSettings.resultsCacheTtlSeconds,
      },
    });
    const running = { dynamo, emulator };
    return {
      baseUrl: emulator.baseUrl,
      tableName,
      dynamoDbEndpoint: dynamo.endpoint,
      dynamoDb,
      stop: async () => {
        await running.emulator.close();
        dynamoDb.destroy();
        await running.dynamo.stop();
      },
    };
  } catch (error) {
    await emulator?.close();
    await dynamo?.stop();
    throw error;
  }
}
