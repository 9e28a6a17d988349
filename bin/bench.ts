/**
 * `npm run bench`: figures, not assertions.
 *
 * 1. Per function: bundle size (all files, and what loads at init: index.mjs and the chunks it
 *    imports statically) and init time (a fresh Node process imports the bundle; CPU and wall time
 *    of 31 rounds), beside two floors in the same run: the same AWS SDK clients and commands
 *    imported and nothing else (built with and without our SDK-import plugin, the lighter build
 *    counting), and the same clients also constructed. Compared by the least runs and, steadier,
 *    by the median of the per-round ratios.
 * 2. DynamoDB calls per request on a warm path, and the capacity units they consume, counted by a
 *    proxy in front of DynamoDB Local that reads each call (and asks DynamoDB Local for its
 *    consumed capacity), split into the key check's and the handler's; and the sequential round
 *    trips of each kind of message turn (the longest chain of calls each sent after the previous
 *    one was answered, the proxy holding every answer a while: test/support/round-trips.ts).
 * 3. A message turn: the handler's own time with a zero-delay local model, streaming or not, and
 *    the key check's (the authorizer's, or the stream function's own).
 * 4. Time to first token and to the complete reply, streaming against non-streaming, with a local
 *    model writing 50 tokens a second.
 * 5. A cold first request through the emulator: each function loaded on its first invocation.
 * 6. AWS cost per million message turns at model latencies of 0.5, 2 and 5 s, from the figures
 *    above and the prices in `prices` (docs/architecture.md says where they come from).
 * 7. A stalled table (DynamoDB Local under SIGSTOP): how long each route takes to answer its 503.
 * 8. Webhooks (bin/bench-webhooks.ts): a turn's latency with and without endpoints, the delay from
 *    a turn to its message.created delivery, events delivered per second, pipeline calls per event.
 * 9. Answering from knowledge (bin/bench-knowledge.ts): recall@5 and MRR of lexical, semantic and
 *    hybrid retrieval over the retrieval set, search time at 1,000 / 10,000 / 100,000 passages, a
 *    turn's added latency and table calls, and the cost per million turns.
 * 11. The website widget (bin/bench-widget.ts): its sizes, gzip and brotli, before and after the chat
 *    opens; in Chromium, the time from its script tag to the launcher painted and from send to the
 *    first streamed words. (Its session route's table calls are in section 2.)
 *
 * `npm run bench -- --calls` leaves out 1 and 5 (which bundle and load every function).
 * `npm run bench -- --knowledge` runs 9 alone.
 * `npm run bench -- --analytics` runs 10 alone: what the analytics counters cost
 *    (bin/bench-analytics.ts; also run by the full bench).
 * `npm run bench -- --sizes SendMessage,StreamMessage` runs 1 alone, for the functions named.
 * `npm run bench -- --widget` runs 11 alone.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  AdminCreateUserCommand,
  AdminSetUserPasswordCommand,
} from "@aws-sdk/client-cognito-identity-provider";
import type { Metafile } from "esbuild";
import { createApiKey } from "#functions/domain/api-keys";
import { createChatbot } from "#functions/domain/chatbots";
import { systemClock } from "#functions/domain/context";
import { createCognitoDirectory } from "#functions/domain/directory";
import { createOrganization } from "#functions/domain/organizations";
import { grantOperator, inviteMember } from "#functions/domain/people";
import { addTool } from "#functions/domain/tools";
import { updateWidgetSettings } from "#functions/domain/widget-settings";
import { envelopeCipherFor } from "#functions/secrets/envelope";
import { createDb } from "#functions/store/dynamodb";
import { toolEnvironment } from "#functions/tools/environment";
import { bundleFunction, handlerFile, outputsReached } from "#lib/bundling";
import { eventFunctions } from "#lib/event-sources";
import { demoOrder, demoPassword } from "#lib/local/demo";
import { type LocalRuntime, startLocalRuntime } from "#lib/local/runtime";
import { allFunctions, authorizer, streamRoute } from "#lib/routes";
import { signIn } from "#lib/sign-in";
import { converseStream, converseText } from "#test/fakes/bedrock-server";
import { bedrockControl, startKeyedBedrock } from "#test/fakes/keyed-bedrock";
import { wooDemo } from "#test/fakes/platforms/woocommerce";
import { sequentialRoundTrips } from "#test/support/round-trips";
import { printAnalyticsFigures } from "./bench-analytics.ts";
import { printKnowledgeFigures } from "./bench-knowledge.ts";
import { type Call, countingProxy } from "./bench-table-proxy.ts";
import { measureWebhooks, printWebhookFigures } from "./bench-webhooks.ts";
import { measureWidget, printWidgetFigures } from "./bench-widget.ts";

const root = resolve(import.meta.dirname, "..");
const INIT_RUNS = 31;
const TURNS = 30;
const TOKEN_RUNS = 5;
/** The local model's pace (50 tokens a second) and the reply's length. */
const TOKEN_INTERVAL_MS = 20;
const REPLY_TOKENS = 100;
const work = mkdtempSync(join(tmpdir(), "chatbot-bench-"));

/**
 * us-east-1 list prices (first tier), as published on 2026-11-21: Lambda requests and arm64
 * duration, HTTP API requests, DynamoDB on-demand request units, CloudWatch Logs ingestion.
 * A function URL costs nothing extra, nor does a streamed response's first 6 MB.
 */
const prices = {
  date: "2026-11-21",
  lambdaRequest: 0.2 / 1e6,
  lambdaArmGbSecond: 0.0000133334,
  httpApiRequest: 1.0 / 1e6,
  writeRequestUnit: 0.625 / 1e6,
  readRequestUnit: 0.125 / 1e6,
  logIngestionGb: 0.5,
} as const;

// ---------- 1. size and init time ----------

/** The AWS SDK client packages a bundle contains, and the client class each exports. */
const sdkClients: Record<string, string> = {
  "@aws-sdk/client-dynamodb": "DynamoDBClient",
  "@aws-sdk/lib-dynamodb": "DynamoDBDocumentClient",
  "@aws-sdk/client-bedrock-runtime": "BedrockRuntimeClient",
  "@aws-sdk/client-secrets-manager": "SecretsManagerClient",
  "@aws-sdk/client-kms": "KMSClient",
  "@aws-sdk/client-sqs": "SQSClient",
  "@aws-sdk/client-cognito-identity-provider": "CognitoIdentityProviderClient",
};

