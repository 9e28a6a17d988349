/**
 * ConversationTimer: inactivity checks from the ConversationTimers queue (domain/inactivity.ts).
 * A thin adapter: each message is one check; a check that fails is reported so the queue retries
 * only it.
 */
import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { contextFromEnvironment } from "#functions/domain/context";
import {
  type InactivityContext,
  inactivityTimings,
  parseInactivityCheck,
  runInactivityCheck,
  timerQueueFromEnvironment,
} from "#functions/domain/inactivity";
import { describeError, log, withRequestScope } from "#functions/log";

let context: InactivityContext | undefined;
function timerContext(): InactivityContext {
  context ??= {
    ...contextFromEnvironment(),
    timings: inactivityTimings(),
    get timers() {
      return timerQueueFromEnvironment();
    },
  };
  return context;
}

export const handler = async (event: SQSEvent, lambda: Context): Promise<SQSBatchResponse> =>
  withRequestScope(lambda.awsRequestId, async () => {
    const ctx = timerContext();
    const failed: SQSBatchResponse["batchItemFailures"] = [];
    await Promise.all(
      event.Records.map(async (record) => {
        const check = parseInactivityCheck(record.body);
        if (!check) {
          log.warn("timer message is not an inactivity check; dropped", { messageId: record.messageId });
          return;
        }
        try {
          await runInactivityCheck(ctx, check);
        } catch (error) {
          log.error("inactivity check failed; the queue retries it", describeError(error));
          failed.push({ itemIdentifier: record.messageId });
        }
      }),
    );
    return { batchItemFailures: failed };
  });
