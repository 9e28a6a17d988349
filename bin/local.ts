/**
 * `npm start`: the API on this machine. DynamoDB Local (data kept in .local/dynamodb), the stack's
 * table, cognito-local with the stack's user pool (people kept in .local/cognito), every function
 * bundled as for Lambda behind an emulator of API Gateway HTTP API, and a demo organization, key,
 * chatbot and console users (an operator, an admin, a viewer). Ctrl-C stops all of it.
 *
 *   npm start                                   API on port 3000, stream URL on 3001, the console on 3002, the
 *                                               widget's demo page on 3003; data kept between runs
 *   npm start -- --port 8080 --stream-port 8081 --console-port 8082
 *   npm start -- --ephemeral --port 0 --demo-file /tmp/demo.json   in-memory, free port (tests, n8n e2e)
 *   npm start -- --authorizer-context strings   hand the authorizer's context over as strings
 *   npm start -- --data-directory /tmp/data --event-state-directory /tmp/events --build-directory /tmp/build
 *                                               a second runtime beside the first
 *
 * DynamoDB Local is supervised: if it dies, it is restarted with its data (the log says so), or,
 * with --ephemeral (its data died with it), everything stops with a message and exit status 1.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { build as buildConsole } from "vite";
import { systemClock } from "#functions/domain/context";
import { envelopeCipherFor } from "#functions/secrets/envelope";
import { createDb } from "#functions/store/dynamodb";
import { toolEnvironment } from "#functions/tools/environment";
import {
  consoleDirectory,
  consoleNeedsBuild,
  startConsoleServer,
  widgetDirectory,
  widgetNeedsBuild,
} from "#lib/local/console-server";
import { demoOrder, ensureDemo } from "#lib/local/demo";
import { startDemoPage } from "#lib/local/demo-page";
import { localDirectory, startLocalRuntime } from "#lib/local/runtime";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: process.env.PORT ?? "3000" },
    /** The stream function's URL (POST /api/message/stream); default: the port after --port (0: any free port). */
    "stream-port": { type: "string" },
    /** The console's port; default: two after --port (0: any free port). */
    "console-port": { type: "string", default: process.env.CONSOLE_PORT },
    /** The widget's demo page (another origin); default: three after --port (0: any free port). */
    "demo-page-port": { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    ephemeral: { type: "boolean", default: false },
    /** Where DynamoDB Local keeps its data (ignored with --ephemeral). */
    "data-directory": { type: "string", default: resolve(localDirectory, "dynamodb") },
    /** Where the local SQS keeps its queues and the stream emulator its checkpoints (ignored with --ephemeral). */
    "event-state-directory": { type: "string", default: localDirectory },
    /** Where the function bundles are written. */
    "build-directory": { type: "string", default: resolve(localDirectory, "build") },
    "demo-file": { type: "string", default: resolve(localDirectory, "demo.json") },
    /** Where to write {baseUrl, tableName, dynamoDbEndpoint, dynamoDbPid, …} (the operator CLI reads .local/runtime.json). */
    "runtime-file": { type: "string" },
    /** `typed` (default) or `strings`: how the authorizer's context reaches the functions. */
    "authorizer-context": { type: "string", default: "typed" },
    /** Where invitations and reset codes land (default .local/mailbox.jsonl; ephemeral: a temporary file). */
    "mailbox-file": { type: "string" },
    /** Where cognito-local keeps the user pool and its people (ignored with --ephemeral). */
    "cognito-directory": { type: "string", default: resolve(localDirectory, "cognito") },
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
const mailboxFile =
  values["mailbox-file"] ??
  (values.ephemeral
    ? resolve(tmpdir(), `chatbot-api-mailbox-${process.pid}.jsonl`)
    : resolve(localDirectory, "mailbox.jsonl"));
const port = Number(values.port);
const runtime = await startLocalRuntime({
  port,
  streamPort: values["stream-port"] !== undefined ? Number(values["stream-port"]) : port === 0 ? 0 : port + 1,
  host: values.host,
  authorizerContext,
  mailboxFile,
  ...(values.ephemeral
    ? {}
    : {
        dataDirectory: resolve(values["data-directory"]),
        eventStateDirectory: resolve(values["event-state-directory"]),
        cognitoDirectory: resolve(values["cognito-directory"]),
      }),
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
        // The operator CLI seals tool credentials (and webhook secrets) with the same key files,
        // reaches the same sample shop and queues redeliveries on the same local SQS.
        environment: {
          ...runtime.toolEnvironment,
          ...runtime.webhookEnvironment,
          ...runtime.knowledgeEnvironment,
        },
        // The console's sign-in, the operator CLI's people commands and the tests reach cognito-local here.
        cognito: {
          endpoint: runtime.cognito.endpoint,
          region: "us-east-1",
          userPoolId: runtime.cognito.userPoolId,
          clientId: runtime.cognito.clientId,
          issuer: runtime.cognito.issuer,
          mailboxFile: runtime.cognito.mailboxFile,
        },
      },
      null,
      2,
    )}\n`,
  );
}
writeRuntimeFile();
started = { stop: () => runtime.stop(), writeRuntimeFile };
// The console, served as CloudFront serves it: built first if its sources changed.
if (consoleNeedsBuild()) {
  console.error("[console] building the console …");
  await buildConsole({ configFile: resolve(consoleDirectory, "vite.config.ts"), logLevel: "warn" });
}
// The website widget, served by the console's host as on AWS: built first if its sources changed.
if (widgetNeedsBuild()) {
  console.error("[widget] building the widget …");
  execFileSync(process.execPath, [resolve(widgetDirectory, "scripts/build.mjs")], { stdio: "inherit" });
}
const consoleServer = await startConsoleServer({
  port: values["console-port"] !== undefined ? Number(values["console-port"]) : port === 0 ? 0 : port + 2,
  host: values.host,
  apiUrl: runtime.baseUrl,
  streamUrl: runtime.streamUrl,
  originVerifySecret: runtime.originVerifySecret,
  // As on AWS: the stream path on the console's own origin, passed on to the function URL.
  config: (consoleUrl) => ({
    apiBaseUrl: runtime.baseUrl,
    streamUrl: `${consoleUrl}/`,
    cognito: {
      endpoint: runtime.cognito.endpoint,
      region: "us-east-1",
      userPoolId: runtime.cognito.userPoolId,
      clientId: runtime.cognito.clientId,
    },
  }),
});
// The console uploads knowledge files straight to the bucket: its origin is the one the CORS rules allow.
runtime.knowledgeUploadOrigins.push(consoleServer.url);
// A business's page on another origin, with the widget for the demo chatbot.
let demoChatbotId = "";
const demoPage = await startDemoPage({
  port: values["demo-page-port"] !== undefined ? Number(values["demo-page-port"]) : port === 0 ? 0 : port + 3,
  host: values.host,
  consoleUrl: consoleServer.url,
  chatbotId: () => demoChatbotId,
});
const credentials = envelopeCipherFor(toolEnvironment(runtime.toolEnvironment).credentialKey);
const demo = await ensureDemo(
  {
    db: createDb(runtime.tableName, runtime.dynamoDb),
    clock: systemClock,
    ...(credentials ? { credentials } : {}),
  },
  {
    client: runtime.cognito.client,
    userPoolId: runtime.cognito.userPoolId,
    endpoint: runtime.cognito.endpoint,
    clientId: runtime.cognito.clientId,
  },
  values["demo-file"],
  { baseUrl: runtime.baseUrl, streamUrl: runtime.streamUrl },
  consoleServer.url,
  demoPage.url,
);
demoChatbotId = demo.chatbotId;

// Commands that paste and run as they are: the conversation's id is kept in a shell variable.
const auth = `-H "Authorization: Bearer ${demo.apiKey}" -H "Content-Type: application/json"`;
const message = (text: string) =>
  `-d "{\\"conversation_id\\":\\"$CONVERSATION\\",\\"message\\":\\"${text}\\"}"`;
console.log(`
Chatbot Conversation API (local)
  Console       ${consoleServer.url}   (sign in as the admin below)
  Widget demo   ${demoPage.url}   (a shop page on another origin, with the chat widget)
  Base URL      ${demo.baseUrl}
  Stream URL    ${demo.streamUrl}  (POST /api/message/stream, as a Lambda function URL)
  API key       ${demo.apiKey}
  Chatbot id    ${demo.chatbotId}
  Organization  ${demo.organizationId}
  Table         ${runtime.tableName} on ${runtime.dynamoDbEndpoint} (stream → webhook fan-out)
  Local SQS     ${runtime.webhookEnvironment.AWS_ENDPOINT_URL_SQS} (webhook deliveries)
  Demo file     ${values["demo-file"]}

