/**
 * The conversation state machine: `open` (the chatbot answers), `handoff` (a person answers, the
 * chatbot is silent), `closed` (terminal).
 *
 *   open    → handoff   the visitor asks (scripted phrases), the engine decides (`request_human`),
 *                       a client calls …/handoff, a person takes over (or replies while open)
 *   handoff → open      a person hands back
 *   open | handoff → closed   a client, a person, or the chatbot's inactivity timeout
 *
 * Asking for the status a conversation already has changes nothing and answers the conversation as
 * it is (so a repeated call is harmless); asking a closed conversation for anything else is the 409.
 *
 * Every change is one transaction: the conversation's update, conditioned on the status and the
 * turn counter it was read with, and a `system` message (cause, actor, time) in the history slot
 * that update allocates (the next turn number, as a turn's claim does). So:
 *   - two changes racing: one wins, the other re-reads and decides again (no change, or the 409);
 *   - a change racing a turn: whichever takes the turn counter first orders the history. A turn
 *     claimed while open completes and its replies stay in its own slot, before the change's
 *     message; a turn claimed after a close gets the 409; after a handoff it is stored silently.
 * Nothing is ever written after a `closed` system message in history order.
 */
import { randomUUID } from "node:crypto";
import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import {
  dueFreeze,
  freezeClauses,
  type HandoffReason,
  handoffReasonOf,
  type OutcomeFreeze,
  outcomeValue,
} from "#functions/domain/outcomes";
import { type VisitorBinding, visitorOwns } from "#functions/domain/visitor-access";
import { AppError } from "#functions/errors";
import { cancellationReasons, putNewAction, type TransactAction } from "#functions/store/conditions";
import {
  type ConversationRecord,
  type ConversationStatus,
  conversationActivityKey,
  items,
  keys,
  type MessageRecord,
  records,
  type TransitionActor,
  type TransitionRecord,
} from "#functions/store/items";

/** Why a status changed. */
export type TransitionCause = "client" | "visitor" | "engine" | "agent" | "inactivity";

/** The text of a transition's `system` message. */
export function transitionText(
  from: ConversationStatus,
  to: ConversationStatus,
  cause: TransitionCause,
): string {
  if (to === "handoff") return "Handed to a person";
  if (to === "open") return "Handed back to the chatbot";
  if (cause === "inactivity") return "Closed after inactivity";
  return from === "handoff" ? "Closed during handoff" : "Closed";
}

export interface TransitionInput {
  organizationId: string;
  conversationId: string;
  /** A website visitor asks: only their own conversation (another is not found). */
  visitor?: VisitorBinding;
  to: ConversationStatus;
  cause: TransitionCause;
  actor: TransitionActor;
  reason?: string;
  /** A handoff's reason (domain/outcomes.ts); default: the one its cause implies. */
  handoffReason?: HandoffReason;
  /** Only if the conversation's last activity is still this (the inactivity timer's fence). */
  ifLastActivityAt?: string;
  /** Messages to store right after the system message, in the same slot (an agent's reply). */
  followedBy?: (conversation: ConversationRecord, at: string) => MessageRecord[];
}

export interface TransitionOutcome {
  conversation: ConversationRecord;
  /** False when the conversation already had the status (nothing was written). */
  changed: boolean;
  /** The messages written (system message first). */
  messages: MessageRecord[];
}

/** Optimistic retries before giving up on a conversation that keeps changing under us. */
const ATTEMPTS = 8;

/** The conversation (404 when it is not the organization's, or, for a visitor, not theirs). */
export async function readConversationRecord(
  ctx: DomainContext,
  organizationId: string,
  conversationId: string,
  visitor?: VisitorBinding,
): Promise<ConversationRecord> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({
      TableName: ctx.db.tableName,
      Key: keys.conversation(organizationId, conversationId),
      ConsistentRead: true,
    }),
  );
  if (!Item) throw new AppError("conversation_not_found");
  const conversation = records.conversation(Item);
  if (!visitorOwns(visitor, conversation)) throw new AppError("conversation_not_found");
  return conversation;
}

