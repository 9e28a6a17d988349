/**
 * EventFanout: the table's stream (conversation and message items, as the event source's filter
 * lets through) in, webhook deliveries and inactivity checks (domain/inactivity.ts) out. A thin adapter: the records become item changes, the
 * fan-out does the rest (webhooks/fanout.ts). Any failure throws, so the event source retries the
 * batch (halving it to isolate a bad record) and finally hands it to the failure destination.
 * The analytics counters (domain/analytics.ts) are counted last, once the rest succeeded: a batch
 * retried for the others has counted nothing yet, and one retried after counting is recognised by
 * its transaction's token.
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from "aws-lambda";
import { recordAnalytics } from "#functions/domain/analytics";
import { contextFromEnvironment } from "#functions/domain/context";
import {
  type InactivityContext,
  inactivityTimings,
  scheduleInactivityChecks,
  timerQueueFromEnvironment,
} from "#functions/domain/inactivity";
import { log, withRequestScope } from "#functions/log";
import type { Item } from "#functions/store/items";
import type { ItemChange } from "#functions/webhooks/events";
import { type FanoutContext, fanOut } from "#functions/webhooks/fanout";
import { deliveryQueueFromEnvironment } from "#functions/webhooks/queue";

let context: (FanoutContext & InactivityContext) | undefined;
function fanoutContext(): FanoutContext & InactivityContext {
  context ??= {
    ...contextFromEnvironment(),
    timings: inactivityTimings(),
    get queue() {
      return deliveryQueueFromEnvironment();
    },
    get timers() {
      return timerQueueFromEnvironment();
    },
  };
  return context;
}

type Image = Record<string, AttributeValue>;

export function toItemChange(record: DynamoDBRecord): ItemChange | undefined {
  const stream = record.dynamodb;
  const keys = stream?.Keys ? (unmarshall(stream.Keys as Image) as Item) : undefined;
  if (!stream || !keys || !record.eventName || !stream.SequenceNumber) return undefined;
  return {
    eventName: record.eventName,
    keys: { PK: String(keys.PK), SK: String(keys.SK) },
    ...(stream.NewImage ? { newImage: unmarshall(stream.NewImage as Image) as Item } : {}),
    ...(stream.OldImage ? { oldImage: unmarshall(stream.OldImage as Image) as Item } : {}),
    sequenceNumber: stream.SequenceNumber,
    approximateCreationMs: (stream.ApproximateCreationDateTime ?? 0) * 1000,
  };
}

export const handler = async (event: DynamoDBStreamEvent, lambda: Context): Promise<void> =>
  withRequestScope(lambda.awsRequestId, async () => {
    const changes = event.Records.map(toItemChange).filter((change) => change !== undefined);
    // Webhook deliveries, and the inactivity checks the conversations' activity calls for.
    const [result, checks] = await Promise.all([
      fanOut(fanoutContext(), changes),
      scheduleInactivityChecks(fanoutContext(), changes),
    ]);
    const counted = await recordAnalytics(fanoutContext(), changes);
    log.debug("stream batch done", {
      records: event.Records.length,
      inactivityChecks: checks,
      analyticsItems: counted.items,
      ...result,
    });
  });
