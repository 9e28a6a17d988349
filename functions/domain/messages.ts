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
 *   5. store the reply with its token usage and model latency, and return it; in the same round
 *      trip, keep on the conversation the look-up details the visitor gave (one UpdateItem, only
 *      when they changed), so a later turn can complete a look-up, and count the turn in the
 *      chatbot's usage of the day (one UpdateItem).
 * Message sort keys are `MSG#{turn}#{index}`: the turn number orders turns, index 00 is the
 * visitor's message and 01… the chatbot's replies, so a history page reads in conversation order.
 *
 * With an Idempotency-Key, steps 3 and 5 go through the key's fence (domain/idempotency.ts): the
 * visitor's message is stored in one transaction with the turn number on the key's record, the
 * replies in one transaction with the key's completion, and only the attempt owning the key can
 * write either. A retry that takes over a key whose record holds a turn completes that turn (steps
 * 2, 4, 5 for the same turn number) instead of claiming a new one; a turn number claimed by an
 * attempt that stored nothing stays unused. So one key is one turn, whatever fails and whenever.
 *
 * A streamed turn (POST /api/message/stream) is the same turn with a listener (`stream`): told when
 * the visitor's message is stored and the reply begins, handed the first reply message's text as the
 * engine produces it, and told when the engine failed and the reply became the fallback. What is
 * stored does not depend on it.
 */
import { randomUUID } from "node:crypto";
import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { raceAbort } from "#functions/agent/deadline";
import type { ChatEngine, EngineReply, HistoryMessage, ImageInput, ToolBox } from "#functions/agent/engine";
import { isEngineError } from "#functions/agent/engine-error";
import { type ChatbotBundle, chatbotLimits, loadChatbotBundle } from "#functions/domain/chatbots";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import type { WorkFence } from "#functions/domain/idempotency";
import { recordTurnUsage } from "#functions/domain/usage";
import { AppError } from "#functions/errors";
import { describeError, log } from "#functions/log";
import { putNewAction, refusedItem } from "#functions/store/conditions";
import {
  type ConversationRecord,
  type ConversationStatus,
  conversationActivityKey,
  gsi2,
  type Item,
  items,
  keys,
  type LookupSummary,
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
  toolBoxFor(turn: ToolBoxRequest): Promise<TurnToolBox>;
}

/**
 * A turn's ToolBox; look-up tools also report the details the visitor gave, to keep with the
 * conversation, and the look-ups they made, kept with the reply (their webhook events).
 */
export interface TurnToolBox extends ToolBox {
  collected?(): Record<string, string>;
  lookups?(): LookupSummary[];
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
  /** How long the engine may take (default TURN_BUDGET_MS; tests shorten it). */
  turnBudgetMs?: number;
}

/** The turn's budget: a reply (real or fallback) is ready well inside the gateway's 30 s. */
export const TURN_BUDGET_MS = 20_000;
/** No configuration may push a turn past this: the gateway gives up at 30 s. */
export const MAX_TURN_BUDGET_MS = 25_000;
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
  /** The Idempotency-Key's fence, when the request carries one. */
  fence?: WorkFence<TurnResult>;
  /** Listens to a streamed turn. */
  stream?: TurnStream;
}

/** Why a streamed reply became the fallback: the model stalled, the turn ran out of time, or it failed. */
export type TurnFailure = "stalled" | "timeout" | "failed";

/** The listener of a streamed turn. */
export interface TurnStream {
  /** The visitor's message is stored and the engine starts; its (first) reply will be `messageId`. */
  started(start: { conversationId: string; messageId: string; status: ConversationStatus }): void;
  /** A piece of the first reply message's text, as the engine produces it (final: never taken back but by `failed`). */
  text(delta: string): void;
  /** The engine failed after the start: the pieces so far are void, and the reply is the fallback. */
  failed(failure: TurnFailure): void;
}

export interface TurnResult {
  conversationId: string;
  messages: MessageRecord[];
}

// ---------- the turn ----------

