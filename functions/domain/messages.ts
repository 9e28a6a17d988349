/**
 * Conversation turns (POST /api/message) and history (GET …/messages).
 *
 * Main course of a turn:
 *   1. claim the next turn number on the conversation (one conditional UpdateItem: it exists in
 *      this organization → else 404, it is open → else 409);
 *   2. in parallel: read the chatbot (settings, knowledge, tools: one Query), the windowed history
 *      (one Query) and the visitor's attachments (decoded or fetched);
 *   3. store the visitor's message — before any model runs, so nothing accepted is lost;
 *   4. run the chatbot's engine under a deadline well inside the gateway's 30 s; any failure or
 *      timeout gives the chatbot's fallback reply instead (logged with the request id);
 *   5. store the reply with its token usage and model latency, and return it.
 * Message sort keys are `MSG#{turn}#{index}`: the turn number orders turns, index 00 is the
 * visitor's message and 01… the chatbot's replies, so a history page reads in conversation order.
 */
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type { ChatEngine, EngineReply, HistoryMessage, ImageInput, ToolBox } from "#functions/agent/engine";
import { type ChatbotBundle, chatbotLimits, loadChatbotBundle } from "#functions/domain/chatbots";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { AppError, validationError } from "#functions/errors";
import { describeError, log } from "#functions/log";
import { refusedItem } from "#functions/store/conditions";
import {
  type ConversationRecord,
  type Item,
  items,
  keys,
  type MessageRecord,
  messageSortKey,
  prefixes,
  records,
  type StoredAttachment,
} from "#functions/store/items";

// ---------- inputs and services ----------

export type AttachmentInput =
  | { type: "image"; url: string }
  | { type: "image"; data: string; media_type: ImageInput["mediaType"] };

/** A resolved attachment: what the engine sees, and what is stored. */
export interface ResolvedAttachment {
  image: ImageInput;
  stored: StoredAttachment;
}

/** What a turn needs from the agent side; built once per Lambda instance (agent/services.ts). */
export interface AgentServices {
  /** Decodes or fetches the attachments; throws an AppError (422) naming the failing item. */
  resolveAttachments(
    attachments: readonly AttachmentInput[],
    signal: AbortSignal,
  ): Promise<ResolvedAttachment[]>;
  /** The engine configured for the chatbot. */
  engineFor(bundle: ChatbotBundle): Promise<ChatEngine>;
  /** The chatbot's look-up tools for this turn (collect-before-call is enforced inside). */
  toolBoxFor(turn: ToolBoxRequest): Promise<ToolBox>;
}

export interface ToolBoxRequest {
  organizationId: string;
  bundle: ChatbotBundle;
  conversation: ConversationRecord;
  /** The visitor's own messages in this conversation, oldest first, the new one last. */
  visitorTexts: string[];
  deadline: number;
}

export interface TurnContext extends DomainContext {
  agent: AgentServices;
}

/** The turn's budget: a reply (real or fallback) is ready well inside the gateway's 30 s. */
export const TURN_BUDGET_MS = 20_000;
/** Time kept for storing the reply and answering after the engine's deadline. */
const WRITE_RESERVE_MS = 2_500;
/**
 * Messages read before each turn: the largest history window a chatbot may have (chatbotLimits),
 * read in parallel with the chatbot itself, whose window is not known yet. Also the visitor texts
 * the look-up tools search for collected details.
 */
const HISTORY_READ_LIMIT = chatbotLimits.historyWindow.max;

export interface SendMessageInput {
  organizationId: string;
  conversationId: string;
  message: string;
  attachments: readonly AttachmentInput[];
  /** Milliseconds left before the Lambda times out. */
  remainingTimeMs: number;
}

export interface TurnResult {
  conversationId: string;
  messages: MessageRecord[];
}

// ---------- the turn ----------

