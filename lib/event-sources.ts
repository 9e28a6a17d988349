/**
 * The event-driven side of the service, as data: the webhook pipeline's functions, queues and
 * the event sources that feed them. The CDK stack builds Lambda event source mappings, queues and
 * roles from it; the local runtime builds its emulators of those mappings and its local queues
 * from the same entries, so the two cannot drift (as lib/routes.ts does for routes).
 *
 *   table stream ──▶ EventFanout ──▶ WebhookDeliveries queue ──▶ WebhookDelivery ──▶ endpoints
 *                        │ (failed batches)            │ (poison messages)
 *                        ▼                             ▼
 *                  EventFanoutFailures        WebhookDeliveriesDeadLetters
 *
 *   EventFanout ──▶ ConversationTimers queue ──▶ ConversationTimer (──▶ ConversationTimersDeadLetters)
 *
 * Pure data (no CDK imports).
 */
import type { FunctionDefinition } from "./routes.ts";

export interface QueueDefinition {
  /** Construct id and queue-name suffix. */
  id: string;
  visibilityTimeoutSeconds: number;
  retentionSeconds: number;
  /** Messages received this often without being deleted move to this queue. */
  deadLetter?: { queueId: string; maxReceiveCount: number };
}

/** One Lambda event-source filter pattern (Lambda's JSON pattern syntax, the subset used here). */
export type FilterPattern = Record<string, unknown>;

export interface StreamSourceDefinition {
  function: FunctionDefinition;
  /** The table's stream (there is one table). */
  startingPosition: "TRIM_HORIZON" | "LATEST";
  batchSize: number;
  maxBatchingWindowSeconds: number;
  bisectBatchOnFunctionError: boolean;
  /** Retries of a failing batch before it goes to the failure destination. */
  retryAttempts: number;
  /** Records older than this are not retried any more (sent to the failure destination). */
  maxRecordAgeSeconds: number;
  parallelizationFactor: number;
  /** Records matching any pattern reach the function; the others are skipped (and checkpointed). */
  filters: readonly FilterPattern[];
  /** Where a batch that could not be processed is described (shard and sequence numbers). */
  onFailureQueueId: string;
}

export interface QueueSourceDefinition {
  function: FunctionDefinition;
  queueId: string;
  batchSize: number;
  maxBatchingWindowSeconds: number;
  /** How many batches run at once, at most (the mapping's maximum concurrency). */
  maxConcurrency: number;
  reportBatchItemFailures: boolean;
}

