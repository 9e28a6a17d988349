/**
 * A runtime of its own for fault tests. Stalling DynamoDB Local (SIGSTOP) would stall every test
 * that shares the suite's runtime, so each fault test file starts this one: the local runtime in a
 * process of its own (test/support/fault-runtime-main.ts), with its own in-memory DynamoDB Local,
 * the functions reaching it through a tap (test/support/dynamodb-tap.ts) that can stall the table
 * at a chosen call. Seeding goes straight to the table, through the same domain functions as the
 * operator CLI; requests go over HTTP, as a client's would.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { createApiKey } from "#functions/domain/api-keys";
import { addKnowledgeEntry, type ChatbotSettings, createChatbot } from "#functions/domain/chatbots";
import { type DomainContext, systemClock } from "#functions/domain/context";
import { createOrganization } from "#functions/domain/organizations";
import { createDb } from "#functions/store/dynamodb";
import {
  type CallRecording,
  type DynamoDbTap,
  startDynamoDbTap,
  type TableCall,
} from "#test/support/dynamodb-tap";

const root = resolve(import.meta.dirname, "../..");

export interface FaultTenant {
  organizationId: string;
  apiKey: string;
  chatbotId: string;
}

export interface FaultResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
  /** Milliseconds from sending the request to the end of the answer. */
  elapsedMs: number;
}

export interface FaultRuntime {
  baseUrl: string;
  /** Base URL of the streaming endpoint (the runtime's function URL). */
  streamUrl: string;
  /** The runtime's cognito-local: sign people in for the management API. */
  cognito: { endpoint: string; userPoolId: string; clientId: string };
  /** Seeding and reading the table directly. */
  domain: DomainContext;
  /** Stops the table from answering: SIGSTOP on DynamoDB Local, until resumeTable(). */
  stallTable(): void;
  resumeTable(): void;
  /** Stalls the table when the first call matching `match` arrives; resolves once it did. */
  stallTableAt(match: (call: TableCall) => boolean): Promise<TableCall>;
  /** Records the table calls from now on, each answer held `holdMs` (dynamodb-tap.ts). */
  recordTableCalls(holdMs: number): CallRecording;
  seedTenant(
    chatbot?: Partial<ChatbotSettings>,
    knowledge?: { question: string; answer: string }[],
  ): Promise<FaultTenant>;
  /** A request to the API; with `stream`, to the stream URL (the text then holds the events). */
  call<T = Record<string, unknown>>(
    method: string,
    path: string,
    options?: { key?: string; body?: unknown; headers?: Record<string, string>; stream?: boolean },
  ): Promise<FaultResponse<T>>;
  /** The conversations of an organization with this external id, read from the table. */
  conversationsWithExternalId(organizationId: string, externalId: string): Promise<string[]>;
  /** The runtime's output so far (function logs, supervision lines). */
  log(): string;
  stop(): Promise<void>;
}

export interface FaultRuntimeOptions {
  /** Extra environment for the runtime (e.g. endpoints of fakes the test runs). */
  environment?: Record<string, string>;
}

