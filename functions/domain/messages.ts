/**
 * Conversation turns (POST /api/message) and history (GET …/messages).
 *
 * A turn waits for three table round trips, one after the other; everything else runs beside them:
 *   1. read the conversation and its latest messages (a GetItem and a Query, together; begun
 *      alongside the Idempotency-Key's claim when the request has one: `readTurnStart`), → 404
 *      when it is not this organization's, 409 when it is closed;
 *   2. claim the turn and store the visitor's message in one transaction (`claimTurn`): the turn
 *      number is the one after the number read (optimistic: a turn that took it first makes this
 *      one read again and retry), the conversation must still be open and its chatbot must still
 *      exist (deleted → 409, as closed), and with an Idempotency-Key the key's record takes the
 *      turn number in the same transaction. Beside it, the chatbot (settings, knowledge, tools: one
 *      Query). The visitor's message is stored before any model runs, so nothing accepted is lost;
 *   3. run the chatbot's engine under a deadline well inside the gateway's 30 s (any failure or
 *      timeout gives the chatbot's fallback reply, logged with the request id), then store the
 *      replies (with an Idempotency-Key, in one transaction with the key's completion); beside that
 *      write, keep on the conversation the look-up details the visitor gave (only when they
 *      changed) and count the turn in the chatbot's usage of the day.
 * Message sort keys are `MSG#{turn}#{index}`: the turn number orders turns, index 00 is the
 * visitor's message and 01… the chatbot's replies, so a history page reads in conversation order.
 *
 * With an Idempotency-Key, only the attempt owning the key can make the writes of 2 and 3
 * (domain/idempotency.ts). A retry that takes over a key whose record holds a turn completes that
 * turn (3, with the same turn number, its history read in 1) instead of claiming a new one. So one
 * key is one turn, whatever fails and whenever.
 *
 * A streamed turn (POST /api/message/stream) is the same turn with a listener (`stream`): told when
 * the visitor's message is stored and the reply begins, handed the first reply message's text as the
 * engine produces it, and told when the engine failed and the reply became the fallback. What is
 * stored does not depend on it.
 */
import { randomUUID } from "node:crypto";
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { raceAbort } from "#functions/agent/deadline";
import type {
  ChatEngine,
  EngineReply,
  HistoryMessage,
  ImageInput,
  ToolBox,
  TurnKnowledge,
} from "#functions/agent/engine";
import { type EngineError, isEngineError } from "#functions/agent/engine-error";
import { isGreeting } from "#functions/agent/greetings";
import { asksForPerson, REQUEST_HUMAN_TOOL, withRequestHuman } from "#functions/agent/handoff";
import { type ChatbotBundle, chatbotLimits, loadChatbotBundle } from "#functions/domain/chatbots";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { changeStatus } from "#functions/domain/conversation-states";
import type { WorkFence } from "#functions/domain/idempotency";
import { dueFreeze, freezeClauses, type HandoffReason } from "#functions/domain/outcomes";
import { recordTurnUsage } from "#functions/domain/usage";
import { type VisitorBinding, visitorOwns } from "#functions/domain/visitor-access";
import { AppError, serviceUnavailable } from "#functions/errors";
import { recordGap } from "#functions/knowledge/gaps";
import { fitToBudget, groundingFrom } from "#functions/knowledge/grounding";
import type { Retrieval } from "#functions/knowledge/retriever";
import { describeError, log } from "#functions/log";
import {
  type Engine,
  type FallbackReason,
  type LookupOutcome,
  recordLookups,
  recordTurn,
  type TurnOutcome,
} from "#functions/observability/metrics";
import { cancellationReasons, putNewAction, type TransactAction } from "#functions/store/conditions";
import {
  type ConversationRecord,
  type ConversationStatus,
  conversationActivityKey,
  gsi2,
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
  /** The engine configured for the chatbot (an engine test may give the key to use instead of the stored one). */
  engineFor(bundle: ChatbotBundle, options?: EngineKeyOverride): Promise<ChatEngine>;
  /** The chatbot's look-up tools for this turn (collect-before-call is enforced inside). */
  toolBoxFor(turn: ToolBoxRequest): Promise<TurnToolBox>;
  /** The passages the chatbot's knowledge holds for a question, best first (knowledge/retriever.ts). */
  retrieve(request: KnowledgeRequest): Promise<Retrieval>;
  /** This instance holds the chatbot's knowledge index: nothing of it need be read beside the chatbot. */
  knowledgeIndexed(organizationId: string, chatbotId: string): boolean;
}

