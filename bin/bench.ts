/**
 * `npm run bench`: figures, not assertions.
 *
 * 1. Per function: bundle size and module init time (a fresh Node process imports the bundle;
 *    median of several runs), beside the floor: a bundle of only the AWS SDK clients that function
 *    uses, built and timed the same way in the same run.
 * 2. DynamoDB calls per request on a warm path, counted by a proxy in front of DynamoDB Local that
 *    reads each call's operation (X-Amz-Target), split into the authorizer's and the handler's.
 * 3. A message turn: the handler's own time with a zero-delay local model, and its DynamoDB calls.
 * 4. A stalled table (DynamoDB Local under SIGSTOP): how long each route takes to answer its 503,
 *    stalled before the request (the authorizer finds no table) and at the handler's first call.
 * 5. Webhooks (bin/bench-webhooks.ts): a turn's latency with and without endpoints, the delay from
 *    a turn to its message.created delivery, events delivered per second, pipeline calls per event.
 *
 * `npm run bench -- --calls` measures 2 and 3 only (part 1 bundles and times every function).
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  AdminCreateUserCommand,
  AdminSetUserPasswordCommand,
} from "@aws-sdk/client-cognito-identity-provider";
import { build, type Metafile } from "esbuild";
import { createApiKey } from "#functions/domain/api-keys";
import { createChatbot } from "#functions/domain/chatbots";
import { systemClock } from "#functions/domain/context";
import { createCognitoDirectory } from "#functions/domain/directory";
import { createOrganization } from "#functions/domain/organizations";
import { grantOperator, inviteMember } from "#functions/domain/people";
import { addTool } from "#functions/domain/tools";
import { envelopeCipherFor } from "#functions/secrets/envelope";
import { createDb } from "#functions/store/dynamodb";
import { toolEnvironment } from "#functions/tools/environment";
import { esbuildOptions } from "#lib/bundling";
import { eventFunctions } from "#lib/event-sources";
import { demoOrder, demoPassword } from "#lib/local/demo";
import { startLocalRuntime } from "#lib/local/runtime";
import { allFunctions } from "#lib/routes";
import { signIn } from "#lib/sign-in";
import { converseText } from "#test/fakes/bedrock-server";
import { bedrockControl, startKeyedBedrock } from "#test/fakes/keyed-bedrock";
import { wooDemo } from "#test/fakes/platforms/woocommerce";
import { measureWebhooks, printWebhookFigures } from "./bench-webhooks.ts";

const root = resolve(import.meta.dirname, "..");
const INIT_RUNS = 11;
const TURNS = 30;
const work = mkdtempSync(join(tmpdir(), "chatbot-bench-"));

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

async function bundle(entry: string, outfile: string): Promise<Metafile> {
  const result = await build({ ...esbuildOptions, entryPoints: [entry], outfile, metafile: true });
  return result.metafile;
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

function initMs(file: string): number {
  const script = `const t=performance.now();await import(${JSON.stringify(file)});process.stdout.write(String(performance.now()-t));`;
  return Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }));
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/** Medians of fresh-process imports, the two files alternating so load on the machine hits both alike. */
function medianInitMs(file: string, floor: string): [number, number] {
  const ours: number[] = [];
  const floors: number[] = [];
  for (let run = 0; run < INIT_RUNS; run++) {
    ours.push(initMs(file));
    floors.push(initMs(floor));
  }
  return [median(ours), median(floors)];
}

interface SizeRow {
  fn: string;
  kb: number;
  initMs: number;
  clients: string[];
  floorKb: number;
  floorInitMs: number;
}

async function measureSizes(): Promise<SizeRow[]> {
  const rows: SizeRow[] = [];
  for (const definition of [...allFunctions, ...eventFunctions]) {
    const out = join(work, `${definition.id}.mjs`);
    const metafile = await bundle(resolve(root, definition.entry), out);
    const clients = clientsIn(metafile);
    // The floor: the same SDK clients and commands, imported as the function imports them, nothing else.
    const imports = sdkImportsIn(metafile);
    for (const name of clients) {
      const client = sdkClients[name];
      if (client) imports.set(name, new Set([...(imports.get(name) ?? []), client]));
    }
    const floorEntry = join(work, `${definition.id}-floor.mjs`);
    const lines = [...imports].map(
      ([from, names], i) =>
        `import { ${[...names].map((name, j) => `${name} as s${i}_${j}`).join(", ")} } from ${JSON.stringify(from)};`,
    );
    const exported = [...imports].flatMap(([, names], i) => [...names].map((_, j) => `s${i}_${j}`));
    writeFileSync(floorEntry, `${lines.join("\n")}\nexport const sdk = [${exported.join(", ")}];\n`);
    const floorOut = join(work, `${definition.id}-floor.out.mjs`);
    await build({
      ...esbuildOptions,
      entryPoints: [floorEntry],
      outfile: floorOut,
      nodePaths: [resolve(root, "node_modules")],
    });
    const [ours, floor] = medianInitMs(out, floorOut);
    rows.push({
      fn: definition.id,
      kb: statSync(out).size / 1024,
      initMs: ours,
      clients,
      floorKb: statSync(floorOut).size / 1024,
      floorInitMs: floor,
    });
  }
  return rows;
}