/** Stream records → webhook deliveries (functions/handlers/event-fanout.ts). */
export const eventFanout: FunctionDefinition = {
  id: "EventFanout",
  stack: "Events",
  entry: "functions/handlers/event-fanout.ts",
  memoryMb: 512,
  timeoutSeconds: 60,
  // Query: the organization's endpoints; GetItem: a conversation's chatbot (and its inactivity
  // timeout); PutItem: deliveries; UpdateItem: the analytics counters (domain/analytics.ts, in
  // transactions).
  table: ["dynamodb:Query", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"],
  grants: ["sqs:send-webhook-deliveries", "sqs:send-conversation-timers"],
};

/** Inactivity checks, one per queue message (functions/handlers/conversation-timer.ts). */
export const conversationTimer: FunctionDefinition = {
  id: "ConversationTimer",
  stack: "Events",
  entry: "functions/handlers/conversation-timer.ts",
  memoryMb: 256,
  timeoutSeconds: 30,
  // A due check closes the conversation (domain/conversation-states.ts): read, then one transaction.
  table: ["dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem"],
  grants: ["sqs:send-conversation-timers"],
};

/** One attempt per queue message (functions/handlers/webhook-delivery.ts). */
export const webhookDelivery: FunctionDefinition = {
  id: "WebhookDelivery",
  stack: "Events",
  entry: "functions/handlers/webhook-delivery.ts",
  memoryMb: 512,
  // A batch's attempts run at once, each at most 15 s, plus the table and queue calls around them.
  timeoutSeconds: 60,
  table: ["dynamodb:GetItem", "dynamodb:UpdateItem"],
  grants: ["sqs:send-webhook-deliveries", "kms:decrypt-webhook-secrets"],
};

export const queues = {
  webhookDeliveries: {
    id: "WebhookDeliveries",
    // Six times the consumer's timeout, as Lambda advises, so a batch is never seen twice while running.
    visibilityTimeoutSeconds: 6 * webhookDelivery.timeoutSeconds,
    retentionSeconds: 4 * 24 * 3_600,
    // Attempts re-queue themselves, so a message is received more than once only when its
    // processing failed outright (the table or the queue unavailable): after 5 such tries it is kept aside.
    deadLetter: { queueId: "WebhookDeliveriesDeadLetters", maxReceiveCount: 5 },
  },
  webhookDeliveriesDeadLetters: {
    id: "WebhookDeliveriesDeadLetters",
    visibilityTimeoutSeconds: 30,
    retentionSeconds: 14 * 24 * 3_600,
  },
  conversationTimers: {
    id: "ConversationTimers",
    visibilityTimeoutSeconds: 6 * conversationTimer.timeoutSeconds,
    retentionSeconds: 4 * 24 * 3_600,
    // A check re-queues itself while not due; one received this often failed outright. Its own
    // dead-letter queue: a timer's failures are not webhooks' (docs/operations.md says how to redrive).
    deadLetter: { queueId: "ConversationTimersDeadLetters", maxReceiveCount: 5 },
  },
  conversationTimersDeadLetters: {
    id: "ConversationTimersDeadLetters",
    visibilityTimeoutSeconds: 30,
    retentionSeconds: 14 * 24 * 3_600,
  },
  eventFanoutFailures: {
    id: "EventFanoutFailures",
    visibilityTimeoutSeconds: 30,
    retentionSeconds: 14 * 24 * 3_600,
  },
} as const satisfies Record<string, QueueDefinition>;

export const allQueues: readonly QueueDefinition[] = Object.values(queues);

export const streamSources: readonly StreamSourceDefinition[] = [
  {
    function: eventFanout,
    // From the oldest record kept (24 h): a new or re-created mapping misses nothing, and the
    // fan-out's conditional puts make a replay harmless.
    startingPosition: "TRIM_HORIZON",
    batchSize: 100,
    // No batching window: a turn's events leave as soon as the stream has them.
    maxBatchingWindowSeconds: 0,
    bisectBatchOnFunctionError: true,
    retryAttempts: 5,
    maxRecordAgeSeconds: 24 * 3_600,
    parallelizationFactor: 1,
    filters: [
      // Inserted messages, and messages changed by feedback (nothing else changes a message).
      { eventName: ["INSERT", "MODIFY"], dynamodb: { NewImage: { entity: { S: ["Message"] } } } },
      { eventName: ["INSERT", "MODIFY"], dynamodb: { NewImage: { entity: { S: ["Conversation"] } } } },
    ],
    onFailureQueueId: queues.eventFanoutFailures.id,
  },
];

export const queueSources: readonly QueueSourceDefinition[] = [
  {
    function: webhookDelivery,
    queueId: queues.webhookDeliveries.id,
    batchSize: 10,
    maxBatchingWindowSeconds: 0,
    maxConcurrency: 20,
    reportBatchItemFailures: true,
  },
  {
    function: conversationTimer,
    queueId: queues.conversationTimers.id,
    batchSize: 10,
    maxBatchingWindowSeconds: 0,
    maxConcurrency: 5,
    reportBatchItemFailures: true,
  },
];

export const eventFunctions: readonly FunctionDefinition[] = [
  eventFanout,
  webhookDelivery,
  conversationTimer,
];

/** Queues whose every message is a failure for a person to look at: alarmed on their depth. */
export const failureQueueIds: readonly string[] = [
  ...allQueues.flatMap((queue) => (queue.deadLetter ? [queue.deadLetter.queueId] : [])),
  ...streamSources.map((source) => source.onFailureQueueId),
];