export interface KnowledgeRequest {
  bundle: ChatbotBundle;
  question: string;
  limit?: number;
  signal?: AbortSignal;
}

/** An engine test's own model API key (plaintext, not stored) in place of the chatbot's. */
export interface EngineKeyOverride {
  apiKey?: string;
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
  /** A website visitor sends: only in their own conversation (another is not found). */
  visitor?: VisitorBinding;
  message: string;
  attachments: readonly AttachmentInput[];
  /** Milliseconds left before the Lambda times out. */
  remainingTimeMs: number;
  /** The Idempotency-Key's fence, when the request carries one. */
  fence?: WorkFence<TurnResult>;
  /** The turn's first read (`readTurnStart`), when begun alongside the Idempotency-Key's claim. */
  start?: Promise<TurnStart>;
  /** Listens to a streamed turn. */
  stream?: TurnStream;
}

/** Why a streamed reply became the fallback: the model stalled, the turn ran out of time, or it failed. */
export type TurnFailure = "stalled" | "timeout" | "failed";

/** The listener of a streamed turn. */
export interface TurnStream {
  /** The visitor's message is stored and the engine starts; its (first) reply will be `messageId`. */
  started(start: { conversationId: string; messageId: string | null; status: ConversationStatus }): void;
  /** A piece of the first reply message's text, as the engine produces it (final: never taken back but by `failed`). */
  text(delta: string): void;
  /** The engine failed after the start: the pieces so far are void, and the reply is the fallback. */
  failed(failure: TurnFailure): void;
}

export interface TurnResult {
  conversationId: string;
  /** The conversation's status after the turn (`handoff`: no replies, or the turn's handoff message). */
  status: ConversationStatus;
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
    // Round trip 1 (begun alongside the Idempotency-Key's claim when there is one).
    const start = await (input.start ?? readTurnStart(ctx, input.organizationId, input.conversationId));
    if (!visitorOwns(input.visitor, start.conversation)) throw new AppError("conversation_not_found");
    // The turn an earlier attempt with this Idempotency-Key began (its visitor message is stored).
    const resumed = input.fence?.progress.turn;
    if (resumed === undefined) checkTakesMessages(start.conversation);
    else log.info("completing a turn an earlier attempt began", { turn: resumed });

    // Round trip 2: the chatbot, beside the turn's claim (or, completing a turn, its history).
    const chatbotId = start.conversation.chatbotId;
    const [bundle, begun] = await Promise.all([
      loadChatbotBundle(ctx, input.organizationId, chatbotId, {
        readKnowledge: !ctx.agent.knowledgeIndexed(input.organizationId, chatbotId),
      }),
      resumed === undefined
        ? ctx.agent
            .resolveAttachments(input.attachments, abort.signal)
            .then((attachments) => claimTurn(ctx, input, start, attachments, started))
        : resumeTurn(ctx, input, start, resumed, abort.signal),
    ]);
    // The chatbot was deleted (management API): its conversations take no more messages.
    if (!bundle) throw new AppError("conversation_closed");
    const { conversation, turn, history, attachments } = begun;

    // In handoff a person answers: the visitor's message is stored, the chatbot stays silent.
    if (conversation.status === "handoff") {
      const silent: TurnResult = {
        conversationId: conversation.conversationId,
        status: "handoff",
        messages: [],
      };
      input.stream?.started({
        conversationId: conversation.conversationId,
        messageId: null,
        status: "handoff",
      });
      await storeReplies(ctx, input.organizationId, silent, input.fence);
      return silent;
    }
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

    recordTurnMetrics(reply, bundle.chatbot.fallbackReply);