interface Bundle {
  directory: string;
  /** All files: what is deployed. */
  totalKb: number;
  /** index.mjs and the chunks it imports statically: what a cold start reads and runs. */
  initKb: number;
  metafile: Metafile;
}

async function bundle(entry: string, directory: string, sdkImports = true): Promise<Bundle> {
  const result = await bundleFunction(entry, directory, {
    nodePaths: [resolve(root, "node_modules")],
    sdkImports,
  });
  const metafile = result.metafile as Metafile;
  const outputs = metafile.outputs;
  const totalKb = Object.values(outputs).reduce((sum, output) => sum + output.bytes, 0) / 1024;
  const loaded = outputsReached(metafile, { atInit: true });
  const initKb = [...loaded].reduce((sum, file) => sum + (outputs[file]?.bytes ?? 0), 0) / 1024;
  return { directory, totalKb, initKb, metafile };
}

function clientsIn(metafile: Metafile): string[] {
  const inputs = Object.keys(metafile.inputs);
  return Object.keys(sdkClients).filter((name) =>
    inputs.some((input) => input.includes(`node_modules/${name}/`)),
  );
}

/**
 * The AWS SDK symbols the function's own source files import (clients, commands, exceptions), per
 * package: what the floor bundle imports, so it holds the same SDK code and nothing else.
 */
function sdkImportsIn(metafile: Metafile): Map<string, Set<string>> {
  const symbols = new Map<string, Set<string>>();
  for (const input of Object.keys(metafile.inputs)) {
    if (input.includes("node_modules") || !input.endsWith(".ts")) continue;
    const source = readFileSync(resolve(root, input), "utf8");
    for (const match of source.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+"(@aws-sdk\/[^"]+)"/g)) {
      const [, typeOnly, names = "", from = ""] = match;
      if (typeOnly) continue;
      const set = symbols.get(from) ?? new Set<string>();
      for (const name of names
        .split(",")
        .map((part) => part.trim())
        .filter(Boolean)) {
        if (!name.startsWith("type ")) set.add(name.split(/\s+as\s+/)[0] ?? name);
      }
      if (set.size > 0) symbols.set(from, set);
    }
  }
  return symbols;
}

/** Init of a bundle in a fresh process: [wall ms, CPU ms]. Lambda's streaming globals are there first, as on Lambda. */
function initOf(file: string): [number, number] {
  const script = `globalThis.awslambda={streamifyResponse:h=>h,HttpResponseStream:{from:s=>s}};const c=process.cpuUsage();const t=performance.now();await import(${JSON.stringify(file)});const u=process.cpuUsage(c);process.stdout.write(JSON.stringify([performance.now()-t,(u.user+u.system)/1000]));`;
  return JSON.parse(
    execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      env: { ...process.env, TABLE_NAME: "bench", AWS_REGION: "eu-west-1" },
    }),
  ) as [number, number];
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

interface SizeRow {
  fn: string;
  clients: string[];
  ours: Bundle;
  floor: Bundle | undefined;
  /** CPU ms [least, median] of the runs: ours, the floor, the floor with its clients constructed. */
  init: [number, number];
  floorInit: [number, number] | undefined;
  constructedInit: [number, number] | undefined;
  /**
   * Ours over the floor, run by run (each run imports ours, then the floor, then the constructed
   * floor, so a pair shares the machine's state): the median of the per-run ratios, minus 1, in %.
   */
  paired: { cpuVsFloor: number; wallVsFloor: number; cpuVsConstructed: number } | undefined;
}

/** The median of ours[i] / theirs[i] over the runs, as a % over; NaN without a partner series. */
function pairedOver(ours: number[], theirs: number[]): number {
  if (theirs.length !== ours.length || ours.length === 0) return Number.NaN;
  return (median(ours.map((value, i) => value / (theirs[i] ?? Number.NaN))) - 1) * 100;
}

