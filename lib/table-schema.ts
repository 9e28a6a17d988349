/**
 * The single table's physical shape, shared by the CDK stack, the local runtime (which creates
 * the table in DynamoDB Local from it) and the code that builds keys (functions/store/items.ts).
 */
export const tableSchema = {
  partitionKey: "PK",
  sortKey: "SK",
  /** Epoch seconds; DynamoDB deletes expired items eventually, so reads also filter on it. */
  timeToLiveAttribute: "ttl",
  /** Item changes, old and new images, feed the webhook fan-out (lib/event-sources.ts). */
  streamViewType: "NEW_AND_OLD_IMAGES",
  globalSecondaryIndexes: [
    {
      indexName: "GSI1",
      partitionKey: "GSI1PK",
      sortKey: "GSI1SK",
      // Keys only: the API-key item changes on every request (token bucket); projecting more
      // would turn each of those writes into an index write too.
      projection: "KEYS_ONLY",
    },
    {
      // An organization's conversations by status and recent activity. Keys only for the same
      // reason: a listing page reads the index, then the page's items in one batch.
      indexName: "GSI2",
      partitionKey: "GSI2PK",
      sortKey: "GSI2SK",
      projection: "KEYS_ONLY",
    },
  ],
} as const;

export type IndexName = (typeof tableSchema.globalSecondaryIndexes)[number]["indexName"];