/** Whether `from → to` is a change, no change (already there), or refused (409). */
export function transitionVerdict(
  from: ConversationStatus,
  to: ConversationStatus,
): "change" | "same" | "refused" {
  if (from === to) return "same";
  if (from === "closed") return "refused";
  if (to === "open" && from !== "handoff") return "refused";
  return "change";
}

/** Changes a conversation's status (see the module comment for the rules and races). */
export async function changeStatus(ctx: DomainContext, input: TransitionInput): Promise<TransitionOutcome> {
  for (let attempt = 1; ; attempt += 1) {
    const current = await readConversationRecord(
      ctx,
      input.organizationId,
      input.conversationId,
      input.visitor,
    );
    if (input.ifLastActivityAt !== undefined && activityOf(current) !== input.ifLastActivityAt)
      return { conversation: current, changed: false, messages: [] };
    const verdict = transitionVerdict(current.status, input.to);
    if (verdict === "refused") throw new AppError("conversation_closed");
    if (verdict === "same" && !input.followedBy)
      return { conversation: current, changed: false, messages: [] };
    try {
      return await writeTransition(ctx, current, input, verdict === "change");
    } catch (error) {
      const [conversation] = cancellationReasons(error);
      if (!conversation?.failed || attempt >= ATTEMPTS) throw error;
      // The conversation changed since it was read (a turn, another change): decide again.
    }
  }
}

const activityOf = (conversation: ConversationRecord): string =>
  conversation.lastActivityAt ?? conversation.createdAt;

async function writeTransition(
  ctx: DomainContext,
  current: ConversationRecord,
  input: TransitionInput,
  statusChanges: boolean,
): Promise<TransitionOutcome> {
  const nowMs = ctx.clock();
  const now = isoTime(nowMs);
  const slot = current.turns + 1;
  const status = statusChanges ? input.to : current.status;
  const written: MessageRecord[] = [];
  // The first handoff is the conversation's (its outcome's reason); later ones are only in history.
  const handoffReason =
    statusChanges && input.to === "handoff"
      ? (input.handoffReason ?? handoffReasonOf(input.cause))
      : undefined;
  const firstHandoff = handoffReason !== undefined && current.handoffAt === undefined;
  if (statusChanges) {
    const transition: TransitionRecord = {
      from: current.status,
      to: input.to,
      cause: input.cause,
      actor: input.actor,
      ...(input.reason === undefined ? {} : { reason: input.reason }),
      ...(handoffReason === undefined ? {} : { handoffReason }),
    };
    written.push({
      messageId: randomUUID(),
      conversationId: current.conversationId,
      chatbotId: current.chatbotId,
      turn: slot,
      index: 0,
      role: "system",
      content: transitionText(current.status, input.to, input.cause),
      attachments: [],
      createdAt: now,
      transition,
    });
  }
  for (const message of input.followedBy?.(current, now) ?? [])
    written.push({ ...message, turn: slot, index: written.length });

  const sortKey = conversationActivityKey(status, now, current.conversationId);
  const statusFields = statusChanges
    ? ", #status = :status, statusChangedAt = :now, statusCause = :cause"
    : "";
  const freeze = freezeClauses(outcomeFreezeOf(current, input.to, statusChanges, nowMs, now));
  // A person's reply to a visitor nobody answered yet is the conversation's first reply.
  const firstReplyMs =
    current.firstVisitorMessageAt !== undefined &&
    current.firstReplyMs === undefined &&
    written.some((message) => message.role === "agent")
      ? Math.max(0, nowMs - Date.parse(current.firstVisitorMessageAt))
      : undefined;
  const outcomeFields = [
    ...freeze.set,
    ...(firstHandoff ? ["handoffAt = :now", "handoffReason = :handoffReason"] : []),
    ...(firstReplyMs === undefined ? [] : ["firstReplyMs = if_not_exists(firstReplyMs, :firstReplyMs)"]),
  ]
    .map((clause) => `, ${clause}`)
    .join("");
  const actions: TransactAction[] = [
    {
      Update: {
        TableName: ctx.db.tableName,
        Key: keys.conversation(current.organizationId, current.conversationId),
        UpdateExpression: `SET turns = :slot, lastActivityAt = :now, lastMessageAt = :now, GSI1SK = :sortKey, GSI2SK = :sortKey${statusFields}${outcomeFields} ADD messageCount :written`,
        ConditionExpression: "attribute_exists(PK) AND turns = :seenTurns AND #status = :seenStatus",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: {
          ":slot": slot,
          ":now": now,
          ":written": written.length,
          ":sortKey": sortKey,
          ":seenTurns": current.turns,
          ":seenStatus": current.status,
          ...(statusChanges ? { ":status": status, ":cause": input.cause } : {}),
          ...freeze.values,
          ...(firstHandoff ? { ":handoffReason": handoffReason } : {}),
          ...(firstReplyMs === undefined ? {} : { ":firstReplyMs": firstReplyMs }),
        },
      },
    },
    ...written.map((message) =>
      putNewAction(ctx.db.tableName, items.message(current.organizationId, message)),
    ),
  ];
  await ctx.db.client.send(new TransactWriteCommand({ TransactItems: actions }));
  return {
    conversation: {
      ...current,
      status,
      turns: slot,
      lastActivityAt: now,
      lastMessageAt: now,
      messageCount: (current.messageCount ?? 0) + written.length,
      ...(statusChanges ? { statusChangedAt: now, statusCause: input.cause } : {}),
      ...(firstHandoff ? { handoffAt: now, handoffReason } : {}),
      ...(firstReplyMs === undefined ? {} : { firstReplyMs }),
      ...(freeze.set.length > 0
        ? {
            finalOutcome: freeze.values[":finalOutcome"],
            outcomeFinalAt: freeze.values[":outcomeFinalAt"],
          }
        : {}),
    },
    changed: statusChanges,
    messages: written,
  };
}

