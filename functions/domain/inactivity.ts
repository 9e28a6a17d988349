/**
 * The inactivity timeout: a chatbot may close its conversations after some minutes without a
 * message or status change (cause `inactivity`). No server keeps time: every activity schedules
 * one check, and a check that finds newer activity does nothing (that activity scheduled its own).
 *
 *   table stream (the conversation item changed: a turn, a transition, an agent reply)
 *     → EventFanout: the chatbot has a timeout → one message on the ConversationTimers queue,
 *       due at lastActivityAt + timeout
 *     → ConversationTimer: not due yet → sent again with the rest of the wait (SQS delays at most
 *       15 minutes: a longer wait is a chain of hops); due → close, conditioned on the
 *       conversation's last activity still being the one the check was scheduled for.
 *
 * The timeout in force is the one read when the activity happened; a changed setting applies
 * from the next activity on.
 *
 *   CONVERSATION_TIMER_QUEUE_URL   the queue (set by the stack; by the local runtime for its SQS)
 *   INACTIVITY_MINUTE_SECONDS      seconds in a timeout's minute (default 60; tests compress it)
 *   INACTIVITY_MAX_HOP_SECONDS     the longest single queue delay (default and at most 900)
 */
import { SendMessageBatchCommand, SQSClient } from "@aws-sdk/client-sqs";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { awsClientOptions } from "#functions/aws-clients";
import type { DomainContext } from "#functions/domain/context";
import { changeStatus } from "#functions/domain/conversation-states";
import { AppError } from "#functions/errors";
import { log } from "#functions/log";
import { entities, type Item, keys, records } from "#functions/store/items";

export interface InactivityCheck {
  organizationId: string;
  conversationId: string;
  /** The last activity the check was scheduled for; newer activity cancels it. */
  activityAt: string;
  /** Epoch ms at which the conversation is due to close. */
  dueAt: number;
}

export interface TimerQueue {
  send(checks: readonly { check: InactivityCheck; delaySeconds: number }[]): Promise<void>;
}

export interface InactivityTimings {
  minuteSeconds: number;
  maxHopSeconds: number;
}

export function inactivityTimings(
  env: Readonly<Record<string, string | undefined>> = process.env,
): InactivityTimings {
  const minute = Number(env.INACTIVITY_MINUTE_SECONDS ?? "60");
  const hop = Number(env.INACTIVITY_MAX_HOP_SECONDS ?? "900");
  return {
    minuteSeconds: Number.isFinite(minute) && minute > 0 ? minute : 60,
    maxHopSeconds: Number.isFinite(hop) && hop >= 1 ? Math.min(900, Math.floor(hop)) : 900,
  };
}

export interface InactivityContext extends DomainContext {
  timers: TimerQueue;
  timings: InactivityTimings;
}

/** A changed conversation item, as the stream tells it. */
export interface ConversationChange {
  newImage?: Item;
  oldImage?: Item;
}

/** The queue delay to reach `dueAt`, at most one hop. */
const hopSeconds = (ctx: InactivityContext, dueAt: number): number =>
  Math.min(ctx.timings.maxHopSeconds, Math.max(0, Math.ceil((dueAt - ctx.clock()) / 1000)));

/**
 * Schedules a check for each conversation whose activity moved (and is not closed), when its
 * chatbot has a timeout: one GetItem per chatbot of the batch, one batched send.
 */
