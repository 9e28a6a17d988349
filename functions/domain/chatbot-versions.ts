/**
 * The versions a chatbot's item carries for what instances keep in memory: `knowledgeVersion` (the
 * search index of its passages) and `toolsVersion` (its look-up tools). A change of either writes
 * its item(s) and moves the version in one transaction, so an instance that sees the version it
 * holds holds exactly what is stored. A settings update keeps the versions it read (its write is
 * conditioned on them, domain/chatbots.ts), so it never writes an older version back.
 */
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { AppError } from "#functions/errors";
import { cancellationReasons, type TransactAction } from "#functions/store/conditions";
import { keys } from "#functions/store/items";

export type VersionedPart = "knowledgeVersion" | "toolsVersion";

/** The action that moves a chatbot's version of `part` (the chatbot must exist). */
export function versionBump(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
  part: VersionedPart,
): TransactAction {
  return {
    Update: {
      TableName: ctx.db.tableName,
      Key: keys.chatbot(organizationId, chatbotId),
      UpdateExpression: "ADD #version :one",
      ConditionExpression: "attribute_exists(PK)",
      ExpressionAttributeNames: { "#version": part },
      ExpressionAttributeValues: { ":one": 1 },
    },
  };
}

/**
 * Writes `actions` (each with its own condition) and moves the chatbot's version of `part`, all or
 * nothing. A refused condition of one of `actions` is `refused()`; a chatbot that is gone, `chatbot_not_found`.
 */
export async function writeWithVersion(
  ctx: DomainContext,
  input: { organizationId: string; chatbotId: string; part: VersionedPart; actions: TransactAction[] },
  refused: () => Error,
): Promise<void> {
  try {
    await ctx.db.client.send(
      new TransactWriteCommand({
        TransactItems: [
          ...input.actions,
          versionBump(ctx, input.organizationId, input.chatbotId, input.part),
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) throw error;
    const reasons = cancellationReasons(error);
    if (reasons.at(-1)?.code === "ConditionalCheckFailed") throw new AppError("chatbot_not_found");
    if (reasons.some((reason) => reason.code === "ConditionalCheckFailed")) throw refused();
    if (reasons.some((reason) => reason.code === "TransactionConflict")) throw new AppError("conflict");
    throw error;
  }
}