/**
 * What a status change freezes of the outcome: the outcome as read when its window already passed;
 * else `handed_off` at a handoff, or the outcome as it stands at a close (domain/outcomes.ts).
 */
function outcomeFreezeOf(
  current: ConversationRecord,
  to: ConversationStatus,
  statusChanges: boolean,
  nowMs: number,
  now: string,
): OutcomeFreeze | undefined {
  if (current.finalOutcome) return undefined;
  const due = dueFreeze(current, nowMs);
  if (due) return due;
  if (!statusChanges) return undefined;
  if (to === "handoff") return { finalOutcome: "handed_off", outcomeFinalAt: now };
  if (to === "closed") return { finalOutcome: outcomeValue(current), outcomeFinalAt: now };
  return undefined;
}

export interface AgentReplyInput {
  organizationId: string;
  conversationId: string;
  text: string;
  agent: TransitionActor & { name: string };
}

/**
 * A person's reply (role `agent`, with their display name). In `handoff` it is stored as is; in
 * `open` it takes the conversation over first (a `system` message, then the reply, one write), so
 * the chatbot does not answer over the person; `closed` is the 409.
 */
export async function replyAsAgent(ctx: DomainContext, input: AgentReplyInput): Promise<TransitionOutcome> {
  return changeStatus(ctx, {
    organizationId: input.organizationId,
    conversationId: input.conversationId,
    to: "handoff",
    cause: "agent",
    actor: input.agent,
    followedBy: (conversation, at) => [
      {
        messageId: randomUUID(),
        conversationId: conversation.conversationId,
        chatbotId: conversation.chatbotId,
        turn: 0,
        index: 0,
        role: "agent",
        content: input.text,
        attachments: [],
        createdAt: at,
        authorName: input.agent.name,
      },
    ],
  });
}
