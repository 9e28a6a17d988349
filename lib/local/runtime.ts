/**
 * The local runtime: DynamoDB Local with the stack's table, cognito-local with the stack's user pool
 * and console client, every function bundled exactly as for Lambda, and the HTTP API emulator
 * wired from the same route table as the stack (both authorizers), and the stream function behind
 * an emulator of a Lambda function URL in response-streaming mode. The webhook pipeline runs on local counterparts built from lib/event-sources.ts, as the stack is: the table's
 * stream read by an emulator of Lambda's DynamoDB Streams event source mapping, a local SQS
 * (fauxqs) with the stack's queues, and an emulator of Lambda's SQS event source mapping.
 *
 * Webhooks locally: signing secrets are sealed with a key file instead of KMS
 * (WEBHOOK_SECRETS_KEY_FILE, default .local/webhook-secrets.key); an endpoint on a loopback
 * address:port named in OUTBOUND_ALLOW_PRIVATE is reachable, over plain http too; WEBHOOK_* timings
 * compress the retry schedule (functions/webhooks/timings.ts).
 *
 * Look-up tools locally: credentials are sealed with a key file instead of KMS
 * (TOOL_CREDENTIALS_KEY_FILE, default .local/tool-credentials.key), and a sample shop (the five
 * platform fakes) answers for the platforms' real origins (TOOL_HTTP_ORIGIN_OVERRIDES). The
 * outbound-address guard lets fetches reach exactly the fakes' loopback endpoints
 * (OUTBOUND_ALLOW_PRIVATE: the caller's entries plus every override target), and nothing else on
 * this machine. Only this runtime sets those variables, and the functions ignore them on Lambda. A
 * caller that brings its own platforms (the test suite) sets TOOL_HTTP_ORIGIN_OVERRIDES itself, and
 * no sample shop is started.
 *
 * Model engines locally: the model API keys admins paste are sealed with a key file instead of KMS
 * (MODEL_KEYS_KEY_FILE, default .local/model-keys.key). Every model call passes the same guard: a
 * model server on this machine (a local Ollama on 127.0.0.1:11434) is reached once its endpoint is
 * in OUTBOUND_ALLOW_PRIVATE. BEDROCK_MODEL_IDS and CUSTOM_MODEL_SERVERS are read from the
 * environment as on the stack (agent/engine-options.ts).
 */
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { describeError, log as jsonLog } from "#functions/log";
import { parseAllowedEndpoint } from "#functions/net/outbound-address";
import { type PlatformFakes, startPlatformFakes } from "#test/fakes/platforms/index";
import { allQueues, eventFunctions, queueSources, queues, streamSources } from "../event-sources.ts";
import { allKnowledgeQueues, knowledgeBucket } from "../knowledge-pipeline.ts";
import {
  allFunctions,
  authorizer,
  authorizerSettings,
  corsPreflight,
  manageAuthorizer,
  routeMiss,
  routes,
  streamRoute,
  widgetPaths,
} from "../routes.ts";
import { type RunningCognito, startCognitoLocal } from "./cognito-local.ts";
import {
  ensureTable,
  localCredentials,
  localRegion,
  type SupervisedDynamoDb,
  superviseDynamoDbLocal,
} from "./dynamodb-local.ts";
import { type RunningFunctionUrl, startFunctionUrlEmulator } from "./function-url-emulator.ts";
import { bundleFunctions, type InitDurations, loadFunctions } from "./functions.ts";
import {
  type AuthorizerContextShape,
  type RunningEmulator,
  startHttpApiEmulator,
} from "./http-api-emulator.ts";
import { type RunningModelStandIn, startModelStandIn } from "./model-stand-in.ts";
import { type RunningS3, startLocalS3 } from "./s3-local.ts";
import { type RunningSqsEventSource, startSqsEventSource } from "./sqs-event-source.ts";
import { type RunningSqs, startLocalSqs } from "./sqs-local.ts";
import { type RunningStreamEventSource, startStreamEventSource } from "./stream-event-source.ts";

export const repositoryRoot = resolve(import.meta.dirname, "../..");
export const localDirectory = resolve(repositoryRoot, ".local");