    const repliedAt = isoTime(ctx.clock());
    const sources = reply.sources ?? [];
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
      ...(position === 0 && sources.length > 0 ? { sources } : {}),
    }));
    const result: TurnResult = {
      conversationId: conversation.conversationId,
      status: reply.handoff ? "handoff" : conversation.status,
      messages: replies,
    };
    const fallback = reply.fallback || reply.messages.join("\n") === bundle.chatbot.fallbackReply.trim();
    const answer: AnswerFacts = {
      turn,
      fallback,
      lookups: (reply.lookups ?? []).map((lookup) => lookup.outcome),
      firstReplyMs:
        conversation.firstReplyMs === undefined && conversation.firstVisitorMessageAt !== undefined
          ? Math.max(0, Date.parse(repliedAt) - Date.parse(conversation.firstVisitorMessageAt))
          : undefined,
    };
    // Round trip 3: the replies, with what goes beside them.
    await Promise.all([
      storeReplies(ctx, input.organizationId, result, input.fence, answer),
      // A question the knowledge could not answer (knowledge/gaps.ts): counted beside the reply.
      reply.gap && (fallback || !reply.gap.confident)
        ? recordGap(ctx, {
            organizationId: input.organizationId,
            chatbotId: conversation.chatbotId,
            conversationId: conversation.conversationId,
            question: input.message,
            at: started,
            ...(reply.gap.vector ? { vector: reply.gap.vector } : {}),
          }).catch((error: unknown) => log.warn("could not record a knowledge gap", describeError(error)))
        : undefined,
      keepCollected(ctx, conversation, reply.collected),
      // In parallel with the reply's write: counting adds no wait (domain/usage.ts).
      recordTurnUsage(ctx, {
        organizationId: input.organizationId,
        chatbotId: conversation.chatbotId,
        test: conversation.test === true,
        at: started,
        replies: replies.length,
        // The fallback reply, whether the engine failed or (scripted) had no answer.
        fallback,
        ...(reply.usage
          ? { inputTokens: reply.usage.inputTokens, outputTokens: reply.usage.outputTokens }
          : {}),
        lookups: (reply.lookups ?? []).map((lookup) => lookup.outcome),
      }),
    ]);
    if (reply.handoff)
      await startHandoff(ctx, conversation, reply.handoff, reply.engine, reply.handoffReason);
    return result;
  } finally {
    clearTimeout(timer);
  }
}

/** What a turn reads before it writes anything: its conversation and latest messages. */
export interface TurnStart {
  conversation: ConversationRecord;
  /** The conversation's latest messages (at most HISTORY_READ_LIMIT), oldest first. */
  recent: MessageRecord[];
}

/**
 * A turn's first round trip: the conversation (→ 404 when it is not in this organization) and its
 * latest messages, read together. Only reads, so it can run beside the Idempotency-Key's claim.
 */
export async function readTurnStart(
  ctx: DomainContext,
  organizationId: string,
  conversationId: string,
): Promise<TurnStart> {
  const [conversation, recent] = await Promise.all([
    ctx.db.client.send(
      new GetCommand({
        TableName: ctx.db.tableName,
        Key: keys.conversation(organizationId, conversationId),
        // The turn number claimed next is the one after this read's: read the latest.
        ConsistentRead: true,
      }),
    ),
    ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :messages)",
        ExpressionAttributeValues: {
          ":pk": prefixes.conversationPartition(organizationId, conversationId),
          ":messages": prefixes.messages,
        },
        ScanIndexForward: false,
        Limit: HISTORY_READ_LIMIT,
      }),
    ),
  ]);
  if (!conversation.Item) throw new AppError("conversation_not_found");
  return {
    conversation: records.conversation(conversation.Item),
    recent: (recent.Items ?? []).map(records.message).reverse(),
  };
}

/**
 * A conversation a new turn may begin in: open, or in handoff (the message is stored for a person);
 * a closed one answers 409 before anything is written.
 */
function checkTakesMessages(conversation: ConversationRecord): void {
  if (conversation.status === "closed") throw new AppError("conversation_closed");
}

/** A turn whose visitor message is stored: the conversation as it now is, the turn and what the model sees. */
interface BegunTurn {
  conversation: ConversationRecord;
  turn: number;
  /** The messages before this turn, oldest first (at most HISTORY_READ_LIMIT). */
  history: MessageRecord[];
  attachments: ResolvedAttachment[];
}