async function measureSizes(only: ReadonlySet<string> | undefined): Promise<SizeRow[]> {
  const rows: SizeRow[] = [];
  for (const definition of [...allFunctions, ...eventFunctions]) {
    if (only && !only.has(definition.id)) continue;
    const ours = await bundle(resolve(root, definition.entry), join(work, definition.id));
    const clients = clientsIn(ours.metafile);
    /** The floor built as ours is (SDK-import plugin) and as esbuild alone builds it: the lighter counts. */
    let floors: [Bundle, Bundle] | undefined;
    let constructed: Bundle | undefined;
    if (clients.length > 0) {
      // The floors: the same SDK clients and commands, imported as the function imports them,
      // nothing else; and the same again with each client constructed, as a function does once.
      const imports = sdkImportsIn(ours.metafile);
      for (const name of clients) {
        const client = sdkClients[name];
        if (client) imports.set(name, new Set([...(imports.get(name) ?? []), client]));
      }
      const lines = [...imports].map(
        ([from, names], i) =>
          `import { ${[...names].map((name, j) => `${name} as s${i}_${j}`).join(", ")} } from ${JSON.stringify(from)};`,
      );
      const exported = [...imports].flatMap(([, names], i) => [...names].map((_, j) => `s${i}_${j}`));
      const aliasOf = (from: string, name: string) => {
        const entries = [...imports];
        const i = entries.findIndex(([pkg]) => pkg === from);
        const j = [...(entries[i]?.[1] ?? [])].indexOf(name);
        return i < 0 || j < 0 ? undefined : `s${i}_${j}`;
      };
      const construct: string[] = [];
      for (const from of clients) {
        if (from === "@aws-sdk/lib-dynamodb") continue;
        const made = `new ${aliasOf(from, sdkClients[from] ?? "")}({})`;
        const documentClient = aliasOf("@aws-sdk/lib-dynamodb", "DynamoDBDocumentClient");
        construct.push(
          from === "@aws-sdk/client-dynamodb" && documentClient ? `${documentClient}.from(${made})` : made,
        );
      }
      const floorEntry = join(work, `${definition.id}-floor.mjs`);
      writeFileSync(floorEntry, `${lines.join("\n")}\nexport const sdk = [${exported.join(", ")}];\n`);
      floors = [
        await bundle(floorEntry, join(work, `${definition.id}-floor`)),
        await bundle(floorEntry, join(work, `${definition.id}-floor-plain`), false),
      ];
      const constructedEntry = join(work, `${definition.id}-constructed.mjs`);
      writeFileSync(
        constructedEntry,
        `${lines.join("\n")}\nexport const sdk = [${exported.join(", ")}];\nexport const clients = [${construct.join(", ")}];\n`,
      );
      constructed = await bundle(constructedEntry, join(work, `${definition.id}-constructed`), false);
    }
    const samples: [number, number][][] = [[], [], [], []];
    for (let run = 0; run < INIT_RUNS; run++) {
      // Alternating, so that load on the machine hits all alike.
      samples[0]?.push(initOf(join(ours.directory, handlerFile)));
      if (floors) samples[1]?.push(initOf(join(floors[0].directory, handlerFile)));
      if (floors) samples[3]?.push(initOf(join(floors[1].directory, handlerFile)));
      if (constructed) samples[2]?.push(initOf(join(constructed.directory, handlerFile)));
    }
    // The floor's faster build is the floor's init (by median CPU), and its smaller sizes its sizes.
    if (floors && median((samples[3] ?? []).map((s) => s[1])) < median((samples[1] ?? []).map((s) => s[1]))) {
      samples[1] = samples[3] ?? [];
      floors = [floors[1], floors[0]];
    }
    samples.length = 3;
    const floor: Bundle | undefined = floors && {
      ...floors[0],
      totalKb: Math.min(floors[0].totalKb, floors[1].totalKb),
      initKb: Math.min(floors[0].initKb, floors[1].initKb),
    };
    // CPU time rather than wall time, and the least of the runs beside the median: other work on
    // the machine only ever adds to a run, so the least disturbed run is the truest.
    const medians = samples.map(
      (list) => [Math.min(...list.map((s) => s[1])), median(list.map((s) => s[1]))] as [number, number],
    );
    const [oursRuns = [], floorRuns = [], constructedRuns = []] = samples;
    const cpu = (runs: [number, number][]) => runs.map((s) => s[1]);
    const wall = (runs: [number, number][]) => runs.map((s) => s[0]);
    rows.push({
      fn: definition.id,
      clients,
      ours,
      floor,
      init: medians[0] ?? [Number.NaN, Number.NaN],
      floorInit: floor ? medians[1] : undefined,
      constructedInit: constructed ? medians[2] : undefined,
      paired: floor
        ? {
            cpuVsFloor: pairedOver(cpu(oursRuns), cpu(floorRuns)),
            wallVsFloor: pairedOver(wall(oursRuns), wall(floorRuns)),
            cpuVsConstructed: pairedOver(cpu(oursRuns), cpu(constructedRuns)),
          }
        : undefined,
    });
  }
  return rows;
}

// ---------- 2. DynamoDB calls, counted ----------

const summarise = (calls: Call[]) => {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call.operation, (counts.get(call.operation) ?? 0) + 1);
  return [...counts].map(([operation, count]) => `${count}×${operation}`).join(" + ") || "none";
};
const units = (calls: Call[]) => ({
  write: calls.reduce((sum, call) => sum + call.writeUnits, 0),
  read: calls.reduce((sum, call) => sum + call.readUnits, 0),
});

/**
 * The key check's calls (an authorizer's, or the stream function's own) are the ones on API-key
 * items and on people's items (a membership, the operator grant, a person's own bucket); everything
 * else is the handler's.
 */
const byKeyCheck = (call: Call) =>
  call.partitionKey === "APIKEY" ||
  (call.partitionKey === "VISITOR" && call.operation === "UpdateItem") ||
  (call.partitionKey === "USER" && call.operation === "UpdateItem");

interface CountedRow {
  name: string;
  status: number;
  keyCheck: string;
  handler: string;
  writeUnits: number;
  readUnits: number;
}

function countedRow(name: string, status: number, calls: Call[]): CountedRow {
  const total = units(calls);
  return {
    name,
    status,
    keyCheck: summarise(calls.filter(byKeyCheck)),
    handler: summarise(calls.filter((c) => !byKeyCheck(c))),
    writeUnits: total.write,
    readUnits: total.read,
  };
}

interface StalledRow {
  name: string;
  /** Status and time, the table stalled before the request. */
  before: string;
  /** Status and time, the table stalled at the handler's first call. */
  inHandler: string;
}

interface TurnFigures {
  /** Handler's own time, median and p90 ms, per function. */
  handlerMs: Record<"SendMessage" | "StreamMessage", { median: number; p90: number }>;
  /** The key check's time, median ms: the authorizer's, and the stream function's own. */
  keyCheckMs: { authorizer: number; inFunction: number };
  /** Table calls and units of one model turn (the handler's and the key check's). */
  turnCalls: Record<"SendMessage" | "StreamMessage", CountedRow>;
  /** Log bytes one turn writes (all functions it runs). */
  logBytes: Record<"SendMessage" | "StreamMessage", number>;
}

interface TokenFigures {
  plain: { full: number };
  streamed: { first: number; full: number };
}

/** Sequential table round trips of each kind of turn (the key check not counted). */
interface RoundTripRow {
  name: string;
  status: number;
  roundTrips: number;
  /** Measured the same way on the turn before it was brought to its floor. */
  before: number;
}

/**
 * A turn's sequential round trips before its restructuring (the claim of the turn number, then the
 * chatbot with the history, then the visitor's message, then the replies; with an Idempotency-Key
 * its claim first), measured with this bench's method on that code.
 */
const ROUND_TRIPS_BEFORE = { plain: 4, idempotent: 5 } as const;
/** How long the proxy holds each answer while round trips are counted. */
const ROUND_TRIP_HOLD_MS = 100;

interface Measured {
  roundTrips: RoundTripRow[];
  rows: CountedRow[];
  turn: TurnFigures;
  tokens: TokenFigures;
  stalled: StalledRow[];
}

/** One request through the local runtime (JSON), or the stream (`stream: true`, events timed). */
type Send = (
  method: string,
  path: string,
  body?: unknown,
  extra?: Record<string, string>,
) => Promise<{ status: number; body: Record<string, unknown> }>;