export async function scheduleInactivityChecks(
  ctx: InactivityContext,
  changes: readonly ConversationChange[],
): Promise<number> {
  const moved = changes
    .filter((change) => change.newImage?.entity === entities.conversation)
    .map((change) => ({
      now: records.conversation(change.newImage ?? {}),
      before: change.oldImage ? records.conversation(change.oldImage) : undefined,
    }))
    .filter(
      ({ now, before }) => now.status !== "closed" && activityOf(now) !== (before && activityOf(before)),
    );
  if (moved.length === 0) return 0;
  const timeouts = new Map<string, Promise<number | undefined>>();
  const timeoutOf = (organizationId: string, chatbotId: string) => {
    const key = `${organizationId}\n${chatbotId}`;
    let found = timeouts.get(key);
    if (!found) {
      found = ctx.db.client
        .send(
          new GetCommand({
            TableName: ctx.db.tableName,
            Key: keys.chatbot(organizationId, chatbotId),
            ProjectionExpression: "inactivityTimeoutMinutes",
          }),
        )
        .then(({ Item }) =>
          typeof Item?.inactivityTimeoutMinutes === "number" ? Item.inactivityTimeoutMinutes : undefined,
        );
      timeouts.set(key, found);
    }
    return found;
  };
  const checks: { check: InactivityCheck; delaySeconds: number }[] = [];
  await Promise.all(
    moved.map(async ({ now }) => {
      const minutes = await timeoutOf(now.organizationId, now.chatbotId);
      if (minutes === undefined) return;
      const activityAt = activityOf(now);
      const dueAt = Date.parse(activityAt) + minutes * ctx.timings.minuteSeconds * 1000;
      const check = {
        organizationId: now.organizationId,
        conversationId: now.conversationId,
        activityAt,
        dueAt,
      };
      checks.push({ check, delaySeconds: hopSeconds(ctx, dueAt) });
    }),
  );
  if (checks.length > 0) await ctx.timers.send(checks);
  return checks.length;
}

const activityOf = (conversation: { lastActivityAt?: string; createdAt: string }): string =>
  conversation.lastActivityAt ?? conversation.createdAt;

/** One check: not due → the next hop; due → closes the conversation unless it saw activity since. */
export async function runInactivityCheck(
  ctx: InactivityContext,
  check: InactivityCheck,
): Promise<"waiting" | "closed" | "moved"> {
  if (check.dueAt > ctx.clock()) {
    await ctx.timers.send([{ check, delaySeconds: hopSeconds(ctx, check.dueAt) }]);
    return "waiting";
  }
  try {
    const outcome = await changeStatus(ctx, {
      organizationId: check.organizationId,
      conversationId: check.conversationId,
      to: "closed",
      cause: "inactivity",
      actor: { kind: "timer" },
      ifLastActivityAt: check.activityAt,
    });
    if (outcome.changed)
      log.info("conversation closed after inactivity", { conversationId: check.conversationId });
    return outcome.changed ? "closed" : "moved";
  } catch (error) {
    // Deleted meanwhile: nothing to close.
    if (error instanceof AppError && error.code === "conversation_not_found") return "moved";
    throw error;
  }
}

export function createSqsTimerQueue(client: SQSClient, queueUrl: string): TimerQueue {
  return {
    async send(checks) {
      for (let start = 0; start < checks.length; start += 10) {
        const batch = checks.slice(start, start + 10);
        const result = await client.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map(({ check, delaySeconds }, index) => ({
              Id: String(index),
              MessageBody: JSON.stringify(check),
              DelaySeconds: delaySeconds,
            })),
          }),
        );
        if (result.Failed && result.Failed.length > 0)
          throw new Error(`SQS refused ${result.Failed.length} inactivity checks`);
      }
    },
  };
}

let fromEnvironment: TimerQueue | undefined;

/** The functions' timer queue, named by CONVERSATION_TIMER_QUEUE_URL. */
export function timerQueueFromEnvironment(): TimerQueue {
  if (!fromEnvironment) {
    const queueUrl = process.env.CONVERSATION_TIMER_QUEUE_URL;
    if (!queueUrl) throw new Error("CONVERSATION_TIMER_QUEUE_URL is not set");
    fromEnvironment = createSqsTimerQueue(new SQSClient(awsClientOptions("request")), queueUrl);
  }
  return fromEnvironment;
}

/** Reads a check back; undefined when the body is not one. */
export function parseInactivityCheck(body: string): InactivityCheck | undefined {
  try {
    const value = JSON.parse(body) as Partial<InactivityCheck>;
    return typeof value.organizationId === "string" &&
      typeof value.conversationId === "string" &&
      typeof value.activityAt === "string" &&
      typeof value.dueAt === "number"
      ? (value as InactivityCheck)
      : undefined;
  } catch {
    return undefined;
  }
}