export interface LocalRuntimeOptions {
  /** 0 picks a free port. */
  port: number;
  host?: string;
  /** Keep DynamoDB Local's data here between runs; absent: in memory. */
  dataDirectory?: string;
  /** Keep the local SQS's queues and messages, and the stream checkpoints, here; absent: in memory. */
  eventStateDirectory?: string;
  tableName?: string;
  /** Extra environment for the functions (e.g. endpoints of local fakes). */
  environment?: Record<string, string>;
  /** Hand the authorizer's context to the functions with its types (default) or as strings. */
  authorizerContext?: AuthorizerContextShape;
  /** Keep cognito-local's pool and people here between runs; absent: a temporary folder. */
  cognitoDirectory?: string;
  /** Where invitations and reset codes land (default: .local/mailbox.jsonl). */
  mailboxFile?: string;
  /** Where the function bundles are written (default .local/build); runtimes running side by side need their own. */
  buildDirectory?: string;
  /** Port of the stream function's URL (default: any free port). */
  streamPort?: number;
  /** Load each function on its first invocation, as Lambda does, instead of up front (the benchmark's cold starts). */
  coldStarts?: boolean;
  /** Lines about DynamoDB Local's supervision (it died, is restarting, is back); default: stderr. */
  log?: (line: string) => void;
  /** DynamoDB Local is running again as process `pid`, with its data. */
  onDatabaseRestarted?: (pid: number) => void;
  /**
   * DynamoDB Local is gone for good (in-memory data lost, or it cannot be restarted): the runtime
   * must not go on serving. Default: print `message` and exit the process with status 1.
   */
  onDatabaseLost?: (message: string) => void;
}

export interface LocalRuntime {
  baseUrl: string;
  /** Base URL of the stream function's URL (POST {streamUrl}/api/message/stream). */
  streamUrl: string;
  /** How long each function's init took, once it happened (by function id). */
  initDurations: InitDurations;
  tableName: string;
  dynamoDbEndpoint: string;
  /** DynamoDB Local's (Java) process id; a restart changes it. */
  readonly dynamoDbPid: number;
  /** A DynamoDB client for the local table (seeding, the operator CLI). */
  dynamoDb: DynamoDBClient;
  /** The look-up tools' settings the functions got; the operator CLI needs the same (runtime.json). */
  toolEnvironment: Record<string, string>;
  /** The sample shop's platforms (fake base URL by platform), when this runtime started them. */
  sampleShop?: Record<string, string>;
  /** The local Cognito: its endpoint, pool, console client and mailbox. */
  cognito: RunningCognito;
  /** The webhook settings the functions got (key file, queue, local SQS); the CLI and tests need the same. */
  webhookEnvironment: Record<string, string>;
  /** The knowledge bucket and the local S3 the functions use; the CLI and tests need the same. */
  knowledgeEnvironment: Record<string, string>;
  /** Origins the knowledge bucket's CORS rules allow (add the console's once it listens). */
  knowledgeUploadOrigins: string[];
  /**
   * The first step of a shutdown, synchronous: DynamoDB Local and cognito-local are no longer
   * restarted when they exit (Ctrl-C reaches them with the runtime). `stop` does it too.
   */
  stopSupervising(): void;
  /** What the console's host sends as `X-Origin-Verify` (with `X-Viewer-Address`). */
  originVerifySecret: string;
  stop(): Promise<void>;
}

/**
 * The caller's allow-list entries plus the endpoint of every origin-override target on loopback
 * (a target elsewhere needs no allowance if it is public, and gets none if it is not).
 */
function localAllowList(given: string | undefined, overrides: string): string {
  const targets = Object.values(JSON.parse(overrides) as Record<string, string>).flatMap((target) => {
    const url = new URL(target);
    const endpoint = url.port ? url.host : `${url.host}:${url.protocol === "https:" ? 443 : 80}`;
    try {
      parseAllowedEndpoint(endpoint);
      return [endpoint];
    } catch {
      return [];
    }
  });
  return [...(given ? given.split(",") : []), ...targets]
    .map((entry) => entry.trim())
    .filter(Boolean)
    .join(",");
}

