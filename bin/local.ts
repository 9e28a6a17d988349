/**
 * `npm start`: the API on this machine. DynamoDB Local (data kept in .local/dynamodb), the stack's
 * table, every function bundled as for Lambda behind an emulator of API Gateway HTTP API, and a
 * demo organization, key and chatbot. Ctrl-C stops all of it.
 *
 *   npm start                                   port 3000 (stream URL on 3001), data kept between runs
 *   npm start -- --port 8080 --stream-port 8081
 *   npm start -- --ephemeral --port 0 --demo-file /tmp/demo.json   in-memory, free port (tests, n8n e2e)
 *   npm start -- --authorizer-context strings   hand the authorizer's context over as strings
 *   npm start -- --data-directory /tmp/data --build-directory /tmp/build   a second runtime beside the first
 *
 * DynamoDB Local is supervised: if it dies, it is restarted with its data (the log says so), or,
 * with --ephemeral (its data died with it), everything stops with a message and exit status 1.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { systemClock } from "#functions/domain/context";
import { createDb } from "#functions/store/dynamodb";
import { credentialCipherFor, toolEnvironment } from "#functions/tools/environment";
import { demoOrder, ensureDemo } from "#lib/local/demo";
import { localDirectory, startLocalRuntime } from "#lib/local/runtime";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: process.env.PORT ?? "3000" },
    /** The stream function's URL (POST /api/message/stream); default: the port after --port (0: any free port). */
    "stream-port": { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    ephemeral: { type: "boolean", default: false },
    /** Where DynamoDB Local keeps its data (ignored with --ephemeral). */
    "data-directory": { type: "string", default: resolve(localDirectory, "dynamodb") },
    /** Where the function bundles are written. */
    "build-directory": { type: "string", default: resolve(localDirectory, "build") },
    "demo-file": { type: "string", default: resolve(localDirectory, "demo.json") },
    /** Where to write {baseUrl, tableName, dynamoDbEndpoint, dynamoDbPid, …} (the operator CLI reads .local/runtime.json). */
    "runtime-file": { type: "string" },
    /** `typed` (default) or `strings`: how the authorizer's context reaches the functions. */
    "authorizer-context": { type: "string", default: "typed" },
  },
});
const authorizerContext = values["authorizer-context"];
if (authorizerContext !== "typed" && authorizerContext !== "strings") {
  console.error(`--authorizer-context must be "typed" or "strings", not "${authorizerContext}"`);
  process.exit(2);
}

mkdirSync(localDirectory, { recursive: true });
let stopping = false;
// Set once the runtime is up; DynamoDB Local can die before that (during bundling).
let started: { stop(): Promise<void>; writeRuntimeFile(): void } | undefined;
const port = Number(values.port);
const runtime = await startLocalRuntime({
  port,
  streamPort: values["stream-port"] !== undefined ? Number(values["stream-port"]) : port === 0 ? 0 : port + 1,
  host: values.host,
  authorizerContext,
  ...(values.ephemeral ? {} : { dataDirectory: resolve(values["data-directory"]) }),
  buildDirectory: resolve(values["build-directory"]),
  log: (line) => console.error(`[dynamodb-local] ${line}`),
  onDatabaseRestarted: () => started?.writeRuntimeFile(),
  onDatabaseLost: (message) => {
    console.error(`[dynamodb-local] ${message}`);
    if (stopping) return;
    stopping = true;
    void (started?.stop() ?? Promise.resolve()).finally(() => process.exit(1));
  },
});
// The operator CLI finds the local table through this file (an ephemeral run writes none unless asked).
const runtimeFile =
  values["runtime-file"] ?? (values.ephemeral ? undefined : resolve(localDirectory, "runtime.json"));
function writeRuntimeFile(): void {
  if (!runtimeFile) return;
  writeFileSync(
    runtimeFile,
    `${JSON.stringify(
      {
        tableName: runtime.tableName,
        dynamoDbEndpoint: runtime.dynamoDbEndpoint,
        // Fault tests stall (SIGSTOP) or kill this process; it changes when DynamoDB Local is restarted.
        dynamoDbPid: runtime.dynamoDbPid,
        baseUrl: runtime.baseUrl,
        streamUrl: runtime.streamUrl,
        // The operator CLI seals tool credentials with the same key file and reaches the same sample shop.
        environment: runtime.toolEnvironment,
      },
      null,
      2,
    )}\n`,
  );
}
writeRuntimeFile();
started = { stop: () => runtime.stop(), writeRuntimeFile };
const credentials = credentialCipherFor(toolEnvironment(runtime.toolEnvironment).credentialKey);
const demo = await ensureDemo(
  {
    db: createDb(runtime.tableName, runtime.dynamoDb),
    clock: systemClock,
    ...(credentials ? { credentials } : {}),
  },
  values["demo-file"],
  { baseUrl: runtime.baseUrl, streamUrl: runtime.streamUrl },
);

const curl = `curl -s -X POST ${demo.baseUrl}/api/conversation \\
  -H "Authorization: Bearer ${demo.apiKey}" -H "Content-Type: application/json" \\
  -d '{"chatbot_id":"${demo.chatbotId}"}'`;
console.log(`
Chatbot Conversation API (local)
  Base URL      ${demo.baseUrl}
  Stream URL    ${demo.streamUrl}  (POST /api/message/stream, as a Lambda function URL)
  API key       ${demo.apiKey}
  Chatbot id    ${demo.chatbotId}
  Organization  ${demo.organizationId}
  Table         ${runtime.tableName} on ${runtime.dynamoDbEndpoint}
  Demo file     ${values["demo-file"]}

Start a conversation:
${curl}

Then send a message (use the conversation_id it returns):
curl -s -X POST ${demo.baseUrl}/api/message \\
  -H "Authorization: Bearer ${demo.apiKey}" -H "Content-Type: application/json" \\
  -d '{"conversation_id":"<conversation_id>","message":"How long does shipping take?"}'

Or stream the reply as it is written (Server-Sent Events):
curl -sN -X POST ${demo.streamUrl}/api/message/stream \\
  -H "Authorization: Bearer ${demo.apiKey}" -H "Content-Type: application/json" \\
  -d '{"conversation_id":"<conversation_id>","message":"How long does shipping take?"}'

Look up an order in the sample shop${runtime.sampleShop ? ` (WooCommerce fake on ${runtime.sampleShop.woocommerce})` : ""}:
send "Where is my order ${demoOrder.orderNumber}?" and, when asked, "${demoOrder.email}"
in the same conversation. Tools: npm run admin -- tools list --org ${demo.organizationId} --chatbot ${demo.chatbotId}

Ctrl-C stops everything.
`);

const stop = async () => {
  if (stopping) return;
  stopping = true;
  await runtime.stop();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