function clientFor(runtime: LocalRuntime, apiKey: string) {
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  const send: Send = async (method, path, body, extra = {}) => {
    const response = await fetch(`${runtime.baseUrl}${path}`, {
      method,
      headers: { ...headers, ...extra },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  /** A streamed turn: its status, and when (ms after sending) the first delta and the end came. */
  const stream = async (body: unknown, extra: Record<string, string> = {}) => {
    const started = performance.now();
    const response = await fetch(`${runtime.streamUrl}/api/message/stream`, {
      method: "POST",
      headers: { ...headers, ...extra },
      body: JSON.stringify(body),
    });
    let first = Number.NaN;
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of response.body ?? []) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      if (Number.isNaN(first) && text.includes("event: message.delta")) first = performance.now() - started;
    }
    return { status: response.status, first, full: performance.now() - started, text };
  };
  return { send, stream };
}

async function measureCalls(): Promise<Measured> {
  const bedrock = await startKeyedBedrock();
  const runtime = await startLocalRuntime({
    port: 0,
    buildDirectory: join(work, "runtime-build"),
    environment: { AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url, LOG_LEVEL: "warn" },
  });
  // The functions create their DynamoDB client on first use, from this variable: route them
  // through the counting proxy (seeding below uses its own client, straight to DynamoDB Local).
  const proxy = await countingProxy(runtime.dynamoDbEndpoint, {
    // The webhook pipeline works after the request, on its own keys; it is counted in section 8.
    ignore: (call) => /#WEBHOOKS"|#WHEP#/.test(call.request),
  });
  process.env.AWS_ENDPOINT_URL_DYNAMODB = proxy.url;
  try {
    const ctx = { db: createDb(runtime.tableName, runtime.dynamoDb), clock: systemClock };
    const organization = await createOrganization(ctx, { name: "Bench", rateLimit: 100_000 });
    const { apiKey } = await createApiKey(ctx, {
      organizationId: organization.organizationId,
      name: "bench",
    });
    const chatbot = await createChatbot(ctx, {
      organizationId: organization.organizationId,
      name: "Bench bot",
    });
    const modelId = `bench.model-${randomUUID()}`;
    const modelBot = await createChatbot(ctx, {
      organizationId: organization.organizationId,
      name: "Bench model bot",
      engine: { kind: "bedrock", modelId },
    });
    // A console admin (signed in through cognito-local) and a key of scope manage.
    const email = "bench-admin@bench.example";
    const password = demoPassword();
    await runtime.cognito.client.send(
      new AdminCreateUserCommand({
        UserPoolId: runtime.cognito.userPoolId,
        Username: email,
        UserAttributes: [{ Name: "email", Value: email }],
        MessageAction: "SUPPRESS",
        TemporaryPassword: password,
      }),
    );
    await runtime.cognito.client.send(
      new AdminSetUserPasswordCommand({
        UserPoolId: runtime.cognito.userPoolId,
        Username: email,
        Password: password,
        Permanent: true,
      }),
    );
    const directory = createCognitoDirectory(runtime.cognito.userPoolId, runtime.cognito.client);
    const person = await directory.find(email);
    if (!person) throw new Error("the bench admin was not created");
    await inviteMember(
      ctx,
      { find: directory.find, invite: async () => ({ ...person, invited: false }) },
      { organizationId: organization.organizationId, email, role: "admin" },
    );
    await grantOperator(ctx, { userId: person.userId, email });
    const signedIn = await signIn(
      { endpoint: runtime.cognito.endpoint, clientId: runtime.cognito.clientId },
      email,
      password,
    );
    if (signedIn.kind !== "signed_in") throw new Error("the bench admin could not sign in");
    const adminToken = signedIn.tokens.accessToken;
    const { apiKey: manageKey } = await createApiKey(ctx, {
      organizationId: organization.organizationId,
      name: "bench manage",
      scope: "manage",
    });
    const control = bedrockControl(bedrock.controlUrl);
    const { send, stream } = clientFor(runtime, apiKey);
    // The website widget: a session from an allowed origin, as a new and as a returning visitor.
    const widgetOrigin = "https://shop.bench.example";
    await updateWidgetSettings(ctx, {
      organizationId: organization.organizationId,
      chatbotId: chatbot.chatbotId,
      changes: { enabled: true, allowedOrigins: [widgetOrigin] },
    });
    const session = (visitor?: string) =>
      send(
        "POST",
        "/api/widget/session",
        { chatbot_id: chatbot.chatbotId, ...(visitor ? { visitor } : {}) },
        { authorization: "", origin: widgetOrigin },
      );
    const visitor = (await session()).body;
    const visitorSecret = String(visitor.visitor);
    const visitorToken = { authorization: `Bearer ${String(visitor.token)}` };
    const visitorConversation = String(
      (await send("POST", "/api/conversation", { chatbot_id: chatbot.chatbotId }, visitorToken)).body
        .conversation_id,
    );
    // Another chatbot's widget, whose address bucket the bench empties: its next session is refused.
    const hammered = await createChatbot(ctx, {
      organizationId: organization.organizationId,
      name: "Hammered",
    });
    await updateWidgetSettings(ctx, {
      organizationId: organization.organizationId,
      chatbotId: hammered.chatbotId,
      changes: { enabled: true, allowedOrigins: [widgetOrigin] },
    });
    const hammer = () =>
      send(
        "POST",
        "/api/widget/session",
        { chatbot_id: hammered.chatbotId },
        { authorization: "", origin: widgetOrigin },
      );
    for (let i = 0; i < 40; i++) await hammer();
    const started = await send("POST", "/api/conversation", { chatbot_id: chatbot.chatbotId });
    const conversationId = String(started.body.conversation_id);
    await send("POST", "/api/message", { conversation_id: conversationId, message: "warm up" });
    await stream({ conversation_id: conversationId, message: "warm up" });

    const scenarios: [string, () => Promise<{ status: number }>][] = [
      ["POST /api/conversation", () => send("POST", "/api/conversation", { chatbot_id: chatbot.chatbotId })],
      [
        "POST /api/conversation + Idempotency-Key",
        () =>
          send(
            "POST",
            "/api/conversation",
            { chatbot_id: chatbot.chatbotId },
            { "idempotency-key": randomUUID() },
          ),
      ],
      [
        "POST /api/message (scripted)",
        () => send("POST", "/api/message", { conversation_id: conversationId, message: "hello" }),
      ],
      [
        "POST /api/message + Idempotency-Key",
        () =>
          send(
            "POST",
            "/api/message",
            { conversation_id: conversationId, message: "hi" },
            { "idempotency-key": randomUUID() },
          ),
      ],
      [
        "POST /api/message/stream (scripted)",
        () => stream({ conversation_id: conversationId, message: "hello" }),
      ],
      [
        "POST /api/message/stream + Idempotency-Key",
        () => stream({ conversation_id: conversationId, message: "hi" }, { "idempotency-key": randomUUID() }),
      ],
      [
        "GET /api/conversation/{id}/messages",
        () => send("GET", `/api/conversation/${conversationId}/messages?limit=20`),
      ],
      ["GET /api/me", () => send("GET", "/api/me")],
      [
        "GET /manage/chatbots (console admin)",
        () =>
          send("GET", "/manage/chatbots", undefined, {
            authorization: `Bearer ${adminToken}`,
            "x-organization-id": organization.organizationId,
          }),
      ],
      [
        "GET /manage/chatbots (admin, no org header)",
        () => send("GET", "/manage/chatbots", undefined, { authorization: `Bearer ${adminToken}` }),
      ],
      [
        "GET /manage/chatbots (manage key)",
        () => send("GET", "/manage/chatbots", undefined, { authorization: `Bearer ${manageKey}` }),
      ],
      [
        "GET /manage/me (console admin)",
        () => send("GET", "/manage/me", undefined, { authorization: `Bearer ${adminToken}` }),
      ],
      [
        "GET /manage/organizations (operator)",
        () =>
          send("GET", "/manage/organizations?limit=20", undefined, { authorization: `Bearer ${adminToken}` }),
      ],
      ["POST /api/widget/session (a new visitor)", () => session()],
      ["POST /api/widget/session (a returning visitor)", () => session(visitorSecret)],
      ["POST /api/widget/session (429: the address's limit)", () => hammer()],
      [
        "POST /api/message (a visitor's token)",
        () =>
          send(
            "POST",
            "/api/message",
            { conversation_id: visitorConversation, message: "hello" },
            visitorToken,
          ),
      ],
      [
        "GET /api/conversation/{id}/messages (visitor)",
        () =>
          send("GET", `/api/conversation/${visitorConversation}/messages?limit=20`, undefined, visitorToken),
      ],
      ["GET /ping", () => send("GET", "/ping")],
      ["401 (malformed key)", () => send("GET", "/api/me", undefined, { authorization: "Bearer cbk_x" })],
    ];
    const rows: CountedRow[] = [];
    for (const [name, run] of scenarios) {
      await run(); // warm
      proxy.calls.length = 0;
      const { status } = await run();
      rows.push(countedRow(name, status, proxy.calls));
    }

    // Each kind of turn again, every answer held: its sequential round trips.
    const turnKinds: [string, keyof typeof ROUND_TRIPS_BEFORE, () => Promise<{ status: number }>][] = [
      [
        "POST /api/message",
        "plain",
        () => send("POST", "/api/message", { conversation_id: conversationId, message: "hello" }),
      ],
      [
        "POST /api/message + Idempotency-Key",
        "idempotent",
        () =>
          send(
            "POST",
            "/api/message",
            { conversation_id: conversationId, message: "hi" },
            { "idempotency-key": randomUUID() },
          ),
      ],
      [
        "POST /api/message/stream",
        "plain",
        () => stream({ conversation_id: conversationId, message: "hello" }),
      ],
      [
        "POST /api/message/stream + Idempotency-Key",
        "idempotent",
        () => stream({ conversation_id: conversationId, message: "hi" }, { "idempotency-key": randomUUID() }),
      ],
    ];
    const roundTrips: RoundTripRow[] = [];
    proxy.holdMs = ROUND_TRIP_HOLD_MS;
    try {
      for (const [name, kind, run] of turnKinds) {
        proxy.calls.length = 0;
        const { status } = await run();
        const turnCalls = proxy.calls.filter((call) => !byKeyCheck(call));
        roundTrips.push({
          name,
          status,
          roundTrips: sequentialRoundTrips(turnCalls),
          before: ROUND_TRIPS_BEFORE[kind],
        });
      }
    } finally {
      proxy.holdMs = 0;
    }

    // A look-up turn (scripted engine, WooCommerce on the runtime's sample shop): the order number
    // and e-mail in one message, first asked (cache miss), then asked again (answered from cache).
    const credentials = envelopeCipherFor(toolEnvironment(runtime.toolEnvironment).credentialKey);
    const lookupBot = await createChatbot(ctx, {
      organizationId: organization.organizationId,
      name: "Bench look-up bot",
    });
    await addTool(
      { ...ctx, ...(credentials ? { credentials } : {}) },
      {
        organizationId: organization.organizationId,
        chatbotId: lookupBot.chatbotId,
        kind: "woocommerce",
        name: "order_status",
        config: { ...wooDemo.config },
        credentials: { ...wooDemo.secrets },
      },
    );
    const lookupConversation = await send("POST", "/api/conversation", { chatbot_id: lookupBot.chatbotId });
    const lookupConversationId = String(lookupConversation.body.conversation_id);
    await send("POST", "/api/message", { conversation_id: lookupConversationId, message: "hello" });
    const question = `Where is order ${demoOrder.orderNumber}? My e-mail is ${demoOrder.email}`;
    for (const name of ["POST /api/message (order look-up)", "POST /api/message (same look-up, cached)"]) {
      proxy.calls.length = 0;
      const { status } = await send("POST", "/api/message", {
        conversation_id: lookupConversationId,
        message: question,
      });
      rows.push(countedRow(name, status, proxy.calls));
    }

    // 3. Turns with a zero-delay model: the handlers' own time (their log lines), the key checks'
    // time, one turn's table calls and units, and the log bytes a turn writes.
    const modelConversation = await send("POST", "/api/conversation", { chatbot_id: modelBot.chatbotId });
    const modelConversationId = String(modelConversation.body.conversation_id);
    // The model's answers are queued in call order: each phase queues exactly its own.
    const plainTurn = async () => {
      await send("POST", "/api/message", { conversation_id: modelConversationId, message: "hello model" });
    };
    const streamedTurn = async () => {
      await stream({ conversation_id: modelConversationId, message: "hello model" });
    };
    await control.script(modelId, ...Array.from({ length: TURNS + 1 }, () => converseText("ok")));
    const plain = await logged(TURNS, plainTurn);
    proxy.calls.length = 0;
    await plainTurn();
    const plainCalls = countedRow("turn", 200, proxy.calls);
    await control.script(modelId, ...Array.from({ length: TURNS + 1 }, () => converseStream("ok")));
    const streamed = await logged(TURNS, streamedTurn);
    proxy.calls.length = 0;
    await streamedTurn();
    const streamedCalls = countedRow("turn", 200, proxy.calls);
    const turn: TurnFigures = {
      handlerMs: {
        SendMessage: percentiles(plain.durations("request completed", "sendMessage")),
        StreamMessage: percentiles(streamed.durations("stream completed")),
      },
      keyCheckMs: {
        authorizer: percentiles(plain.durations("verdict")).median,
        inFunction: percentiles(streamed.durations("verdict")).median,
      },
      turnCalls: { SendMessage: plainCalls, StreamMessage: streamedCalls },
      logBytes: { SendMessage: plain.bytes / TURNS, StreamMessage: streamed.bytes / TURNS },
    };

    // 4. Time to first token and to the whole reply, against a model writing 50 tokens a second.
    const text = Array.from({ length: REPLY_TOKENS }, (_, index) => `word${index}`).join(" ");
    const generation = REPLY_TOKENS * TOKEN_INTERVAL_MS;
    await control.script(
      modelId,
      ...Array.from({ length: TOKEN_RUNS }, () => ({ ...converseText(text), delayMs: generation })),
      ...Array.from({ length: TOKEN_RUNS }, () => converseStream(text, { intervalMs: TOKEN_INTERVAL_MS })),
    );
    const plainTimes: number[] = [];
    for (let run = 0; run < TOKEN_RUNS; run++) {
      const begun = performance.now();
      await send("POST", "/api/message", { conversation_id: modelConversationId, message: "tell me" });
      plainTimes.push(performance.now() - begun);
    }
    const streamTimes: { first: number; full: number }[] = [];
    for (let run = 0; run < TOKEN_RUNS; run++) {
      streamTimes.push(await stream({ conversation_id: modelConversationId, message: "tell me" }));
    }
    const tokens: TokenFigures = {
      plain: { full: median(plainTimes) },
      streamed: {
        first: median(streamTimes.map((times) => times.first)),
        full: median(streamTimes.map((times) => times.full)),
      },
    };

    // 7. A stalled table: each route's time to its 503, stalled before the request and at the
    // handler's first table call (the key check having let the request in).
    const stalledRequests: [string, () => Promise<{ status: number }>][] = [
      ["GET /api/me", () => send("GET", "/api/me")],
      [
        "GET /api/conversation/{id}/messages",
        () => send("GET", `/api/conversation/${conversationId}/messages`),
      ],
      ["POST /api/conversation", () => send("POST", "/api/conversation", { chatbot_id: chatbot.chatbotId })],
      [
        "POST /api/message",
        () => send("POST", "/api/message", { conversation_id: conversationId, message: "stalled?" }),
      ],
      ["POST /api/message/stream", () => stream({ conversation_id: conversationId, message: "stalled?" })],
    ];
    const stalled: StalledRow[] = [];
    // The functions log each 503 as a warning; keep them out of the report.
    process.env.LOG_LEVEL = "error";
    for (const [name, run] of stalledRequests) {
      const row: StalledRow = { name, before: "", inHandler: "" };
      for (const at of ["before", "inHandler"] as const) {
        const pid = runtime.dynamoDbPid;
        if (at === "before") process.kill(pid, "SIGSTOP");
        else
          proxy.onCall = (call) => {
            if (byKeyCheck(call)) return;
            proxy.onCall = undefined;
            process.kill(pid, "SIGSTOP");
          };
        const begun = performance.now();
        try {
          const { status } = await run();
          row[at] = `${status} after ${((performance.now() - begun) / 1000).toFixed(1)} s`;
        } finally {
          proxy.onCall = undefined;
          process.kill(pid, "SIGCONT");
        }
      }
      stalled.push(row);
    }
    return { roundTrips, rows, turn, tokens, stalled };
  } finally {
    await runtime.stop();
    await proxy.close();
    await bedrock.close();
  }
}

function percentiles(values: number[]): { median: number; p90: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
    p90: sorted[Math.floor(sorted.length * 0.9)] ?? Number.NaN,
  };
}