/** Where local tool credentials are sealed, unless TOOL_CREDENTIALS_KEY_FILE says otherwise. */
export const localToolKeyFile = resolve(localDirectory, "tool-credentials.key");
/** Where the model API keys admins paste are sealed locally, unless MODEL_KEYS_KEY_FILE says otherwise. */
export const localModelKeysFile = resolve(localDirectory, "model-keys.key");
/** Where local webhook signing secrets are sealed, unless WEBHOOK_SECRETS_KEY_FILE says otherwise. */
export const localWebhookKeyFile = resolve(localDirectory, "webhook-secrets.key");
/** Where local widget identity secrets are sealed, unless WIDGET_SECRETS_KEY_FILE says otherwise. */
export const localWidgetKeyFile = resolve(localDirectory, "widget-secrets.key");

/**
 * The secret by which the API knows a request came through the console's host (CloudFront on AWS,
 * the local console server here), whose `CloudFront-Viewer-Address` then names the visitor's address
 * (functions/http/client-address.ts). Made anew for each run.
 */
export const localOriginVerifySecret = randomBytes(24).toString("base64url");

export async function startLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const tableName = options.tableName ?? "chatbot-api-local";
  let dynamo: SupervisedDynamoDb | undefined;
  let cognito: RunningCognito | undefined;
  let emulator: RunningEmulator | undefined;
  let streamUrl: RunningFunctionUrl | undefined;
  let shop: PlatformFakes | undefined;
  let sqs: RunningSqs | undefined;
  let s3: RunningS3 | undefined;
  const knowledgeUploadOrigins: string[] = [];
  let models: RunningModelStandIn | undefined;
  const sources: (RunningStreamEventSource | RunningSqsEventSource)[] = [];
  try {
    // Bedrock (embeddings, and a grounded stand-in "model") on this machine, unless the caller
    // brings its own server speaking Bedrock's protocol (the test suite's scriptable fake).
    if (!process.env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME) models = await startModelStandIn();
    const ownPlatforms = process.env.TOOL_HTTP_ORIGIN_OVERRIDES;
    if (!ownPlatforms) shop = await startPlatformFakes();
    const overrides = ownPlatforms ?? JSON.stringify(shop?.originOverrides ?? {});
    const toolEnvironment: Record<string, string> = {
      TOOL_CREDENTIALS_KEY_FILE: process.env.TOOL_CREDENTIALS_KEY_FILE ?? localToolKeyFile,
      MODEL_KEYS_KEY_FILE: process.env.MODEL_KEYS_KEY_FILE ?? localModelKeysFile,
      TOOL_HTTP_ORIGIN_OVERRIDES: overrides,
      OUTBOUND_ALLOW_PRIVATE: localAllowList(process.env.OUTBOUND_ALLOW_PRIVATE, overrides),
    };
    const log = options.log ?? ((line: string) => console.error(`[dynamodb-local] ${line}`));
    let dynamoDb: DynamoDBClient | undefined;
    dynamo = await superviseDynamoDbLocal(
      options.dataDirectory ? { dataDirectory: options.dataDirectory } : {},
      {
        log,
        restarted: async (pid) => {
          // The data folder holds the table; make sure of it all the same before saying it is back.
          if (dynamoDb) await ensureTable(dynamoDb, tableName);
          options.onDatabaseRestarted?.(pid);
        },
        failed:
          options.onDatabaseLost ??
          ((message) => {
            console.error(`[dynamodb-local] ${message}`);
            process.exit(1);
          }),
      },
    );
    dynamoDb = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: localRegion,
      credentials: localCredentials,
    });
    const streamArn = await ensureTable(dynamoDb, tableName);
    cognito = await startCognitoLocal({
      mailboxFile: options.mailboxFile ?? resolve(localDirectory, "mailbox.jsonl"),
      ...(options.cognitoDirectory ? { dataDirectory: options.cognitoDirectory } : {}),
    });
    sqs = await startLocalSqs({
      queues: [...allQueues, ...allKnowledgeQueues],
      namePrefix: tableName,
      ...(options.eventStateDirectory
        ? {
            dataDirectory: resolve(options.eventStateDirectory, "sqs"),
            s3Directory: resolve(options.eventStateDirectory, "s3"),
          }
        : {}),
    });
    const queueUrl = (id: string) => {
      const url = sqs?.queueUrls.get(id);
      if (!url) throw new Error(`queue ${id} missing`);
      return url;
    };
    const sqsClient = sqs.client;
    const notificationQueue = queueUrl(knowledgeBucket.notification.queueId);
    s3 = await startLocalS3({
      upstream: sqs.endpoint,
      definition: knowledgeBucket,
      bucketName: `${tableName}-knowledge`.toLowerCase(),
      region: localRegion,
      credentials: localCredentials,
      allowedOrigins: () => knowledgeUploadOrigins,
      notify: async (body) => {
        await sqsClient.send(new SendMessageCommand({ QueueUrl: notificationQueue, MessageBody: body }));
      },
      ...(options.host ? { host: options.host } : {}),
      onError: (message, error) => jsonLog.warn(message, describeError(error)),
    });
    const knowledgeEnvironment: Record<string, string> = {
      KNOWLEDGE_BUCKET: s3.bucketName,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
    };
    const webhookEnvironment: Record<string, string> = {
      WEBHOOK_SECRETS_KEY_FILE: process.env.WEBHOOK_SECRETS_KEY_FILE ?? localWebhookKeyFile,
      WEBHOOK_QUEUE_URL: queueUrl(queues.webhookDeliveries.id),
      CONVERSATION_TIMER_QUEUE_URL: queueUrl(queues.conversationTimers.id),
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
    };

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
      ...toolEnvironment,
      ...(models ? { AWS_ENDPOINT_URL_BEDROCK_RUNTIME: models.endpoint } : {}),
      // Embeddings here come from the stand-ins' concept model, whose similarities sit lower than
      // Titan's: its own bars (calibrated on the retrieval set, test/retrieval/).
      EMBEDDING_SIMILARITY_BARS: process.env.EMBEDDING_SIMILARITY_BARS ?? "0.45,0.25",
      // The people directory and the management authorizer reach cognito-local, as Cognito on AWS.
      AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: cognito.endpoint,
      COGNITO_USER_POOL_ID: cognito.userPoolId,
      COGNITO_CLIENT_ID: cognito.clientId,
      COGNITO_ISSUER: cognito.issuer,
      ...webhookEnvironment,
      ...knowledgeEnvironment,
      WIDGET_SECRETS_KEY_FILE: process.env.WIDGET_SECRETS_KEY_FILE ?? localWidgetKeyFile,
      ORIGIN_VERIFY_SECRET: localOriginVerifySecret,
      ...options.environment,
    });

    const everyFunction = [...allFunctions, ...eventFunctions];
    const bundles = await bundleFunctions(
      everyFunction,
      options.buildDirectory ?? resolve(localDirectory, "build"),
    );
    const initDurations: InitDurations = new Map();
    const functions = await loadFunctions(everyFunction, bundles, "local", {
      initDurations,
      ...(options.coldStarts ? { coldStarts: true } : {}),
    });
    const fn = (id: string) => {
      const found = functions.get(id);
      if (!found) throw new Error(`function ${id} missing`);
      return found;
    };
    emulator = await startHttpApiEmulator({
      port: options.port,
      ...(options.host ? { host: options.host } : {}),
      ...(options.authorizerContext ? { authorizerContext: options.authorizerContext } : {}),
      routes: [
        ...routes.map((route) => ({
          method: route.method,
          path: route.path,
          fn: fn(route.id),
          authorized: route.auth !== "none",
          ...(route.auth === "manage" ? { authorizerName: manageAuthorizer.id } : {}),
        })),
        // The widget's CORS preflights, as the stack routes them: no authorizer.
        ...[...widgetPaths.keys()].map((path) => ({
          method: "OPTIONS",
          path,
          fn: fn(corsPreflight.id),
          authorized: false,
        })),
      ],
      defaultRoute: fn(routeMiss.id),
      defaultRouteAuthorized: routeMiss.auth === "apiKey",
      authorizer: {
        fn: fn(authorizer.id),
        identitySource: authorizerSettings.identitySource,
        resultsCacheTtlSeconds: authorizerSettings.resultsCacheTtlSeconds,
      },
      authorizers: {
        [manageAuthorizer.id]: {
          fn: fn(manageAuthorizer.id),
          identitySource: authorizerSettings.identitySource,
          resultsCacheTtlSeconds: authorizerSettings.resultsCacheTtlSeconds,
        },
      },
    });
    const streams = new DynamoDBStreamsClient({
      endpoint: dynamo.endpoint,
      region: localRegion,
      credentials: localCredentials,
    });
    const onError = (message: string, error: unknown) => jsonLog.warn(message, describeError(error));
    for (const source of streamSources) {
      const failureQueue = queueUrl(source.onFailureQueueId);
      sources.push(
        startStreamEventSource({
          definition: source,
          fn: fn(source.function.id),
          streams,
          streamArn,
          region: localRegion,
          ...(options.eventStateDirectory
            ? {
                checkpointFile: resolve(
                  options.eventStateDirectory,
                  "event-sources",
                  `${tableName}-${source.function.id}.json`,
                ),
              }
            : {}),
          onFailure: async (document) => {
            await sqsClient.send(
              new SendMessageCommand({ QueueUrl: failureQueue, MessageBody: JSON.stringify(document) }),
            );
          },
          onError,
        }),
      );
    }
    for (const source of queueSources) {
      sources.push(
        startSqsEventSource({
          definition: source,
          fn: fn(source.function.id),
          client: sqsClient,
          queueUrl: queueUrl(source.queueId),
          queueArn: sqs.queueArns.get(source.queueId) ?? "",
          region: localRegion,
          onError,
        }),
      );
    }
    // The stream function behind its own URL, as a function URL serves it on AWS.
    streamUrl = await startFunctionUrlEmulator({
      fn: fn(streamRoute.id),
      ...(options.host ? { host: options.host } : {}),
      port: options.streamPort ?? 0,
    });
    const running = { dynamo, cognito, emulator, streamUrl, shop, sqs, s3, dynamoDb, models };
    return {
      baseUrl: emulator.baseUrl,
      streamUrl: streamUrl.baseUrl,
      initDurations,
      tableName,
      dynamoDbEndpoint: dynamo.endpoint,
      get dynamoDbPid() {
        return running.dynamo.pid;
      },
      dynamoDb,
      toolEnvironment,
      cognito,
      webhookEnvironment,
      knowledgeEnvironment,
      knowledgeUploadOrigins,
      originVerifySecret: localOriginVerifySecret,
      ...(shop
        ? {
            sampleShop: {
              woocommerce: shop.woocommerce.baseUrl,
              shopify: shop.shopify.baseUrl,
              lightspeed: shop.lightspeed.baseUrl,
              sendcloud: shop.sendcloud.baseUrl,
              picqer: shop.picqer.baseUrl,
            },
          }
        : {}),
      stopSupervising: () => {
        running.dynamo.stopSupervising();
        running.cognito.stopSupervising();
      },
      stop: async () => {
        // Supervision first: children ended by the same Ctrl-C must not be started again.
        running.dynamo.stopSupervising();
        running.cognito.stopSupervising();
        await Promise.all(sources.map((source) => source.stop()));
        streams.destroy();
        await running.emulator.close();
        await running.streamUrl.close();
        await running.s3.stop();
        await running.sqs.stop();
        running.dynamoDb.destroy();
        await Promise.all([running.dynamo.stop(), running.cognito.stop()]);
        await running.shop?.stop();
        await running.models?.close();
      },
    };
  } catch (error) {
    await Promise.all(sources.map((source) => source.stop()));
    await emulator?.close();
    await streamUrl?.close();
    await s3?.stop();
    await sqs?.stop();
    await dynamo?.stop();
    await cognito?.stop();
    await shop?.stop();
    await models?.close();
    throw error;
  }
}
