/**
 * Listing through GSI1 (keys only): the index gives table keys, a batched read gives the items.
 * Used by the operator side only (organizations, API keys, chatbots); no request path lists.
 */
import { BatchGetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { Db } from "#functions/store/dynamodb";
import { gsi1, type Item, type Key } from "#functions/store/items";

/** Table keys of the items GSI1 holds under `partition`, optionally narrowed by sort key. */
export async function gsi1Keys(
  db: Db,
  partition: string,
  sortKey?: { equals: string } | { beginsWith: string },
): Promise<Key[]> {
  const condition =
    sortKey === undefined
      ? "GSI1PK = :pk"
      : "equals" in sortKey
        ? "GSI1PK = :pk AND GSI1SK = :sk"
        : "GSI1PK = :pk AND begins_with(GSI1SK, :sk)";
  const found: Key[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await db.client.send(
      new QueryCommand({
        TableName: db.tableName,
        IndexName: gsi1.name,
        KeyConditionExpression: condition,
        ExpressionAttributeValues: {
          ":pk": partition,
          ...(sortKey === undefined
            ? {}
            : { ":sk": "equals" in sortKey ? sortKey.equals : sortKey.beginsWith }),
        },
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    for (const item of page.Items ?? []) found.push({ PK: String(item.PK), SK: String(item.SK) });
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return found;
}

/** The items with these keys (in no particular order): 100 per BatchGetItem, unprocessed keys retried. */
export async function batchGetItems(db: Db, keys: readonly Key[]): Promise<Item[]> {
  const found: Item[] = [];
  for (let start = 0; start < keys.length; start += 100) {
    let request: Record<string, { Keys: Item[] }> | undefined = {
      [db.tableName]: { Keys: keys.slice(start, start + 100) as unknown as Item[] },
    };
    while (request && Object.keys(request).length > 0) {
      const response = await db.client.send(new BatchGetCommand({ RequestItems: request }));
      found.push(...(response.Responses?.[db.tableName] ?? []));
      request = response.UnprocessedKeys as Record<string, { Keys: Item[] }> | undefined;
    }
  }
  return found;
}