/**
 * Runs `turn` `times` times with the functions logging at debug level, and keeps their JSON log
 * lines (read from stdout, kept out of the report): durations by message, and the bytes a turn
 * logs at the production level (info and above).
 */
async function logged(
  times: number,
  turn: () => Promise<void>,
): Promise<{ durations(message: string, route?: string): number[]; bytes: number }> {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = chunk.toString();
    for (const line of text.split("\n")) if (line.startsWith("{")) lines.push(line);
    return text.includes('"level"') ? true : write(chunk, ...(rest as []));
  }) as typeof process.stdout.write;
  const previous = process.env.LOG_LEVEL;
  process.env.LOG_LEVEL = "debug";
  try {
    for (let i = 0; i < times; i++) await turn();
  } finally {
    process.stdout.write = write;
    process.env.LOG_LEVEL = previous;
  }
  const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    durations: (message, route) =>
      parsed
        .filter((line) => line.message === message && (route === undefined || line.route === route))
        .map((line) => Number(line.durationMs)),
    bytes: parsed
      .filter((line) => line.level !== "debug")
      .reduce((sum, line) => sum + Buffer.byteLength(JSON.stringify(line)) + 1, 0),
  };
}

// ---------- 5. a cold first request ----------

interface ColdFigures {
  /** Client-side ms of each first request, and of the same request once warm. */
  requests: { name: string; coldMs: number; warmMs: number }[];
  /** Each function's init (module load) ms, as it happened on its first invocation. */
  initMs: Map<string, number>;
}