/** How often a turn reads again and retries when other turns of its conversation claimed its number first. */
const CLAIM_ATTEMPTS = 5;

/**
 * Claims the next turn number and stores the visitor's message, in one transaction (round trip 2):
 * the conversation still at the turn number read, still open (→ 409) and present (→ 404), its
 * chatbot still present (deleted → 409), the message new; with an Idempotency-Key, the key's record
 * takes the turn number in the same transaction. The same write marks the activity that orders the
 * conversation listings.
 */
async function claimTurn(
  ctx: DomainContext,
  input: SendMessageInput,
  first: TurnStart,
  attachments: ResolvedAttachment[],
  started: number,
): Promise<BegunTurn> {
  let start = first;
  for (let attempt = 1; ; attempt++) {
    const { conversation } = start;
    checkTakesMessages(conversation);
    const turn = conversation.turns + 1;
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
    const outcome = await writeTurnClaim(ctx, conversation, visitorMessage, input.fence);
    if (outcome === "claimed") {
      return {
        conversation: {
          ...conversation,
          turns: turn,
          lastActivityAt: visitorMessage.createdAt,
          firstVisitorMessageAt: conversation.firstVisitorMessageAt ?? visitorMessage.createdAt,
        },
        turn,
        history: start.recent.filter((message) => message.turn < turn),
        attachments,
      };
    }
    if (attempt >= CLAIM_ATTEMPTS) {
      throw serviceUnavailable(new Error(`turn number still contended after ${attempt} attempts`));
    }
    log.info("another turn of the conversation claimed the number first; reading again", { turn });
    start = await readTurnStart(ctx, conversation.organizationId, conversation.conversationId);
  }
}

/** The claim transaction; "taken" when another turn claimed the number first (nothing was written). */
async function writeTurnClaim(
  ctx: DomainContext,
  conversation: ConversationRecord,
  visitorMessage: MessageRecord,
  fence: WorkFence<TurnResult> | undefined,
): Promise<"claimed" | "taken"> {
  const { organizationId, conversationId, status } = conversation;
  const now = visitorMessage.createdAt;
  // A message after the outcome's window first freezes the outcome as it was (domain/outcomes.ts);
  // the condition below (turns and status as read) keeps what was read current.
  const freeze = freezeClauses(dueFreeze(conversation, Date.parse(now)));
  const actions: TransactAction[] = [
    {
      Update: {
        TableName: ctx.db.tableName,
        Key: keys.conversation(organizationId, conversationId),
        UpdateExpression: `SET turns = :turn, lastActivityAt = :now, lastMessageAt = :now, GSI1SK = :sortKey, GSI2SK = :sortKey, GSI2PK = if_not_exists(GSI2PK, :orgConversations), firstVisitorMessageAt = if_not_exists(firstVisitorMessageAt, :now)${freeze.set.map((clause) => `, ${clause}`).join("")} ADD messageCount :one, visitorMessageCount :one`,
        // The status read in round trip 1, still: a change of status since then re-reads the turn.
        ConditionExpression: "attribute_exists(PK) AND #status = :status AND turns = :seen",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: {
          ":turn": visitorMessage.turn,
          ":seen": conversation.turns,
          ":status": status,
          ":one": 1,
          ":now": now,
          ":sortKey": conversationActivityKey(status, now, conversationId),
          ":orgConversations": gsi2.conversationsPartition(organizationId),
          ...freeze.values,
        },
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      },
    },
    {
      ConditionCheck: {
        TableName: ctx.db.tableName,
        Key: keys.chatbot(organizationId, conversation.chatbotId),
        ConditionExpression: "attribute_exists(PK)",
      },
    },
    {
      Put: {
        TableName: ctx.db.tableName,
        Item: items.message(organizationId, visitorMessage),
        ConditionExpression: "attribute_not_exists(PK)",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      },
    },
  ];
  try {
    if (fence) await fence.record(actions, { turn: visitorMessage.turn });
    else await ctx.db.client.send(new TransactWriteCommand({ TransactItems: actions }));
    return "claimed";
  } catch (error) {
    // The fence reports a conflicting transaction as a 503; for the claim it is a lost race.
    const refusal = error instanceof AppError && error.code === "service_unavailable" ? error.cause : error;
    if (!(refusal instanceof TransactionCanceledException)) throw error;
    const [onConversation, onChatbot, onMessage] = cancellationReasons(refusal);
    // The SDK sent this very transaction again after a timeout, and the first one had landed.
    if (onMessage?.failed && onMessage.item?.messageId === visitorMessage.messageId) return "claimed";
    if (onConversation?.code === "ConditionalCheckFailed") {
      if (!onConversation.item) throw new AppError("conversation_not_found");
      if (onConversation.item.status === "closed") throw new AppError("conversation_closed");
      return "taken";
    }
    if (onChatbot?.code === "ConditionalCheckFailed") throw new AppError("conversation_closed");
    if (onMessage?.code === "ConditionalCheckFailed") return "taken";
    if (cancellationReasons(refusal).some((reason) => reason.code === "TransactionConflict")) return "taken";
    throw error;
  }
}