// ---------- 2. DynamoDB calls, counted ----------

interface Call {
  operation: string;
  partitionKey: string;
}

/**
 * Forwards to DynamoDB Local and records each call's operation and first partition key. `onCall`,
 * when set, sees each call before it is forwarded (to stall the table at that moment).
 */
async function countingProxy(target: string): Promise<{
  url: string;
  calls: Call[];
  onCall: ((call: Call) => void) | undefined;
  close(): Promise<void>;
}> {
  const calls: Call[] = [];
  const hooks: { onCall: ((call: Call) => void) | undefined } = { onCall: undefined };
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const operation = String(req.headers["x-amz-target"] ?? "?").replace(/^DynamoDB_\d+\./, "");
      const partitionKey = /"PK":\{"S":"([^"#]+)#/.exec(body.toString())?.[1] ?? "";
      // The webhook pipeline works after the request, on its own keys; it is counted in section 5.
      if (!/#WEBHOOKS"|#WHEP#/.test(body.toString())) {
        calls.push({ operation, partitionKey });
        hooks.onCall?.({ operation, partitionKey });
      }
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (response) => {
          if (res.destroyed) return void response.resume();
          res.writeHead(response.statusCode ?? 500, response.headers);
          response.pipe(res);
        },
      );
      forward.on("error", () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    get onCall() {
      return hooks.onCall;
    },
    set onCall(hook) {
      hooks.onCall = hook;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

const summarise = (calls: Call[]) => {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call.operation, (counts.get(call.operation) ?? 0) + 1);
  return [...counts].map(([operation, count]) => `${count}×${operation}`).join(" + ") || "none";
};

/**
 * The authorizers' calls are the ones on API-key items and on people's items (a membership, the
 * operator grant, a person's own bucket); everything else is the handler's.
 */
const byAuthorizer = (call: Call) =>
  call.partitionKey === "APIKEY" || (call.partitionKey === "USER" && call.operation === "UpdateItem");

function countedRow(name: string, status: number, calls: Call[]): [string, string, string, number] {
  return [
    name,
    summarise(calls.filter(byAuthorizer)),
    summarise(calls.filter((c) => !byAuthorizer(c))),
    status,
  ];
}

interface StalledRow {
  name: string;
  /** Status and time, the table stalled before the request. */
  before: string;
  /** Status and time, the table stalled at the handler's first call. */
  inHandler: string;
}

async function measureCalls(): Promise<{
  rows: [string, string, string, number][];
  turn: TurnFigures;
  stalled: StalledRow[];
}> {
  const bedrock = await startKeyedBedrock();
  const runtime = await startLocalRuntime({
    port: 0,
    environment: { AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url, LOG_LEVEL: "warn" },
  });
  // The functions create their DynamoDB client on first use, from this variable: route them
  // through the counting proxy (seeding below uses its own client, straight to DynamoDB Local).
  const proxy = await countingProxy(runtime.dynamoDbEndpoint);
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

    const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
    const send = async (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) => {
      const response = await fetch(`${runtime.baseUrl}${path}`, {
        method,
        headers: { ...headers, ...extra },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const started = await send("POST", "/api/conversation", { chatbot_id: chatbot.chatbotId });
    const conversationId = String(started.body.conversation_id);
    await send("POST", "/api/message", { conversation_id: conversationId, message: "warm up" });

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
      ["GET /ping", () => send("GET", "/ping")],
      ["401 (malformed key)", () => send("GET", "/api/me", undefined, { authorization: "Bearer cbk_x" })],
    ];
    const rows: [string, string, string, number][] = [];
    for (const [name, run] of scenarios) {
      await run(); // warm
      proxy.calls.length = 0;
      const { status } = await run();
      rows.push(countedRow(name, status, proxy.calls));
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

    // 3. A turn with a zero-delay model: the handler's own time, from its "request completed" log line.
    const modelConversation = await send("POST", "/api/conversation", { chatbot_id: modelBot.chatbotId });
    const modelConversationId = String(modelConversation.body.conversation_id);
    const control = bedrockControl(bedrock.controlUrl);
    await control.script(modelId, ...Array.from({ length: TURNS + 1 }, () => converseText("ok")));
    const times = await turnTimes(async () => {
      await send("POST", "/api/message", { conversation_id: modelConversationId, message: "hello model" });
    });
    proxy.calls.length = 0;
    await send("POST", "/api/message", { conversation_id: modelConversationId, message: "count" });
    const turnCalls = proxy.calls.filter((call) => !byAuthorizer(call));

    // 4. A stalled table: each route's time to its 503, stalled before the request and at the
    // handler's first table call (the authorizer having let the request in).
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
            if (byAuthorizer(call)) return;
            proxy.onCall = undefined;
            process.kill(pid, "SIGSTOP");
          };
        const started = performance.now();
        try {
          const { status } = await run();
          row[at] = `${status} after ${((performance.now() - started) / 1000).toFixed(1)} s`;
        } finally {
          proxy.onCall = undefined;
          process.kill(pid, "SIGCONT");
        }
      }
      stalled.push(row);
    }
    return {
      rows,
      turn: { ...times, calls: summarise(turnCalls), callCount: turnCalls.length },
      stalled,
    };
  } finally {
    await runtime.stop();
    await proxy.close();
    await bedrock.close();
  }
}

interface TurnFigures {
  medianMs: number;
  p90Ms: number;
  calls: string;
  callCount: number;
}

/** Reads the handler's own duration from the JSON log lines the functions write to stdout. */
async function turnTimes(turn: () => Promise<void>): Promise<{ medianMs: number; p90Ms: number }> {
  const durations: number[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = chunk.toString();
    for (const line of text.split("\n")) {
      if (line.includes('"route":"sendMessage"') && line.includes('"request completed"')) {
        durations.push(Number(/"durationMs":(\d+)/.exec(line)?.[1]));
      }
    }
    return text.includes('"level"') ? true : write(chunk, ...(rest as []));
  }) as typeof process.stdout.write;
  const previous = process.env.LOG_LEVEL;
  process.env.LOG_LEVEL = "info";
  try {
    for (let i = 0; i < TURNS; i++) await turn();
  } finally {
    process.stdout.write = write;
    process.env.LOG_LEVEL = previous;
  }
  durations.sort((a, b) => a - b);
  return {
    medianMs: durations[Math.floor(durations.length / 2)] ?? Number.NaN,
    p90Ms: durations[Math.floor(durations.length * 0.9)] ?? Number.NaN,
  };
}