async function measureColdStarts(): Promise<ColdFigures> {
  const runtime = await startLocalRuntime({
    port: 0,
    coldStarts: true,
    buildDirectory: join(work, "cold-build"),
    environment: { LOG_LEVEL: "warn" },
  });
  try {
    const ctx = { db: createDb(runtime.tableName, runtime.dynamoDb), clock: systemClock };
    const organization = await createOrganization(ctx, { name: "Cold", rateLimit: 100_000 });
    const { apiKey } = await createApiKey(ctx, { organizationId: organization.organizationId, name: "cold" });
    const chatbot = await createChatbot(ctx, {
      organizationId: organization.organizationId,
      name: "Cold bot",
    });
    const { send, stream } = clientFor(runtime, apiKey);
    const timed = async (run: () => Promise<unknown>) => {
      const begun = performance.now();
      await run();
      return performance.now() - begun;
    };
    const requests: ColdFigures["requests"] = [];
    let conversationId = "";
    const startConversation = async () => {
      conversationId = String(
        (await send("POST", "/api/conversation", { chatbot_id: chatbot.chatbotId })).body.conversation_id,
      );
    };
    const cases: [string, () => Promise<unknown>][] = [
      ["POST /api/conversation (authorizer + handler)", startConversation],
      [
        "POST /api/message (scripted)",
        () => send("POST", "/api/message", { conversation_id: conversationId, message: "hello" }),
      ],
      [
        "POST /api/message/stream (scripted)",
        () => stream({ conversation_id: conversationId, message: "hello" }),
      ],
    ];
    for (const [name, run] of cases) {
      const coldMs = await timed(run);
      const warmMs = await timed(run);
      requests.push({ name, coldMs, warmMs });
    }
    return { requests, initMs: new Map(runtime.initDurations) };
  } finally {
    await runtime.stop();
  }
}