/**
 * A turn an earlier attempt with this Idempotency-Key began: its messages before it (the latest
 * read in round trip 1 may be spent on later turns, then they are read again), and its attachments
 * again (they were read once already: the visitor's message stores their references; if they cannot
 * be read again, the model answers without the images).
 */
async function resumeTurn(
  ctx: TurnContext,
  input: SendMessageInput,
  start: TurnStart,
  turn: number,
  signal: AbortSignal,
): Promise<BegunTurn> {
  const before = start.recent.filter((message) => message.turn < turn);
  const complete = start.recent.length < HISTORY_READ_LIMIT || before.length === start.recent.length;
  const [history, attachments] = await Promise.all([
    complete ? before : readHistory(ctx, start.conversation, turn),
    ctx.agent.resolveAttachments(input.attachments, signal).catch((error: unknown) => {
      log.warn("attachments could not be read again; answering without them", describeError(error));
      return [];
    }),
  ]);
  return { conversation: start.conversation, turn, history, attachments };
}

/**
 * What a turn's answer tells the conversation's outcome and analytics (domain/outcomes.ts), kept on
 * the conversation in the replies' own write.
 */
interface AnswerFacts {
  turn: number;
  fallback: boolean;
  /** The outcome of each look-up the turn made. */
  lookups: readonly string[];
  /** The conversation's first reply: milliseconds since the visitor's first message. */
  firstReplyMs: number | undefined;
}

/** The conversation's counter of look-ups with each outcome (items.ts `ConversationRecord`). */
const lookupCounters: Record<string, string> = {
  found: "lookupsFound",
  not_found: "lookupsNotFound",
  auth_failed: "lookupsAuthFailed",
  rate_limited: "lookupsRateLimited",
  timeout: "lookupsTimeout",
  unavailable: "lookupsUnavailable",
};

/**
 * Stores the replies, each with its reference (where feedback finds it by its id); with an
 * Idempotency-Key, in one transaction with the key's completion.
 */
async function storeReplies(
  ctx: DomainContext,
  organizationId: string,
  result: TurnResult,
  fence: WorkFence<TurnResult> | undefined,
  answer?: AnswerFacts,
): Promise<void> {
  // A transaction holds 100 actions; the key's completion and the count are two of them.
  if (result.messages.length > 49) throw new Error(`a turn of ${result.messages.length} replies`);
  const actions: TransactAction[] = [
    ...result.messages.flatMap((message) => [
      putNewAction(ctx.db.tableName, items.message(organizationId, message)),
      putNewAction(
        ctx.db.tableName,
        items.replyReference(organizationId, {
          messageId: message.messageId,
          conversationId: message.conversationId,
          turn: message.turn,
          index: message.index,
        }),
      ),
    ]),
    ...countedReplies(ctx, organizationId, result, answer),
  ];
  if (fence) await fence.complete(actions, result);
  else if (actions.length > 0) await ctx.db.client.send(new TransactWriteCommand({ TransactItems: actions }));
}

/**
 * The replies counted on the conversation (`message_count`, `last_message_at`), in the replies' own
 * write, with the answer's facts: the latest answer (its turn, time, whether it was the fallback;
 * feedback on an earlier one no longer decides the outcome), fallbacks and look-ups, the first reply.
 */