export async function startFaultRuntime(options: FaultRuntimeOptions = {}): Promise<FaultRuntime> {
  const work = mkdtempSync(join(tmpdir(), "chatbot-faults-"));
  const runtimeFile = join(work, "runtime.json");
  const logFile = join(work, "runtime.log");
  mkdirSync(join(work, "build"));
  const tap = await startDynamoDbTap();
  let child: ChildProcess | undefined;
  try {
    child = spawn(resolve(root, "node_modules/.bin/tsx"), ["test/support/fault-runtime-main.ts"], {
      cwd: root,
      stdio: ["ignore", openSync(logFile, "a"), openSync(logFile, "a")],
      env: {
        ...process.env,
        FAULT_RUNTIME_FILE: runtimeFile,
        FAULT_TABLE_ENDPOINT: tap.url,
        FAULT_BUILD_DIRECTORY: join(work, "build"),
        // No sample shop: the tests bring what they need.
        TOOL_HTTP_ORIGIN_OVERRIDES: "{}",
        LOG_LEVEL: "info",
        ...options.environment,
      },
    });
    const started = child;
    const deadline = Date.now() + 120_000;
    while (!existsSync(runtimeFile)) {
      if (started.exitCode !== null) {
        throw new Error(`the fault runtime exited (${started.exitCode}):\n${readFileSync(logFile, "utf8")}`);
      }
      if (Date.now() > deadline) throw new Error("timed out waiting for the fault runtime");
      await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    }
    const info = JSON.parse(readFileSync(runtimeFile, "utf8")) as {
      baseUrl: string;
      streamUrl: string;
      tableName: string;
      dynamoDbEndpoint: string;
      dynamoDbPid: number;
      cognito: FaultRuntime["cognito"];
    };
    tap.setUpstream(info.dynamoDbEndpoint);
    const client = new DynamoDBClient({
      endpoint: info.dynamoDbEndpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    });
    const domain: DomainContext = { db: createDb(info.tableName, client), clock: systemClock };
    return runtimeHandle({ info, domain, tap, child: started, logFile, work });
  } catch (error) {
    child?.kill("SIGKILL");
    await tap.close();
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}

function runtimeHandle(parts: {
  info: { baseUrl: string; streamUrl: string; dynamoDbPid: number; cognito: FaultRuntime["cognito"] };
  domain: DomainContext;
  tap: DynamoDbTap;
  child: ChildProcess;
  logFile: string;
  work: string;
}): FaultRuntime {
  const { info, domain, tap, child, logFile, work } = parts;
  const stallTable = () => process.kill(info.dynamoDbPid, "SIGSTOP");
  const resumeTable = () => process.kill(info.dynamoDbPid, "SIGCONT");
  return {
    baseUrl: info.baseUrl,
    streamUrl: info.streamUrl,
    cognito: info.cognito,
    domain,
    stallTable,
    resumeTable,
    stallTableAt: (match) => tap.stallWhen(match, stallTable),
    recordTableCalls: (holdMs) => tap.record(holdMs),
    async seedTenant(chatbot = {}, knowledge = []) {
      const organization = await createOrganization(domain, {
        name: `Fault org ${randomUUID().slice(0, 8)}`,
        rateLimit: 10_000,
      });
      const key = await createApiKey(domain, { organizationId: organization.organizationId, name: "faults" });
      const bot = await createChatbot(domain, {
        organizationId: organization.organizationId,
        name: "Fault assistant",
        welcomeMessage: "Welcome!",
        fallbackReply: "Sorry, I can't help with that right now.",
        ...chatbot,
      });
      for (const entry of knowledge) {
        await addKnowledgeEntry(domain, {
          organizationId: organization.organizationId,
          chatbotId: bot.chatbotId,
          entry: { kind: "qa", ...entry },
        });
      }
      return { organizationId: organization.organizationId, apiKey: key.apiKey, chatbotId: bot.chatbotId };
    },
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.key) headers.authorization = `Bearer ${options.key}`;
      if (options.body !== undefined) headers["content-type"] = "application/json";
      const started = Date.now();
      const response = await fetch(`${options.stream ? info.streamUrl : info.baseUrl}${path}`, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: the text itself shows what came back.
      }
      return {
        status: response.status,
        headers: response.headers,
        body: body as never,
        text,
        elapsedMs: Date.now() - started,
      };
    },
    async conversationsWithExternalId(organizationId, externalId) {
      const ids: string[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await domain.db.client.send(
          new ScanCommand({
            TableName: domain.db.tableName,
            FilterExpression: "entity = :conversation AND organizationId = :org AND externalId = :external",
            ExpressionAttributeValues: {
              ":conversation": "Conversation",
              ":org": organizationId,
              ":external": externalId,
            },
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
        ids.push(...(page.Items ?? []).map((item) => String(item.conversationId)));
        start = page.LastEvaluatedKey;
      } while (start);
      return ids;
    },
    log: () => readFileSync(logFile, "utf8"),
    async stop() {
      try {
        resumeTable();
      } catch {
        // Already gone.
      }
      if (child.exitCode === null) {
        const exited = new Promise((resolveExit) => child.once("exit", resolveExit));
        child.kill("SIGTERM");
        await Promise.race([exited, new Promise((resolveWait) => setTimeout(resolveWait, 10_000))]);
        child.kill("SIGKILL");
      }
      domain.db.client.destroy();
      await tap.close();
      rmSync(work, { recursive: true, force: true });
    },
  };
}

const busy = (answer: FaultResponse<unknown>) =>
  answer.status === 503 || (answer.status === 409 && answer.text.includes("still being processed"));

/**
 * Sends a request again while the answer says to come back (409 still in progress, 503), waiting
 * as Retry-After says (at most 5 s at a time), for at most `limitMs`. Returns every answer.
 */
export async function retryWhileBusy<T>(
  send: () => Promise<FaultResponse<T>>,
  limitMs = 75_000,
): Promise<FaultResponse<T>[]> {
  const deadline = Date.now() + limitMs;
  const answers: FaultResponse<T>[] = [];
  for (;;) {
    const answer = await send();
    answers.push(answer);
    if (!busy(answer) || Date.now() > deadline) return answers;
    const wait = Math.min(Number(answer.headers.get("retry-after") ?? "1") || 1, 5);
    await new Promise((resolveWait) => setTimeout(resolveWait, wait * 1000));
  }
}