export async function sendMessage(ctx: TurnContext, input: SendMessageInput): Promise<TurnResult> {
  const started = ctx.clock();
  const budget = Math.min(ctx.turnBudgetMs ?? TURN_BUDGET_MS, MAX_TURN_BUDGET_MS);
  const deadline = started + Math.min(budget, input.remainingTimeMs - WRITE_RESERVE_MS - 1_000);
  const abort = new AbortController();
  const timer = setTimeout(
    () => abort.abort(new Error("turn deadline")),
    Math.max(0, deadline - ctx.clock()),
  );
  try {
    // The turn an earlier attempt with this Idempotency-Key began (its visitor message is stored).
    const resumed = input.fence?.progress.turn;
    const conversation =
      resumed === undefined
        ? await claimTurn(ctx, input.organizationId, input.conversationId, isoTime(started))
        : await readConversation(ctx, input.organizationId, input.conversationId);
    const turn = resumed ?? conversation.turns;
    if (resumed !== undefined) log.info("completing a turn an earlier attempt began", { turn });

    const [attachments, bundle, history] = await Promise.all([
      resumed === undefined
        ? ctx.agent.resolveAttachments(input.attachments, abort.signal)
        : resolveAttachmentsAgain(ctx, input.attachments, abort.signal),
      loadChatbotBundle(ctx, input.organizationId, conversation.chatbotId),
      readHistory(ctx, conversation, turn),
    ]);
    // The chatbot was deleted (management API): its conversations take no more messages.
    if (!bundle) throw new AppError("conversation_closed");

    const visitorMessage: MessageRecord = {
      messageId: randomUUID(),
      conversationId: conversation.conversationId,
      chatbotId: conversation.chatbotId,
      turn,
      index: 0,
      role: "user",
      content: input.message,
      attachments: attachments.map((attachment) => attachment.stored),
      createdAt: isoTime(started),
    };
    if (resumed === undefined)
      await storeVisitorMessage(ctx, input.organizationId, visitorMessage, input.fence);
    const firstReplyId = randomUUID();
    input.stream?.started({
      conversationId: conversation.conversationId,
      messageId: firstReplyId,
      status: conversation.status,
    });

    const window = bundle.chatbot.historyWindow;
    const reply = await replyOrFallback(ctx, {
      bundle,
      conversation,
      history: history.slice(Math.max(0, history.length - window)),
      visitorTexts: [...history.filter((m) => m.role === "user").map((m) => m.content), input.message],
      message: { text: input.message, images: attachments.map((attachment) => attachment.image) },
      deadline,
      signal: abort.signal,
      ...(input.stream ? { stream: input.stream } : {}),
    });

    const repliedAt = isoTime(ctx.clock());
    const replies: MessageRecord[] = reply.messages.map((content, position) => ({
      messageId: position === 0 ? firstReplyId : randomUUID(),
      conversationId: conversation.conversationId,
      chatbotId: conversation.chatbotId,
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
      ...(position === 0 && reply.lookups ? { lookups: reply.lookups } : {}),
    }));
    const result: TurnResult = { conversationId: conversation.conversationId, messages: replies };
    await Promise.all([
      storeReplies(ctx, input.organizationId, result, input.fence),
      keepCollected(ctx, conversation, reply.collected),
      // In parallel with the reply's write: counting adds no wait (domain/usage.ts).
      recordTurnUsage(ctx, {
        organizationId: input.organizationId,
        chatbotId: conversation.chatbotId,
        at: started,
        replies: replies.length,
        // The fallback reply, whether the engine failed or (scripted) had no answer.
        fallback: reply.fallback || reply.messages.join("\n") === bundle.chatbot.fallbackReply.trim(),
        ...(reply.usage
          ? { inputTokens: reply.usage.inputTokens, outputTokens: reply.usage.outputTokens }
          : {}),
        lookups: (reply.lookups ?? []).map((lookup) => lookup.outcome),
      }),
    ]);
    return result;
  } finally {
    clearTimeout(timer);
  }
}

/** Claims the turn number; the same write marks the activity that orders the conversation listings. */
async function claimTurn(
  ctx: DomainContext,
  organizationId: string,
  conversationId: string,
  now: string,
): Promise<ConversationRecord> {
  try {
    const result = await ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.conversation(organizationId, conversationId),
        UpdateExpression:
          "ADD turns :one SET lastActivityAt = :now, GSI1SK = :sortKey, GSI2SK = :sortKey, GSI2PK = if_not_exists(GSI2PK, :orgConversations)",
        ConditionExpression: "attribute_exists(PK) AND #status = :open",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: {
          ":one": 1,
          ":open": "open",
          ":now": now,
          ":sortKey": conversationActivityKey("open", now, conversationId),
          ":orgConversations": gsi2.conversationsPartition(organizationId),
        },
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

/** The conversation of a turn being completed; its status no longer matters (the turn began). */
async function readConversation(
  ctx: DomainContext,
  organizationId: string,
  conversationId: string,
): Promise<ConversationRecord> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({ TableName: ctx.db.tableName, Key: keys.conversation(organizationId, conversationId) }),
  );
  if (!Item) throw new AppError("conversation_not_found");
  return records.conversation(Item);
}

/**
 * The attachments of a turn being completed: they were read once already (the visitor's message
 * stores their references); if they cannot be read again, the model answers without the images.
 */
async function resolveAttachmentsAgain(
  ctx: TurnContext,
  attachments: readonly AttachmentInput[],
  signal: AbortSignal,
): Promise<ResolvedAttachment[]> {
  try {
    return await ctx.agent.resolveAttachments(attachments, signal);
  } catch (error) {
    log.warn("attachments could not be read again; answering without them", describeError(error));
    return [];
  }
}