function countedReplies(
  ctx: DomainContext,
  organizationId: string,
  result: TurnResult,
  answer: AnswerFacts | undefined,
): TransactAction[] {
  const last = result.messages.at(-1);
  if (!last) return [];
  const added: Record<string, number> = { messageCount: result.messages.length };
  if (answer?.fallback) added.fallbackReplies = 1;
  for (const outcome of answer?.lookups ?? []) {
    added.lookups = (added.lookups ?? 0) + 1;
    const counter = lookupCounters[outcome];
    if (counter) added[counter] = (added[counter] ?? 0) + 1;
  }
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ":at": last.createdAt };
  const adds = Object.entries(added).map(([attribute, value], index) => {
    names[`#a${index}`] = attribute;
    values[`:a${index}`] = value;
    return `#a${index} :a${index}`;
  });
  const sets = ["lastMessageAt = :at"];
  if (answer) {
    sets.push("lastAnswerTurn = :turn", "lastAnswerAt = :at", "lastAnswerFallback = :fallback");
    values[":turn"] = answer.turn;
    values[":fallback"] = answer.fallback;
    if (answer.firstReplyMs !== undefined) {
      sets.push("firstReplyMs = if_not_exists(firstReplyMs, :firstReplyMs)");
      values[":firstReplyMs"] = answer.firstReplyMs;
    }
  }
  return [
    {
      Update: {
        TableName: ctx.db.tableName,
        Key: keys.conversation(organizationId, result.conversationId),
        UpdateExpression: `ADD ${adds.join(", ")} SET ${sets.join(", ")}${answer ? " REMOVE lastAnswerFeedback" : ""}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
  ];
}

/** The messages before `turn`, oldest first: enough for the model's window and the tools' visitor texts (a turn being completed). */
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

type Reply = Pick<EngineReply, "messages" | "usage" | "modelLatencyMs" | "sources"> & {
  /**
   * A question the turn put to the knowledge (text, not a greeting, no look-up, no handoff): whether
   * a confident passage was found, and the question's embedding, for the gap record.
   */
  gap?: { confident: boolean; vector?: { model: string; values: Float32Array } };
  engine: string;
  fallback: boolean;
  /** Why the reply is the fallback (only when something failed). */
  fallbackReason?: FallbackReason;
  /** Look-up details the visitor has given so far (absent: the chatbot has no look-up tools). */
  collected?: Record<string, string>;
  /** The look-ups this turn made (absent: none). */
  lookups?: LookupSummary[];
  /** The turn asks for a person: the visitor by a phrase, or the model through `request_human`. */
  handoff?: "visitor" | "engine";
  /** Why (domain/outcomes.ts), when it asks. */
  handoffReason?: HandoffReason;
};

/** A look-up that reached no answer from its platform: a handoff in its turn is `tool_failed`. */
const failedLookup = (outcome: string) =>
  outcome === "auth_failed" ||
  outcome === "rate_limited" ||
  outcome === "timeout" ||
  outcome === "unavailable";

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
  const question = request.message.text.trim();
  // Set once the knowledge was asked: what a fallback reply records as a gap.
  let asked: Retrieval | undefined;
  const gapOf = (retrieval: Retrieval | undefined): Reply["gap"] =>
    retrieval && !isGreeting(question)
      ? {
          confident: retrieval.confident,
          ...(retrieval.questionVector ? { vector: retrieval.questionVector } : {}),
        }
      : undefined;
  // The look-up tools could not be set up (their credentials, say): the fallback's reason is theirs.
  let toolsFailed = false;
  try {
    const [engine, toolBox, retrieval] = await Promise.all([
      ctx.agent.engineFor(request.bundle),
      ctx.agent
        .toolBoxFor({
          organizationId: chatbot.organizationId,
          bundle: request.bundle,
          conversation: request.conversation,
          visitorTexts: request.visitorTexts,
          deadline: request.deadline,
        })
        .catch((error: unknown) => {
          toolsFailed = true;
          throw error;
        }),
      // The knowledge, beside the engine and tools: from memory, plus the question's embedding.
      question
        ? raceAbort(
            ctx.agent.retrieve({ bundle: request.bundle, question, signal: request.signal }),
            request.signal,
          ).catch((error: unknown): undefined => {
            log.warn("knowledge retrieval failed; answering without it", describeError(error));
            return undefined;
          })
        : undefined,
    ]);
    tools = toolBox;
    asked = retrieval;
    const history = request.history.flatMap(toHistoryMessage);
    const knowledge = retrieval?.hasKnowledge
      ? knowledgeForTurn(retrieval, engine.kind, chatbot.instructions, question, history)
      : undefined;
    const handoff = chatbot.handoff?.allowed ? chatbot.handoff : undefined;
    if (handoff && engine.kind === "scripted" && asksForPerson(request.message.text, handoff.phrases)) {
      onText?.(handoff.message);
      return {
        messages: [handoff.message],
        engine: engine.kind,
        fallback: false,
        handoff: "visitor",
        handoffReason: "visitor_asked",
        ...collected(),
      };
    }
    const offered = handoff && engine.kind !== "scripted" ? withRequestHuman(toolBox) : undefined;
    // What the model wrote before it asked for a person (a short line before its tool call; in a
    // stream, the visitor has seen it): a message of its own, stored alike by both endpoints.
    let writtenBeforeHandoff: string | undefined;
    // An engine that ignores its signal must still not hold the turn past the deadline.
    const reply = await raceAbort(
      engine.reply({
        instructions: chatbot.instructions,
        history: knowledge?.history ?? history,
        ...(knowledge ? { knowledge: knowledge.turn } : {}),
        message: request.message,
        tools: offered ?? toolBox,
        settings: { temperature: chatbot.temperature, maxOutputTokens: chatbot.maxOutputTokens },
        signal: request.signal,
        deadline: request.deadline,
        ...(onText
          ? {
              // After the call, the model's closing sentence gives way to the handoff message.
              onText: (delta: string) => {
                if (!offered?.requested()) onText(delta);
              },
            }
          : {}),
        ...(offered
          ? {
              onToolCall: (name: string, textSoFar: string) => {
                if (name === REQUEST_HUMAN_TOOL && writtenBeforeHandoff === undefined) {
                  writtenBeforeHandoff = textSoFar;
                }
              },
            }
          : {}),
      }),
      request.signal,
    );
    if (handoff && offered?.requested()) {
      const made = collected();
      const because = offered.requestedBecause();
      return {
        handoffReason: made.lookups?.some((lookup) => failedLookup(lookup.outcome))
          ? "tool_failed"
          : because === "visitor_asked"
            ? "visitor_asked"
            : because === "cannot_answer" || !retrieval?.confident
              ? "could_not_answer"
              : "visitor_asked",
        messages: writtenBeforeHandoff ? [writtenBeforeHandoff, handoff.message] : [handoff.message],
        engine: engine.kind,
        fallback: false,
        handoff: "engine",
        ...(reply.usage ? { usage: reply.usage } : {}),
        ...(reply.modelLatencyMs === undefined ? {} : { modelLatencyMs: reply.modelLatencyMs }),
        ...collected(),
      };
    }
    const messages = reply.messages.map((text) => text.trim()).filter((text) => text.length > 0);
    if (messages.length === 0) throw new Error("engine returned no text");
    const made = collected();
    // A look-up's answer keeps its own behaviour: it cites no passage and is no knowledge gap.
    const lookedUp = reply.toolCalls > 0 || (made.lookups?.length ?? 0) > 0;
    log.info("turn answered", {
      engine: engine.kind,
      toolCalls: reply.toolCalls,
      modelLatencyMs: reply.modelLatencyMs,
      inputTokens: reply.usage?.inputTokens,
      outputTokens: reply.usage?.outputTokens,
      passages: knowledge?.turn.passages.length,
      retrievalMs: retrieval
        ? Math.round(retrieval.timings.embedMs + retrieval.timings.loadMs + retrieval.timings.searchMs)
        : undefined,
    });
    const gap = lookedUp ? undefined : gapOf(retrieval);
    return {
      messages,
      engine: engine.kind,
      fallback: false,
      ...(reply.usage ? { usage: reply.usage } : {}),
      ...(reply.modelLatencyMs === undefined ? {} : { modelLatencyMs: reply.modelLatencyMs }),
      ...(!lookedUp && reply.sources?.length ? { sources: reply.sources } : {}),
      ...(gap ? { gap } : {}),
      ...made,
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
    const made = collected();
    const gap = made.lookups?.length ? undefined : gapOf(asked);
    return {
      messages: [chatbot.fallbackReply],
      engine: chatbot.engine.kind,
      fallback: true,
      ...(gap ? { gap } : {}),
      fallbackReason: request.signal.aborted
        ? "model_timed_out"
        : isEngineError(error)
          ? fallbackReasonOf(error)
          : toolsFailed
            ? "tool_failed"
            : "model_failed",
      ...made,
    };
  }
}

/**
 * The knowledge an engine gets for the turn: the relevant passages (for a model, fitted with the
 * history into the input budget, knowledge/grounding.ts) and the best confident one (what the
 * scripted engine answers with).
 */
function knowledgeForTurn(
  retrieval: Retrieval,
  engine: ChatEngine["kind"],
  instructions: string,
  question: string,
  history: HistoryMessage[],
): { turn: TurnKnowledge; history: HistoryMessage[] } {
  const passages = groundingFrom(retrieval.passages).passages;
  const confident = new Set(passages.filter((_, position) => retrieval.passages[position]?.confident));
  const answer = passages.find((passage) => confident.has(passage));
  const fitted =
    engine === "scripted"
      ? { passages, history }
      : fitToBudget({ instructions, message: question, passages, history });
  return {
    turn: {
      passages: fitted.passages,
      cited: fitted.passages.filter((passage) => confident.has(passage)),
      ...(answer ? { answer } : {}),
    },
    history: fitted.history,
  };
}

/** The metrics' name for why an engine failed (observability/metrics.ts). */
function fallbackReasonOf(error: EngineError): FallbackReason {
  switch (error.reason) {
    case "throttled":
      return "model_throttled";
    case "configuration":
      return "model_denied";
    case "timeout":
    case "stalled":
      return "model_timed_out";
    case "model_error":
    case "malformed_output":
      return "model_failed";
  }
}

/** The turn's metrics: its outcome and why it fell back, what the model took, its look-ups. */
function recordTurnMetrics(reply: Reply, fallbackText: string): void {
  const outcome: TurnOutcome = reply.handoff
    ? "handoff"
    : reply.fallback
      ? "fallback"
      : reply.messages.join("\n") === fallbackText.trim()
        ? "unanswered"
        : "answered";
  recordTurn({
    engine: reply.engine as Engine,
    outcome,
    ...(reply.fallbackReason ? { fallbackReason: reply.fallbackReason } : {}),
    ...(reply.modelLatencyMs === undefined ? {} : { modelLatencyMs: reply.modelLatencyMs }),
    ...(reply.usage ? { inputTokens: reply.usage.inputTokens, outputTokens: reply.usage.outputTokens } : {}),
  });
  if (reply.lookups) recordLookups(reply.lookups.map((lookup) => lookup.outcome as LookupOutcome));
}

/** What the model sees of a stored message: status changes not at all, a person's replies as the assistant side. */
function toHistoryMessage(message: MessageRecord): HistoryMessage[] {
  if (message.role === "system") return [];
  const images = message.attachments.length;
  const note = images === 0 ? "" : `\n[The visitor attached ${images} image${images === 1 ? "" : "s"} here.]`;
  return [{ role: message.role === "user" ? "user" : "assistant", text: `${message.content}${note}` }];
}

/**
 * The handoff a turn asked for, after its replies are stored: a status change of its own (the next
 * history slot, after this turn's replies). If the conversation was closed meanwhile, it stays closed.
 */
async function startHandoff(
  ctx: DomainContext,
  conversation: ConversationRecord,
  cause: "visitor" | "engine",
  engine: string,
  handoffReason: HandoffReason | undefined,
): Promise<void> {
  try {
    await changeStatus(ctx, {
      organizationId: conversation.organizationId,
      conversationId: conversation.conversationId,
      to: "handoff",
      cause,
      ...(handoffReason ? { handoffReason } : {}),
      actor: cause === "visitor" ? { kind: "visitor" } : { kind: "engine", id: engine },
    });
  } catch (error) {
    if (error instanceof AppError && error.code === "conversation_closed") return;
    throw error;
  }
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
