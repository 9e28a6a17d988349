/**
 * Knowledge gaps: visitors' questions the chatbot's knowledge could not answer (the turn answered
 * with the fallback reply, or retrieval found no confident passage), so the organization can see
 * what to add.
 *
 * Recording costs one `UpdateItem` of about 1 WRU, only on such a turn, sent beside the reply's
 * write (no extra round trip): one item per chatbot, day and kind of question (a hash of its
 * stemmed words, so "Return policy?" and "what is your return policy" are one item that counts up),
 * in a partition of its own. Listing reads the days asked for (one `Query`, at most GAP_READ_LIMIT
 * items whatever the traffic) and groups similar questions: by their embeddings when they have them
 * (cosine ≥ the model's confidence bar), else by their words; most frequent first.
 */
import { QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { tokenize } from "#functions/agent/retrieval";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import {
  GAP_RETENTION_DAYS,
  type Item,
  type KnowledgeGapRecord,
  keys,
  prefixes,
  records,
} from "#functions/store/items";

/** Items a listing reads at most: the cost of a listing does not grow with the traffic. */
export const GAP_READ_LIMIT = 2_000;
/** Groups a listing answers at most. */
export const GAPS_LISTED = 100;
const QUESTION_LENGTH = 500;

/** The kind of a question: its stemmed content words, sorted; empty for a question without any. */
export function questionSignature(question: string): string {
  const words = [...new Set(tokenize(question))].sort();
  if (words.length === 0) return "";
  let hash = 0x811c9dc5;
  const text = words.join(" ");
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return `${(hash >>> 0).toString(16).padStart(8, "0")}${words.length.toString(16).padStart(2, "0")}`;
}

export interface GapInput {
  organizationId: string;
  chatbotId: string;
  conversationId: string;
  question: string;
  at: number;
  /** The question's embedding, when the turn made one. */
  vector?: { model: string; values: Float32Array };
}

export async function recordGap(ctx: DomainContext, input: GapInput): Promise<void> {
  const signature = questionSignature(input.question);
  if (!signature) return;
  const at = isoTime(input.at);
  const day = at.slice(0, 10);
  await ctx.db.client.send(
    new UpdateCommand({
      TableName: ctx.db.tableName,
      Key: keys.knowledgeGap(input.organizationId, input.chatbotId, day, signature),
      UpdateExpression:
        "SET entity = :entity, organizationId = :org, chatbotId = :bot, #day = :day, signature = :signature, question = if_not_exists(question, :question), lastAskedAt = :at, conversationId = :conversation, #ttl = :ttl" +
        (input.vector
          ? ", vector = if_not_exists(vector, :vector), model = if_not_exists(model, :model)"
          : "") +
        " ADD #count :one",
      ExpressionAttributeNames: { "#day": "day", "#ttl": "ttl", "#count": "count" },
      ExpressionAttributeValues: {
        ":entity": "KnowledgeGap",
        ":org": input.organizationId,
        ":bot": input.chatbotId,
        ":day": day,
        ":signature": signature,
        ":question": input.question.trim().slice(0, QUESTION_LENGTH),
        ":at": at,
        ":conversation": input.conversationId,
        ":ttl": Math.floor(input.at / 1000) + GAP_RETENTION_DAYS * 86_400,
        ":one": 1,
        ...(input.vector ? { ":vector": packVector(input.vector.values), ":model": input.vector.model } : {}),
      },
    }),
  );
}

export interface KnowledgeGap {
  question: string;
  count: number;
  lastAskedAt: string;
  conversationId: string;
}

/**
 * The gaps between two days (inclusive, `YYYY-MM-DD`), similar questions grouped, most frequent
 * first. `similar` is the cosine at which two questions' embeddings count as one question.
 */
export async function listKnowledgeGaps(
  ctx: DomainContext,
  input: { organizationId: string; chatbotId: string; from: string; to: string; similar?: number },
): Promise<KnowledgeGap[]> {
  const found: KnowledgeGapRecord[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND SK BETWEEN :from AND :to",
        ExpressionAttributeValues: {
          ":pk": prefixes.gapsPartition(input.organizationId, input.chatbotId),
          ":from": prefixes.gapDay(input.from),
          ":to": `${prefixes.gapDay(input.to)}\uffff`,
        },
        // Newest days first, so a capped read keeps the recent questions.
        ScanIndexForward: false,
        Limit: GAP_READ_LIMIT - found.length,
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    found.push(...(page.Items ?? []).map(records.knowledgeGap));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey && found.length < GAP_READ_LIMIT);
  return groupGaps(found, input.similar ?? 0.8);
}

interface Group {
  members: KnowledgeGapRecord[];
  count: number;
  lastAskedAt: string;
  conversationId: string;
  vector?: { model: string; values: Float32Array };
  words: Set<string>;
}

/** Same kind across days first, then similar kinds greedily (the most asked first), by vector or by words. */
export function groupGaps(records: readonly KnowledgeGapRecord[], similar: number): KnowledgeGap[] {
  const bySignature = new Map<string, KnowledgeGapRecord[]>();
  for (const record of records)
    bySignature.set(record.signature, [...(bySignature.get(record.signature) ?? []), record]);
  const kinds = [...bySignature.values()]
    .map((members) => ({
      members,
      count: members.reduce((sum, member) => sum + member.count, 0),
      latest: members.reduce((a, b) => (a.lastAskedAt >= b.lastAskedAt ? a : b)),
    }))
    .sort((a, b) => b.count - a.count || b.latest.lastAskedAt.localeCompare(a.latest.lastAskedAt));
  const groups: Group[] = [];
  for (const kind of kinds) {
    const withVector = kind.members.find((member) => member.vector && member.model);
    const vector = withVector
      ? { model: withVector.model as string, values: unpackVector(withVector.vector as string) }
      : undefined;
    const words = new Set(tokenize(kind.latest.question));
    const home = groups.find((group) =>
      vector && group.vector && group.vector.model === vector.model
        ? cosine(group.vector.values, vector.values) >= similar
        : jaccard(group.words, words) >= 0.6,
    );
    if (home) {
      home.members.push(...kind.members);
      home.count += kind.count;
      if (kind.latest.lastAskedAt > home.lastAskedAt) {
        home.lastAskedAt = kind.latest.lastAskedAt;
        home.conversationId = kind.latest.conversationId;
      }
    } else {
      groups.push({
        members: [...kind.members],
        count: kind.count,
        lastAskedAt: kind.latest.lastAskedAt,
        conversationId: kind.latest.conversationId,
        ...(vector ? { vector } : {}),
        words,
      });
    }
  }
  return groups
    .sort((a, b) => b.count - a.count || b.lastAskedAt.localeCompare(a.lastAskedAt))
    .slice(0, GAPS_LISTED)
    .map((group) => {
      // The group's most asked wording stands for it.
      const wording = group.members.reduce((a, b) => (b.count > a.count ? b : a));
      return {
        question: wording.question,
        count: group.count,
        lastAskedAt: group.lastAskedAt,
        conversationId: group.conversationId,
      };
    });
}

function packVector(values: Float32Array): string {
  let largest = 0;
  for (const value of values) largest = Math.max(largest, Math.abs(value));
  const bytes = new Int8Array(values.length);
  if (largest > 0) {
    for (let i = 0; i < values.length; i++) bytes[i] = Math.round(((values[i] as number) / largest) * 127);
  }
  return Buffer.from(bytes.buffer).toString("base64");
}

function unpackVector(text: string): Float32Array {
  const bytes = new Int8Array(Buffer.from(text, "base64"));
  return Float32Array.from(bytes);
}

function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return shared / (a.size + b.size - shared);
}
