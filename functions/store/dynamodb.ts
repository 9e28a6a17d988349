/**
 * The DynamoDB document client and table name, created once per Lambda instance (module scope) and
 * passed to domain functions inside their context so tests and the operator CLI can bring their own.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { type CallBudget, createTableClient } from "#functions/aws-clients";

export interface Db {
  client: DynamoDBDocumentClient;
  tableName: string;
}

/** The SDK reads `AWS_ENDPOINT_URL_DYNAMODB` itself, which is how the local runtime points it at DynamoDB Local. */
export function createDb(tableName: string, client = new DynamoDBClient({})): Db {
  return {
    tableName,
    client: DynamoDBDocumentClient.from(client, {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    }),
  };
}

const fromEnvironment = new Map<CallBudget, Db>();

/**
 * The Lambda's table, named by the stack through `TABLE_NAME`, with the timeouts and retries of the
 * calling function's budget (aws-clients.ts).
 */
export function dbFromEnvironment(budget: CallBudget = "request"): Db {
  let db = fromEnvironment.get(budget);
  if (!db) {
    const tableName = process.env.TABLE_NAME;
    if (!tableName) throw new Error("TABLE_NAME is not set");
    db = createDb(tableName, createTableClient(budget));
    fromEnvironment.set(budget, db);
  }
  return db;
}