// ---------- 6. cost per million turns ----------

interface CostRow {
  latencyS: number;
  plain: number;
  streamed: number;
}

const memoryOf = (id: string) => allFunctions.find((definition) => definition.id === id)?.memoryMb ?? 0;

/** Dollars per million turns: requests, duration (the function waits for the model), table units, logs. */
function costPerMillion(
  turn: TurnFigures,
  latencyS: number,
  turnMemoryMb?: number,
): { plain: number; streamed: number } {
  const memory = (id: string) =>
    turnMemoryMb !== undefined && id !== authorizer.id ? turnMemoryMb : memoryOf(id);
  const gbSeconds = (id: string, ms: number) => (memory(id) / 1024) * (Math.ceil(ms) / 1000);
  const table = (row: CountedRow) =>
    row.writeUnits * prices.writeRequestUnit + row.readUnits * prices.readRequestUnit;
  const logs = (bytes: number) => (bytes / 1024 ** 3) * prices.logIngestionGb;
  const plain =
    prices.httpApiRequest +
    2 * prices.lambdaRequest +
    gbSeconds(authorizer.id, turn.keyCheckMs.authorizer) * prices.lambdaArmGbSecond +
    gbSeconds("SendMessage", turn.handlerMs.SendMessage.median + latencyS * 1000) * prices.lambdaArmGbSecond +
    table(turn.turnCalls.SendMessage) +
    logs(turn.logBytes.SendMessage);
  const streamed =
    prices.lambdaRequest +
    gbSeconds(
      streamRoute.id,
      turn.handlerMs.StreamMessage.median + turn.keyCheckMs.inFunction + latencyS * 1000,
    ) *
      prices.lambdaArmGbSecond +
    table(turn.turnCalls.StreamMessage) +
    logs(turn.logBytes.StreamMessage);
  return { plain: plain * 1e6, streamed: streamed * 1e6 };
}

// ---------- report ----------

const pad = (text: string, width: number) => text.padEnd(width);
const num = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const over = (ours: number, floor: number | undefined) =>
  floor === undefined || floor <= 0 ? Number.NaN : ((ours - floor) / floor) * 100;

/** 1. Bundle sizes and init times beside their floors. */
async function reportSizes(only?: ReadonlySet<string>): Promise<void> {
  console.log(
    `1. Bundles (esbuild, minified, split into index.mjs + chunks loaded on first use, AWS SDK bundled; Node ${process.version})\n`,
  );
  console.log(
    `${pad("function", 20)}${pad("KB total", 10)}${pad("KB at init", 12)}${pad("floor total", 13)}${pad("floor at init", 15)}${pad("total +%", 10)}${pad("at init +%", 12)}SDK clients`,
  );
  const sizes = await measureSizes(only);
  for (const row of sizes) {
    console.log(
      `${pad(row.fn, 20)}${pad(num(row.ours.totalKb), 10)}${pad(num(row.ours.initKb), 12)}${pad(num(row.floor?.totalKb ?? Number.NaN), 13)}${pad(num(row.floor?.initKb ?? Number.NaN), 15)}${pad(num(over(row.ours.totalKb, row.floor?.totalKb), 1), 10)}${pad(num(over(row.ours.initKb, row.floor?.initKb), 1), 12)}${row.clients.join(", ") || "(none: no SDK)"}`,
    );
  }
  console.log(
    `\nInit: CPU ms of ${INIT_RUNS} fresh imports, least (median); floor = the same SDK clients and commands imported, nothing else,
built both as ours is (SDK-import plugin) and by esbuild alone: the faster build is the floor's init, the smaller its sizes;
+ constructed = those clients also constructed once. "least" compares the least runs; "paired" is the median, over the
runs, of ours / floor within one run (ours, the floor and the constructed floor import in turn), CPU and wall: on a shared
machine whose speed drifts, the paired figure is the steadier one.\n`,
  );
  console.log(
    `${pad("function", 20)}${pad("init", 16)}${pad("floor", 16)}${pad("+ constructed", 16)}${pad("vs floor: least", 17)}${pad("paired CPU", 12)}${pad("paired wall", 13)}vs + constructed: least, paired CPU`,
  );
  const percent = (value: number) => (Number.isFinite(value) ? `${value.toFixed(1)}%` : "n/a");
  for (const row of sizes) {
    const [least, middle] = row.init;
    const floor = row.floorInit;
    const constructed = row.constructedInit;
    const pair = (figures: [number, number] | undefined) =>
      figures ? `${num(figures[0], 1)} (${num(figures[1], 1)})` : "n/a";
    console.log(
      `${pad(row.fn, 20)}${pad(pair([least, middle]), 16)}${pad(pair(floor), 16)}${pad(pair(constructed), 16)}${pad(percent(over(least, floor?.[0])), 17)}${pad(percent(row.paired?.cpuVsFloor ?? Number.NaN), 12)}${pad(percent(row.paired?.wallVsFloor ?? Number.NaN), 13)}${percent(over(least, constructed?.[0]))}, ${percent(row.paired?.cpuVsConstructed ?? Number.NaN)}`,
    );
  }
  console.log(
    "\nThe functions construct no client at init (each on its first use); the model engines, image fetching, the look-up tools and\nthe secrets client are chunks loaded when a turn first needs them. Functions without an AWS SDK client have no floor.",
  );
}

