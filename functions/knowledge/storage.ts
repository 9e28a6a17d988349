/**
 * The knowledge bucket: where a chatbot's uploaded files, published passages and crawl state live,
 * and the one home of its object keys. Every key starts with a kind and then the organization and
 * chatbot, so an organization's objects can only be reached through keys built for it, and a
 * chatbot's objects are three prefixes (deleted together with the chatbot).
 *
 *   uploads/{org}/{chatbot}/{sourceId}/{uploadId}   a file source's bytes, as the client PUT them
 *                                                    (the bucket's event notification covers uploads/ only)
 *   passages/{org}/{chatbot}/{sourceId}.json        a source's published passages (knowledge/index-store.ts)
 *   crawls/{org}/{chatbot}/{sourceId}.json          a url source's pages as last fetched (validators,
 *                                                    content hash, passages), for refreshes
 */
import { S3Client } from "@aws-sdk/client-s3";
import { awsClientOptions, type CallBudget } from "#functions/aws-clients";

export interface KnowledgeStorage {
  client: S3Client;
  bucket: string;
}

export const knowledgeKeys = {
  upload: (organizationId: string, chatbotId: string, sourceId: string, uploadId: string) =>
    `uploads/${organizationId}/${chatbotId}/${sourceId}/${uploadId}`,
  /** Every upload of one source (older uploads are deleted when a newer one is processed). */
  uploadsOfSource: (organizationId: string, chatbotId: string, sourceId: string) =>
    `uploads/${organizationId}/${chatbotId}/${sourceId}/`,
  passages: (organizationId: string, chatbotId: string, sourceId: string) =>
    `passages/${organizationId}/${chatbotId}/${sourceId}.json`,
  passagesOfChatbot: (organizationId: string, chatbotId: string) =>
    `passages/${organizationId}/${chatbotId}/`,
  crawl: (organizationId: string, chatbotId: string, sourceId: string) =>
    `crawls/${organizationId}/${chatbotId}/${sourceId}.json`,
  /** Everything a chatbot has in the bucket. */
  chatbotPrefixes: (organizationId: string, chatbotId: string) => [
    `uploads/${organizationId}/${chatbotId}/`,
    `passages/${organizationId}/${chatbotId}/`,
    `crawls/${organizationId}/${chatbotId}/`,
  ],
} as const;

/**
 * The organization, chatbot, source and upload an upload key names; undefined for any other key.
 * Ids are whatever the key holds: the caller checks them against the table.
 */
export function parseUploadKey(
  key: string,
): { organizationId: string; chatbotId: string; sourceId: string; uploadId: string } | undefined {
  const match = /^uploads\/([^/]+)\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(key);
  if (!match?.[1] || !match[2] || !match[3] || !match[4]) return undefined;
  return { organizationId: match[1], chatbotId: match[2], sourceId: match[3], uploadId: match[4] };
}

/**
 * An S3 client for a budget (aws-clients.ts). The SDK reads `AWS_ENDPOINT_URL_S3` itself; an
 * endpoint set that way (the local runtime's S3) is addressed path-style, as a local server has no
 * per-bucket host names.
 */
export function createStorageClient(budget: CallBudget): S3Client {
  return new S3Client({
    ...awsClientOptions(budget),
    forcePathStyle: process.env.AWS_ENDPOINT_URL_S3 !== undefined,
  });
}

const fromEnvironment = new Map<CallBudget, KnowledgeStorage>();

/** The bucket the stack names through `KNOWLEDGE_BUCKET`; its client is created on first use. */
export function storageFromEnvironment(budget: CallBudget = "request"): KnowledgeStorage {
  let storage = fromEnvironment.get(budget);
  if (!storage) {
    const bucket = process.env.KNOWLEDGE_BUCKET;
    if (!bucket) throw new Error("KNOWLEDGE_BUCKET is not set");
    storage = { client: createStorageClient(budget), bucket };
    fromEnvironment.set(budget, storage);
  }
  return storage;
}
