/**
 * The knowledge pipeline's AWS parts, as data: the knowledge bucket (uploads, passages, crawl
 * state), its event notification, and the queues that spread ingestion work. The stack builds the
 * bucket, queues and mappings from it; the local runtime builds its S3 (with the same CORS rules,
 * lifecycle and notification) and queues from the same entries.
 *
 *   client ──presigned PUT──▶ bucket uploads/… ──ObjectCreated──▶ KnowledgeIngest queue ──▶ worker
 *   sources API (sync, url sources, texts) ──SendMessage──────────▶        │ (poison messages)
 *                                                                          ▼
 *                                                             KnowledgeIngestDeadLetters (alarmed)
 *
 * Pure data (no CDK imports).
 */
import type { QueueDefinition } from "./event-sources.ts";

export interface BucketDefinition {
  /** Construct id and bucket-name suffix. */
  id: string;
  /** Browsers PUT files straight to the bucket from the console's origin (and from no other). */
  cors: {
    allowedMethods: readonly "PUT"[];
    allowedHeaders: readonly string[];
    exposedHeaders: readonly string[];
    maxAgeSeconds: number;
  };
  lifecycle: {
    /** Parts of multipart uploads never completed are removed after this many days. */
    abortIncompleteMultipartUploadDays: number;
  };
  /** New objects under `prefix` are announced to the queue (S3's event notification message). */
  notification: { prefix: string; queueId: string; events: readonly "s3:ObjectCreated:*"[] };
}

export const knowledgeQueues = {
  ingest: {
    id: "KnowledgeIngest",
    // Six times the worker's timeout (15 minutes), as Lambda advises for SQS event sources.
    visibilityTimeoutSeconds: 6 * 900,
    retentionSeconds: 4 * 24 * 3_600,
    // The worker records its own failures on the source; a message that still comes back this
    // often crashed the worker (out of memory, killed) and is kept aside, alarmed.
    deadLetter: { queueId: "KnowledgeIngestDeadLetters", maxReceiveCount: 3 },
  },
  ingestDeadLetters: {
    id: "KnowledgeIngestDeadLetters",
    visibilityTimeoutSeconds: 30,
    retentionSeconds: 14 * 24 * 3_600,
  },
} as const satisfies Record<string, QueueDefinition>;

export const knowledgeBucket: BucketDefinition = {
  id: "KnowledgeBucket",
  cors: {
    allowedMethods: ["PUT"],
    allowedHeaders: ["content-type"],
    exposedHeaders: ["etag"],
    maxAgeSeconds: 3_600,
  },
  lifecycle: { abortIncompleteMultipartUploadDays: 1 },
  notification: { prefix: "uploads/", queueId: knowledgeQueues.ingest.id, events: ["s3:ObjectCreated:*"] },
};

export const allKnowledgeQueues: readonly QueueDefinition[] = Object.values(knowledgeQueues);