mkdirSync(work, { recursive: true });
const callsOnly = process.argv.includes("--calls");
/** `--sizes A,B`: section 1 alone, for the functions named (their ids, as in lib/routes.ts). */
const sizesFor = process.argv.includes("--sizes")
  ? new Set((process.argv[process.argv.indexOf("--sizes") + 1] ?? "").split(",").filter(Boolean))
  : undefined;
/** Every section (1 and 5 left out with --calls). */
async function benchAll(): Promise<void> {
  if (!callsOnly) await reportSizes();

  const { roundTrips, rows, turn, tokens, stalled } = await measureCalls();
  console.log(
    "\n2. DynamoDB calls per request, warm path (counted at DynamoDB Local; units as it reports them)\n",
  );
  console.log(
    `${pad("request", 46)}${pad("status", 8)}${pad("key check", 14)}${pad("handler", 56)}WRU   RRU`,
  );
  for (const row of rows) {
    console.log(
      `${pad(row.name, 46)}${pad(String(row.status), 8)}${pad(row.keyCheck, 14)}${pad(row.handler, 56)}${pad(num(row.writeUnits, 1), 6)}${num(row.readUnits, 1)}`,
    );
  }
  console.log(
    "\n(Without X-Organization-Id, the management authorizer first reads the person's memberships: that Query is\ncounted under handler above. A visitor's message also takes one from the chatbot's daily budget in the key check: that\nUpdateItem on the usage item is counted under handler above, beside the turn's own count.)",
  );
  console.log(
    `\nSequential table round trips of a turn (the key check before it not counted; each answer held ${ROUND_TRIP_HOLD_MS} ms while counting)\n`,
  );
  for (const row of roundTrips) {
    console.log(`  ${pad(row.name, 46)}${pad(String(row.status), 8)}${row.before} → ${row.roundTrips}`);
  }
  console.log(`\n3. A message turn against a zero-delay local model (Bedrock fake, ${TURNS} turns each)\n`);
  for (const id of ["SendMessage", "StreamMessage"] as const) {
    const figures = turn.handlerMs[id];
    const calls = turn.turnCalls[id];
    console.log(
      `  ${pad(id, 14)} handler's own time median ${figures.median} ms, p90 ${figures.p90} ms; table calls ${calls.handler} (+ ${calls.keyCheck} key check), ${num(calls.writeUnits, 1)} WRU, ${num(calls.readUnits, 1)} RRU; ${num(turn.logBytes[id])} log bytes`,
    );
  }
  console.log(
    `  key check: the authorizer's ${num(turn.keyCheckMs.authorizer)} ms (its own invocation), the stream function's own ${num(turn.keyCheckMs.inFunction)} ms`,
  );
  console.log(
    `\n4. Time to first token and to the whole reply: ${REPLY_TOKENS} tokens at ${1000 / TOKEN_INTERVAL_MS} tokens/s (median of ${TOKEN_RUNS})\n`,
  );
  console.log(
    `  POST /api/message         first token ${num(tokens.plain.full)} ms, whole reply ${num(tokens.plain.full)} ms`,
  );
  console.log(
    `  POST /api/message/stream  first token ${num(tokens.streamed.first)} ms, whole reply ${num(tokens.streamed.full)} ms`,
  );

  if (!callsOnly) {
    const cold = await measureColdStarts();
    console.log(
      "\n5. A cold first request through the emulator (each function loaded on its first invocation)\n",
    );
    for (const request of cold.requests) {
      console.log(
        `  ${pad(request.name, 48)} cold ${num(request.coldMs)} ms, then warm ${num(request.warmMs)} ms`,
      );
    }
    console.log(
      `  init (module load) on first invocation: ${[...cold.initMs].map(([id, ms]) => `${id} ${num(ms)} ms`).join(", ")}`,
    );
  }

  console.log(
    `\n6. AWS cost per million message turns (us-east-1 list prices of ${prices.date}, arm64; memory: SendMessage and StreamMessage ${memoryOf("SendMessage")} MB, authorizer ${memoryOf(authorizer.id)} MB; model tokens not included)\n`,
  );
  console.log(`${pad("model latency", 16)}${pad("POST /api/message", 20)}POST /api/message/stream`);
  const costs: CostRow[] = [0.5, 2, 5].map((latencyS) => ({ latencyS, ...costPerMillion(turn, latencyS) }));
  for (const row of costs) {
    console.log(`${pad(`${row.latencyS} s`, 16)}${pad(`$${num(row.plain, 2)}`, 20)}$${num(row.streamed, 2)}`);
  }
  console.log(
    "  (requests: HTTP API + authorizer + SendMessage, or the stream function alone; duration: the handler's own time plus the model's,\n  which the function waits out; table: the turn's counted units; logs: the bytes a turn writes. A function URL and a streamed\n  response's first 6 MB cost nothing extra.)",
  );
  const halfMemory = costPerMillion(turn, 5, 512);
  console.log(
    `  At 512 MB instead, a 5 s turn would cost $${num(halfMemory.plain, 2)} / $${num(halfMemory.streamed, 2)}: the wait is billed by memory.`,
  );

  console.log(
    "\n7. A stalled table (DynamoDB Local under SIGSTOP): each route's answer and its time (6 s at most; a turn: its own budget)\n",
  );
  console.log(
    `${pad("request", 42)}${pad("stalled before the request", 30)}stalled at the handler's first call`,
  );
  for (const row of stalled) console.log(`${pad(row.name, 42)}${pad(row.before, 30)}${row.inHandler}`);

  printWebhookFigures(await measureWebhooks());
  await printKnowledgeFigures();
  await printAnalyticsFigures(join(work, "analytics-build"));
  printWidgetFigures(await measureWidget(work));
}

try {
  if (process.argv.includes("--knowledge")) await printKnowledgeFigures();
  else if (process.argv.includes("--analytics")) await printAnalyticsFigures(join(work, "analytics-build"));
  else if (process.argv.includes("--widget")) printWidgetFigures(await measureWidget(work));
  else if (sizesFor) {
    const known = new Set([...allFunctions, ...eventFunctions].map((definition) => definition.id));
    const unknown = [...sizesFor].filter((id) => !known.has(id));
    if (sizesFor.size === 0 || unknown.length > 0) {
      console.error(`--sizes takes function ids, comma-separated: ${[...known].join(", ")}`);
      process.exitCode = 2;
    } else await reportSizes(sizesFor);
  } else await benchAll();
} finally {
  rmSync(work, { recursive: true, force: true });
}