// ---------- report ----------

const pad = (text: string, width: number) => text.padEnd(width);
const num = (value: number, digits = 0) => value.toFixed(digits);

mkdirSync(work, { recursive: true });
const callsOnly = process.argv.includes("--calls");
try {
  if (!callsOnly)
    console.log(
      `Bundles (esbuild, minified, AWS SDK bundled; init = median of ${INIT_RUNS} fresh imports, Node ${process.version})\n`,
    );
  if (!callsOnly)
    console.log(
      `${pad("function", 20)}${pad("KB", 8)}${pad("init ms", 9)}${pad("floor KB", 10)}${pad("floor ms", 10)}${pad("size +%", 9)}${pad("init +%", 9)}SDK clients (the floor: these clients and the commands the function imports)`,
    );
  for (const row of callsOnly ? [] : await measureSizes()) {
    const sizeOver = row.floorKb > 1 ? ((row.kb - row.floorKb) / row.floorKb) * 100 : Number.NaN;
    const initOver =
      row.clients.length > 0 ? ((row.initMs - row.floorInitMs) / row.floorInitMs) * 100 : Number.NaN;
    const verdict = Number.isNaN(sizeOver)
      ? ""
      : sizeOver <= 15 && initOver <= 15
        ? "  ✓ within 15%"
        : "  ✗ over 15%";
    console.log(
      `${pad(row.fn, 20)}${pad(num(row.kb), 8)}${pad(num(row.initMs, 1), 9)}${pad(num(row.floorKb), 10)}${pad(num(row.floorInitMs, 1), 10)}${pad(Number.isNaN(sizeOver) ? "n/a" : num(sizeOver, 1), 9)}${pad(Number.isNaN(initOver) ? "n/a" : num(initOver, 1), 9)}${row.clients.join(", ") || "(none: no SDK)"}${verdict}`,
    );
  }

  const { rows, turn, stalled } = await measureCalls();
  console.log(
    "\nFunctions without an AWS SDK client have no floor to compare with; most of their init is node:http, which\n@middy/util imports (every SDK client loads it too).",
  );
  console.log("\nDynamoDB calls per request, warm path (counted at DynamoDB Local)\n");
  console.log(`${pad("request", 46)}${pad("status", 8)}${pad("authorizer", 16)}handler`);
  for (const [name, authorizer, handler, status] of rows) {
    console.log(`${pad(name, 46)}${pad(String(status), 8)}${pad(authorizer, 16)}${handler}`);
  }
  console.log(
    "\n(Without X-Organization-Id, the management authorizer first reads the person's memberships: that Query is\ncounted under handler above.)",
  );
  console.log(`\nMessage turn, Bedrock engine against a zero-delay local Converse server (${TURNS} turns)`);
  console.log(`  handler's own time: median ${turn.medianMs} ms, p90 ${turn.p90Ms} ms`);
  console.log(
    `  DynamoDB calls per turn (handler): ${turn.callCount} (${turn.calls}), plus 1 in the authorizer`,
  );
  console.log(
    "\nA stalled table (DynamoDB Local under SIGSTOP): each route's answer and its time (6 s at most)\n",
  );
  console.log(
    `${pad("request", 42)}${pad("stalled before the request", 30)}stalled at the handler's first call`,
  );
  for (const row of stalled) console.log(`${pad(row.name, 42)}${pad(row.before, 30)}${row.inHandler}`);
  printWebhookFigures(await measureWebhooks());
} finally {
  rmSync(work, { recursive: true, force: true });
}