export async function sendMessage(ctx: TurnContext, input: SendMessageInput): Promise<TurnResult> {
  const started = ctx.clock();
  const deadline = started + Math.min(TURN_BUDGET_MS, input.remainingTimeMs - WRITE_RESERVE_MS - 1_000);
  const abort = new AbortController();
  const timer = setTimeout(
    () => abort.abort(new Error("turn deadline")),
    Math.max(0, deadline - ctx.clock()),
  );
  try {
    const conversation = await claimTurn(ctx, input.organizationId, input.conversationId);
    const turn = conversation.turns;

    const [attachments, bundle, history] = await Promise.all([
      ctx.agent.resolveAttachments(input.attachments, abort.signal),
      loadChatbotBundle(ctx, input.organizationId, conversation.chatbotId),
      readHistory(ctx, conversation, turn),
    ]);
    if (!bundle) throw new Error(`chatbot ${conversation.chatbotId} of a live conversation is missing`);

    const visitorMessage: MessageRecord = {
      messageId: randomUUID(),
      conversationId: conversation.conversationId,
      turn,
      index: 0,
      role: "user",
      content: input.message,
      attachments: attachments.map((attachment) => attachment.stored),
      createdAt: isoTime(started),
    };
    await ctx.db.client.send(
      new PutCommand({
        TableName: ctx.db.tableName,
        Item: items.message(input.organizationId, visitorMessage),
      }),
    );

    const window = bundle.chatbot.historyWindow;
    const reply = await replyOrFallback(ctx, {
      bundle,
      conversation,
      history: history.slice(Math.max(0, history.length - window)),
      visitorTexts: [...history.filter((m) => m.role === "user").map((m) => m.content), input.message],
      message: { text: input.message, images: attachments.map((attachment) => attachment.image) },
      deadline,
      signal: abort.signal,
    });

    const repliedAt = isoTime(ctx.clock());
    const replies: MessageRecord[] = reply.messages.map((content, position) => ({
      messageId: randomUUID(),
      conversationId: conversation.conversationId,
      turn,
      index: position + 1,
      role: "assistant",
      content,
      attachments: [],
      createdAt: repliedAt,
      engine: reply.engine,
      ...(reply.fallback ? { fallback: true } : {}),
      ...(position === 0 && reply.usage ? { usage: reply.usage } : {}),
      ...(position === 0 && reply.modelLatencyMs !== undefined
        ? { modelLatencyMs: reply.modelLatencyMs }
        : {}),
    }));
    await storeMessages(ctx, input.organizationId, replies);
    return { conversationId: conversation.conversationId, messages: replies };
  } finally {
    clearTimeout(timer);
  }
}

async function claimTurn(
  ctx: DomainContext,
  organizationId: string,
  conversationId: string,
): Promise<ConversationRecord> {
  try {
    const result = await ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.conversation(organizationId, conversationId),
        UpdateExpression: "ADD turns :one",
        ConditionExpression: "attribute_exists(PK) AND #status = :open",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":one": 1, ":open": "open" },
        ReturnValues: "ALL_NEW",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return records.conversation(result.Attributes ?? {});
  } catch (error) {
    const stored = refusedItem(error);
    throw new AppError(stored ? "conversation_closed" : "conversation_not_found");
  }
}

/** The messages before `turn`, oldest first: enough for the model's window and the tools' visitor texts. */
async function readHistory(
  ctx: DomainContext,
  conversation: ConversationRecord,
  turn: number,
): Promise<MessageRecord[]> {
  if (turn <= 1) return [];
  const result = await ctx.db.client.send(
    new QueryCommand({
      TableName: ctx.db.tableName,
      KeyConditionExpression: "PK = :pk AND SK BETWEEN :first AND :last",
      ExpressionAttributeValues: {
        ":pk": prefixes.conversationPartition(conversation.organizationId, conversation.conversationId),
        ":first": prefixes.messages,
        ":last": `${prefixes.messages}${messageSortKey(turn - 1, 99)}`,
      },
      ScanIndexForward: false,
      Limit: HISTORY_READ_LIMIT,
    }),
  );
  return (result.Items ?? []).map(records.message).reverse();
}

interface ReplyRequest {
  bundle: ChatbotBundle;
  conversation: ConversationRecord;
  history: MessageRecord[];
  visitorTexts: string[];
  message: { text: string; images: ImageInput[] };
  deadline: number;
  signal: AbortSignal;
}

type Reply = Pick<EngineReply, "messages" | "usage" | "modelLatencyMs"> & {
  engine: string;
  fallback: boolean;
};

async function replyOrFallback(ctx: TurnContext, request: ReplyRequest): Promise<Reply> {
  const { chatbot } = request.bundle;
  try {
    const [engine, tools] = await Promise.all([
      ctx.agent.engineFor(request.bundle),
      ctx.agent.toolBoxFor({
        organizationId: chatbot.organizationId,
        bundle: request.bundle,
        conversation: request.conversation,
        visitorTexts: request.visitorTexts,
        deadline: request.deadline,
      }),
    ]);
    const reply = await raceDeadline(
      engine.reply({
        instructions: chatbot.instructions,
        history: request.history.map(toHistoryMessage),
        message: request.message,
        tools,
        settings: { temperature: chatbot.temperature, maxOutputTokens: chatbot.maxOutputTokens },
        signal: request.signal,
        deadline: request.deadline,
      }),
      request.signal,
    );
    const messages = reply.messages.map((text) => text.trim()).filter((text) => text.length > 0);
    if (messages.length === 0) throw new Error("engine returned no text");
    log.info("turn answered", {
      engine: engine.kind,
      toolCalls: reply.toolCalls,
      modelLatencyMs: reply.modelLatencyMs,
      inputTokens: reply.usage?.inputTokens,
      outputTokens: reply.usage?.outputTokens,
    });
    return {
      messages,
      engine: engine.kind,
      fallback: false,
      ...(reply.usage ? { usage: reply.usage } : {}),
      ...(reply.modelLatencyMs === undefined ? {} : { modelLatencyMs: reply.modelLatencyMs }),
    };
  } catch (error) {
    log.warn("engine failed; answering with the fallback reply", {
      engine: chatbot.engine.kind,
      timedOut: request.signal.aborted,
      ...describeError(error),
    });
    return { messages: [chatbot.fallbackReply], engine: chatbot.engine.kind, fallback: true };
  }
}

