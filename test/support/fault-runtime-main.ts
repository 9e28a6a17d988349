/**
 * The process of a fault runtime (started by test/support/fault-runtime.ts): the local runtime, as
 * `npm start -- --ephemeral` runs it, with its own DynamoDB Local and its own bundles, the functions
 * reaching the table through the test's tap (FAULT_TABLE_ENDPOINT). Writes what the test needs to
 * FAULT_RUNTIME_FILE once it serves, and stops on SIGTERM.
 */
import { writeFileSync } from "node:fs";
import { startLocalRuntime } from "#lib/local/runtime";

const runtimeFile = process.env.FAULT_RUNTIME_FILE;
const tableEndpoint = process.env.FAULT_TABLE_ENDPOINT;
const buildDirectory = process.env.FAULT_BUILD_DIRECTORY;
if (!runtimeFile || !tableEndpoint || !buildDirectory) {
  throw new Error("FAULT_RUNTIME_FILE, FAULT_TABLE_ENDPOINT and FAULT_BUILD_DIRECTORY must be set");
}

const runtime = await startLocalRuntime({
  port: 0,
  buildDirectory,
  environment: { AWS_ENDPOINT_URL_DYNAMODB: tableEndpoint },
});
writeFileSync(
  runtimeFile,
  JSON.stringify({
    baseUrl: runtime.baseUrl,
    streamUrl: runtime.streamUrl,
    tableName: runtime.tableName,
    dynamoDbEndpoint: runtime.dynamoDbEndpoint,
    dynamoDbPid: runtime.dynamoDbPid,
    cognito: {
      endpoint: runtime.cognito.endpoint,
      userPoolId: runtime.cognito.userPoolId,
      clientId: runtime.cognito.clientId,
    },
  }),
);

let stopping = false;
process.on("SIGTERM", () => {
  if (stopping) return;
  stopping = true;
  void runtime.stop().finally(() => process.exit(0));
});
