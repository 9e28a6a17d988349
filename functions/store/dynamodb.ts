/**
 * The DynamoDB document client and table name, created once per Lambda instance (module scope) and
 * passed to domain functions inside their context so tests and the operator CLI can bring their own.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

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

let fromEnvironment: Db | undefined;

/** The Lambda's table, named by the stack through `TABLE_NAME`. */
export function dbFromEnvironment(): Db {
  if (!fromEnvironment) {
    const tableName = process.env.TABLE_NAME;
    if (!tableName) throw new Error("TABLE_NAME is not set");
    fromEnvironment = createDb(tableName);
  }
  return fromEnvironment;
}