Start a conversation (its id is kept in $CONVERSATION for the commands after it):
CONVERSATION=$(curl -s -X POST ${demo.baseUrl}/api/conversation ${auth} \\
  -d '{"chatbot_id":"${demo.chatbotId}"}' | node -p 'JSON.parse(fs.readFileSync(0)).conversation_id')

Then send it a message:
curl -s -X POST ${demo.baseUrl}/api/message ${auth} \\
  ${message("How long does shipping take?")}

Or stream the reply as it is written (Server-Sent Events):
curl -sN -X POST ${demo.streamUrl}/api/message/stream ${auth} \\
  ${message("Can I return my order?")}

Console users (sign in with USER_PASSWORD_AUTH on ${runtime.cognito.endpoint}, client ${runtime.cognito.clientId}):
  Operator      ${demo.operatorEmail}   ${demo.operatorPassword}
  Admin         ${demo.consoleEmail}   ${demo.consolePassword}
  Viewer        ${demo.viewerEmail}   ${demo.viewerPassword}
  Mailbox       ${runtime.cognito.mailboxFile}   (invitations and password-reset codes)

Look up an order in the sample shop${runtime.sampleShop ? ` (WooCommerce fake on ${runtime.sampleShop.woocommerce})` : ""}:
send "Where is my order ${demoOrder.orderNumber}?" and, when asked, "${demoOrder.email}"
in the same conversation. Tools: npm run admin -- tools list --org ${demo.organizationId} --chatbot ${demo.chatbotId}

Ctrl-C stops everything.
`);

const stop = async () => {
  if (stopping) return;
  stopping = true;
  // Ctrl-C reached DynamoDB Local and cognito-local too: they must not be started again.
  runtime.stopSupervising();
  await consoleServer.close();
  await demoPage.close();
  await runtime.stop();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
