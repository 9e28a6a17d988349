/**
 * Where a chatbot's passages live, and the version that says when they changed. Ingestion calls
 * `publishSourcePassages` when a source has been (re)processed and `removeSourcePassages` when it
 * is deleted; retrieval reads what was published.
 *
 * This first version keeps each source's passages as one JSON object in the knowledge bucket
 * (`passages/{org}/{chatbot}/{sourceId}.json`, knowledge/storage.ts) and bumps the chatbot item's
 * `knowledgeVersion` (one atomic `ADD`) after every change, so anything built from the passages
 * (an index cached by a Lambda instance) can tell it is out of date with the read of the chatbot
 * item a turn makes anyway. Retrieval extends it (embeddings, the index itself).
 */
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand } from "@aws-sdk/client-s3";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { AppError } from "#functions/errors";
import type { Passage, PassageSource } from "#functions/knowledge/passage";
import { type KnowledgeStorage, knowledgeKeys } from "#functions/knowledge/storage";
import { refusedAs } from "#functions/store/conditions";
import { keys } from "#functions/store/items";

export interface KnowledgeContext extends DomainContext {
  storage: KnowledgeStorage;
}

/** The object kept per source. */
export interface PublishedSource {
  format: 1;
  organizationId: string;
  chatbotId: string;
  source: PassageSource;
  passages: Passage[];
  publishedAt: string;
}

/**
 * Replaces a source's passages (all of them: a source is published whole) and bumps the chatbot's
 * knowledge version; answers the new version. A chatbot deleted meanwhile: its object is removed
 * again and `chatbot_not_found` thrown.
 */
export async function publishSourcePassages(
  ctx: KnowledgeContext,
  organizationId: string,
  chatbotId: string,
  source: PassageSource,
  passages: readonly Passage[],
): Promise<number> {
  const stray = passages.find((passage) => passage.sourceId !== source.sourceId);
  if (stray)
    throw new Error(`passage ${stray.passageId} belongs to source ${stray.sourceId}, not ${source.sourceId}`);
  const published: PublishedSource = {
    format: 1,
    organizationId,
    chatbotId,
    source,
    passages: [...passages],
    publishedAt: isoTime(ctx.clock()),
  };
  const key = knowledgeKeys.passages(organizationId, chatbotId, source.sourceId);
  await ctx.storage.client.send(
    new PutObjectCommand({
      Bucket: ctx.storage.bucket,
      Key: key,
      Body: JSON.stringify(published),
      ContentType: "application/json",
    }),
  );
  try {
    return await bumpKnowledgeVersion(ctx, organizationId, chatbotId);
  } catch (error) {
    if (error instanceof AppError && error.code === "chatbot_not_found") {
      await ctx.storage.client.send(new DeleteObjectCommand({ Bucket: ctx.storage.bucket, Key: key }));
    }
    throw error;
  }
}

/**
 * Removes a source's passages from every later answer and bumps the chatbot's knowledge version;
 * answers the new version, or undefined when the chatbot itself is gone. Removing what is not
 * there is harmless.
 */
export async function removeSourcePassages(
  ctx: KnowledgeContext,
  organizationId: string,
  chatbotId: string,
  sourceId: string,
): Promise<number | undefined> {
  await ctx.storage.client.send(
    new DeleteObjectCommand({
      Bucket: ctx.storage.bucket,
      Key: knowledgeKeys.passages(organizationId, chatbotId, sourceId),
    }),
  );
  try {
    return await bumpKnowledgeVersion(ctx, organizationId, chatbotId);
  } catch (error) {
    if (error instanceof AppError && error.code === "chatbot_not_found") return undefined;
    throw error;
  }
}

/** A source's published passages, or undefined when none are. */
export async function readSourcePassages(
  ctx: KnowledgeContext,
  organizationId: string,
  chatbotId: string,
  sourceId: string,
): Promise<PublishedSource | undefined> {
  try {
    const object = await ctx.storage.client.send(
      new GetObjectCommand({
        Bucket: ctx.storage.bucket,
        Key: knowledgeKeys.passages(organizationId, chatbotId, sourceId),
      }),
    );
    const published = JSON.parse((await object.Body?.transformToString("utf8")) ?? "null") as PublishedSource;
    // The key already names the tenant; a stored object saying otherwise is not served.
    if (published.organizationId !== organizationId || published.chatbotId !== chatbotId) return undefined;
    return published;
  } catch (error) {
    if (error instanceof NoSuchKey) return undefined;
    throw error;
  }
}

/** One atomic increment of the chatbot item's `knowledgeVersion` (absent counts as 0). */
async function bumpKnowledgeVersion(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
): Promise<number> {
  const result = await refusedAs(
    ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.chatbot(organizationId, chatbotId),
        UpdateExpression: "ADD knowledgeVersion :one",
        ConditionExpression: "attribute_exists(PK)",
        ExpressionAttributeValues: { ":one": 1 },
        ReturnValues: "UPDATED_NEW",
      }),
    ),
    () => new AppError("chatbot_not_found"),
  );
  return Number(result.Attributes?.knowledgeVersion ?? 0);
}
