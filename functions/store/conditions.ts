/** Reading DynamoDB's refusals of conditional writes. */
import { ConditionalCheckFailedException, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, PutCommand, type TransactWriteCommandInput } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { Db } from "#functions/store/dynamodb";
import type { Item, Key } from "#functions/store/items";

/** One action of a TransactWriteItems. */
export type TransactAction = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

/** An action creating an item that must not exist yet (a retried write cannot create it twice). */
export function putNewAction(tableName: string, item: Item): TransactAction {
  return { Put: { TableName: tableName, Item: item, ConditionExpression: "attribute_not_exists(PK)" } };
}

/** An action deleting an item that must exist. */
export function deleteExistingAction(tableName: string, key: Key): TransactAction {
  return { Delete: { TableName: tableName, Key: key, ConditionExpression: "attribute_exists(PK)" } };
}

/**
 * The item as stored when a conditional write was refused (`ReturnValuesOnConditionCheckFailure:
 * ALL_OLD`), or undefined when there was none. Rethrows anything that is not a refusal.
 * The document client does not unmarshall exception payloads, hence the explicit unmarshall.
 */
export function refusedItem(error: unknown): Item | undefined {
  if (!(error instanceof ConditionalCheckFailedException)) throw error;
  return error.Item ? (unmarshall(error.Item) as Item) : undefined;
}

/** For a cancelled transaction: which actions failed their condition, with the stored items (by action index). */
export function cancellationReasons(
  error: unknown,
): { failed: boolean; code: string | undefined; item: Item | undefined }[] {
  if (!(error instanceof TransactionCanceledException)) throw error;
  return (error.CancellationReasons ?? []).map((reason) => ({
    failed: reason.Code !== undefined && reason.Code !== "None",
    code: reason.Code,
    item: reason.Item ? (unmarshall(reason.Item) as Item) : undefined,
  }));
}

/**
 * Awaits a conditional write; when DynamoDB refuses its condition, throws `refusal()` instead
 * (e.g. "conflict" for a create, "not found" for an update of something absent).
 */
export async function refusedAs<T>(write: Promise<T>, refusal: () => Error): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw refusal();
    throw error;
  }
}

/** Creates an item that must not exist yet; if one with its key does, throws `exists()`. */
export async function putNew(db: Db, item: Item, exists: () => Error): Promise<void> {
  await refusedAs(
    db.client.send(
      new PutCommand({
        TableName: db.tableName,
        Item: item,
        ConditionExpression: "attribute_not_exists(PK)",
      }),
    ),
    exists,
  );
}

/**
 * Replaces an item read earlier, only if nobody changed it since (optimistic: its `updatedAt` is
 * still the one read); otherwise throws `changed()` rather than overwrite the other change.
 */
export async function putIfUnchanged(
  db: Db,
  item: Item,
  seenUpdatedAt: string,
  changed: () => Error,
): Promise<void> {
  await refusedAs(
    db.client.send(
      new PutCommand({
        TableName: db.tableName,
        Item: item,
        ConditionExpression: "updatedAt = :seen",
        ExpressionAttributeValues: { ":seen": seenUpdatedAt },
      }),
    ),
    changed,
  );
}

/** Deletes an item that must exist; if there is none with this key, throws `missing()`. */
export async function deleteExisting(db: Db, key: Key, missing: () => Error): Promise<void> {
  await refusedAs(
    db.client.send(
      new DeleteCommand({ TableName: db.tableName, Key: key, ConditionExpression: "attribute_exists(PK)" }),
    ),
    missing,
  );
}
