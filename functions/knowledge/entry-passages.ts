/**
 * Today's knowledge entries as passages. An entry (`qa`: a question and its answer; `snippet`: an
 * optional title and a text) is its own source and one passage: a Q/A's question is the passage's
 * heading and its answer the text, so the question is matched and embedded with it and the answer is
 * what a scripted reply says. The entries live in the chatbot's partition (`KNOW#…`); they are read
 * only when an instance has not seen the chatbot's knowledge version yet.
 */
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import type { LoadedKnowledge } from "#functions/knowledge/retriever";
import type { IndexedPassage } from "#functions/knowledge/search-index";
import { type Item, type KnowledgeEntryRecord, prefixes, records } from "#functions/store/items";

/** The words of a snippet without a title that stand for it as a source's title. */
const UNTITLED_WORDS = 8;

export function entryPassage(entry: KnowledgeEntryRecord): IndexedPassage {
  if (entry.kind === "qa") {
    return {
      passageId: entry.entryId,
      sourceId: entry.entryId,
      sourceTitle: entry.question,
      titlePath: [entry.question],
      text: entry.answer,
    };
  }
  const title = entry.title?.trim();
  const words = entry.text.trim().split(/\s+/);
  return {
    passageId: entry.entryId,
    sourceId: entry.entryId,
    sourceTitle:
      title || `${words.slice(0, UNTITLED_WORDS).join(" ")}${words.length > UNTITLED_WORDS ? " …" : ""}`,
    titlePath: title ? [title] : [],
    text: entry.text,
  };
}

/** The chatbot's entries (every page of its `KNOW#` range), as passages, for a knowledge version. */
export async function readEntryKnowledge(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
  version: number,
): Promise<LoadedKnowledge> {
  const passages: IndexedPassage[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :knowledge)",
        ExpressionAttributeValues: {
          ":pk": prefixes.chatbotPartition(organizationId, chatbotId),
          ":knowledge": prefixes.knowledge,
        },
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    for (const item of page.Items ?? []) passages.push(entryPassage(records.knowledgeEntry(item)));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return { version, passages };
}