/** An engine that ignores its signal must still not hold the turn past the deadline. */
function raceDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function toHistoryMessage(message: MessageRecord): HistoryMessage {
  const images = message.attachments.length;
  const note = images === 0 ? "" : `\n[The visitor attached ${images} image${images === 1 ? "" : "s"} here.]`;
  return { role: message.role, text: `${message.content}${note}` };
}

async function storeMessages(
  ctx: DomainContext,
  organizationId: string,
  messages: MessageRecord[],
): Promise<void> {
  if (messages.length === 1 && messages[0]) {
    await ctx.db.client.send(
      new PutCommand({ TableName: ctx.db.tableName, Item: items.message(organizationId, messages[0]) }),
    );
    return;
  }
  let pending: Item[] = messages.map((message) => ({
    PutRequest: { Item: items.message(organizationId, message) },
  }));
  while (pending.length > 0) {
    const batch = pending.slice(0, 25);
    const result = await ctx.db.client.send(
      new BatchWriteCommand({ RequestItems: { [ctx.db.tableName]: batch } }),
    );
    pending = [
      ...((result.UnprocessedItems?.[ctx.db.tableName] as Item[] | undefined) ?? []),
      ...pending.slice(25),
    ];
  }
}

// ---------- history ----------

export interface ListMessagesInput {
  organizationId: string;
  conversationId: string;
  limit: number;
  cursor?: string;
}

export interface MessagePage {
  conversationId: string;
  messages: MessageRecord[];
  nextCursor: string | null;
}

const SORT_KEY_PATTERN = /^MSG#\d{10}#\d{2}$/;

/**
 * One page of a conversation's messages, oldest first. Cursors are signed with a secret kept on the
 * conversation, so a cursor from another conversation, or a forged one, is refused (422).
 */
export async function listMessages(ctx: DomainContext, input: ListMessagesInput): Promise<MessagePage> {
  const after = input.cursor === undefined ? undefined : cursorSortKey(input.cursor);
  const partition = prefixes.conversationPartition(input.organizationId, input.conversationId);
  const [meta, page] = await Promise.all([
    ctx.db.client.send(
      new GetCommand({
        TableName: ctx.db.tableName,
        Key: keys.conversation(input.organizationId, input.conversationId),
      }),
    ),
    ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: { ":pk": partition, ":prefix": prefixes.messages },
        ...(after ? { ExclusiveStartKey: { PK: partition, SK: after } } : {}),
        Limit: input.limit + 1,
      }),
    ),
  ]);
  if (!meta.Item) throw new AppError("conversation_not_found");
  const conversation = records.conversation(meta.Item);
  if (input.cursor !== undefined && !cursorIsGenuine(input.cursor, conversation))
    throw invalidCursor(input.cursor);

  const found = (page.Items ?? []).map(records.message);
  const messages = found.slice(0, input.limit);
  const last = messages.at(-1);
  const hasMore = found.length > input.limit;
  return {
    conversationId: conversation.conversationId,
    messages,
    nextCursor:
      hasMore && last ? signCursor(conversation, `MSG#${messageSortKey(last.turn, last.index)}`) : null,
  };
}

/** A new conversation's cursor-signing secret. */
export const newCursorSecret = (): string => randomBytes(16).toString("base64url");

function signature(conversation: ConversationRecord, sortKey: string): string {
  return createHmac("sha256", conversation.cursorSecret ?? conversation.conversationId)
    .update(`${conversation.conversationId}\n${sortKey}`)
    .digest("base64url")
    .slice(0, 22);
}

function signCursor(conversation: ConversationRecord, sortKey: string): string {
  return `${Buffer.from(sortKey).toString("base64url")}.${signature(conversation, sortKey)}`;
}

function cursorSortKey(cursor: string): string {
  const [encoded] = cursor.split(".");
  const sortKey = Buffer.from(encoded ?? "", "base64url").toString();
  if (!SORT_KEY_PATTERN.test(sortKey)) throw invalidCursor(cursor);
  return sortKey;
}

function cursorIsGenuine(cursor: string, conversation: ConversationRecord): boolean {
  const [, given] = cursor.split(".");
  const expected = signature(conversation, cursorSortKey(cursor));
  return (
    given !== undefined &&
    given.length === expected.length &&
    timingSafeEqual(Buffer.from(given), Buffer.from(expected))
  );
}

function invalidCursor(cursor: string): AppError {
  return validationError([
    {
      type: "value_error",
      loc: ["query", "cursor"],
      msg: "Value error, Invalid cursor: it does not belong to this conversation",
      input: cursor,
      ctx: { error: "Invalid cursor" },
    },
  ]);
}