/** Stores the visitor's message; with an Idempotency-Key, with the turn number on the key's record. */
async function storeVisitorMessage(
  ctx: DomainContext,
  organizationId: string,
  message: MessageRecord,
  fence: WorkFence<TurnResult> | undefined,
): Promise<void> {
  const item = items.message(organizationId, message);
  if (fence) {
    await fence.record([putNewAction(ctx.db.tableName, item)], { turn: message.turn });
    return;
  }
  await ctx.db.client.send(new PutCommand({ TableName: ctx.db.tableName, Item: item }));
}

/** Stores the replies; with an Idempotency-Key, in one transaction with the key's completion. */
async function storeReplies(
  ctx: DomainContext,
  organizationId: string,
  result: TurnResult,
  fence: WorkFence<TurnResult> | undefined,
): Promise<void> {
  if (!fence) return storeMessages(ctx, organizationId, result.messages);
  // A transaction holds 100 actions; the key's completion is one of them.
  if (result.messages.length > 99) throw new Error(`a turn of ${result.messages.length} replies`);
  await fence.complete(
    result.messages.map((message) => putNewAction(ctx.db.tableName, items.message(organizationId, message))),
    result,
  );
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
  stream?: TurnStream;
}

type Reply = Pick<EngineReply, "messages" | "usage" | "modelLatencyMs"> & {
  engine: string;
  fallback: boolean;
  /** Look-up details the visitor has given so far (absent: the chatbot has no look-up tools). */
  collected?: Record<string, string>;
  /** The look-ups this turn made (absent: none). */
  lookups?: LookupSummary[];
};

async function replyOrFallback(ctx: TurnContext, request: ReplyRequest): Promise<Reply> {
  const { chatbot } = request.bundle;
  let tools: TurnToolBox | undefined;
  // Text the engine hands over after it failed (it may not stop at once) is not part of any reply.
  let streaming = request.stream !== undefined;
  const onText = request.stream
    ? (delta: string) => {
        if (streaming) request.stream?.text(delta);
      }
    : undefined;
  const collected = () => {
    const values = tools?.collected?.();
    const lookups = tools?.lookups?.() ?? [];
    return { ...(values ? { collected: values } : {}), ...(lookups.length > 0 ? { lookups } : {}) };
  };
  try {
    const [engine, toolBox] = await Promise.all([
      ctx.agent.engineFor(request.bundle),
      ctx.agent.toolBoxFor({
        organizationId: chatbot.organizationId,
        bundle: request.bundle,
        conversation: request.conversation,
        visitorTexts: request.visitorTexts,
        deadline: request.deadline,
      }),
    ]);
    tools = toolBox;
    // An engine that ignores its signal must still not hold the turn past the deadline.
    const reply = await raceAbort(
      engine.reply({
        instructions: chatbot.instructions,
        history: request.history.map(toHistoryMessage),
        message: request.message,
        tools: toolBox,
        settings: { temperature: chatbot.temperature, maxOutputTokens: chatbot.maxOutputTokens },
        signal: request.signal,
        deadline: request.deadline,
        ...(onText ? { onText } : {}),
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
      ...collected(),
    };
  } catch (error) {
    log.warn("engine failed; answering with the fallback reply", {
      engine: chatbot.engine.kind,
      timedOut: request.signal.aborted,
      ...describeError(error),
    });
    if (request.stream && streaming) {
      streaming = false;
      request.stream.failed(
        request.signal.aborted
          ? "timeout"
          : isEngineError(error) && (error.reason === "stalled" || error.reason === "timeout")
            ? error.reason
            : "failed",
      );
    }
    return { messages: [chatbot.fallbackReply], engine: chatbot.engine.kind, fallback: true, ...collected() };
  }
}

function toHistoryMessage(message: MessageRecord): HistoryMessage {
  const images = message.attachments.length;
  const note = images === 0 ? "" : `\n[The visitor attached ${images} image${images === 1 ? "" : "s"} here.]`;
  return { role: message.role, text: `${message.content}${note}` };
}

/** Keeps the look-up details the visitor gave with the conversation, when they changed this turn. */
async function keepCollected(
  ctx: DomainContext,
  conversation: ConversationRecord,
  collected: Record<string, string> | undefined,
): Promise<void> {
  if (!collected || sameEntries(collected, conversation.collected ?? {})) return;
  try {
    await ctx.db.client.send(
      new UpdateCommand({
        TableName: ctx.db.tableName,
        Key: keys.conversation(conversation.organizationId, conversation.conversationId),
        UpdateExpression: "SET collected = :collected",
        ConditionExpression: "attribute_exists(PK)",
        ExpressionAttributeValues: { ":collected": collected },
      }),
    );
  } catch (error) {
    // The reply is stored either way; the visitor may have to repeat a detail next turn.
    log.warn("could not keep the look-up details with the conversation", {
      errorName: describeError(error).errorName,
    });
  }
}

function sameEntries(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((name) => a[name] === b[name]);
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
