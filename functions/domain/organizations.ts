/**
 * Organizations (operator side): create, read, list, and change name, subscription or rate limit.
 *
 * Each API key item carries copies of its organization's subscription state and rate limit, so the
 * authorizer can decide with one write. A change therefore updates the organization and all its
 * keys in one transaction, conditional on the organization's version (no lost updates, no key left
 * with stale copies; key creation checks the same version).
 */

import { randomUUID } from "node:crypto";
import { GetCommand, QueryCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { apiKeyKeysOf } from "#functions/domain/api-keys";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import { AppError } from "#functions/errors";
import { cancellationReasons, putNew } from "#functions/store/conditions";
import { batchGetItems, gsi1Keys } from "#functions/store/index-reads";
import {
  gsi1,
  items,
  keys,
  type OrganizationRecord,
  records,
  type SubscriptionStatus,
} from "#functions/store/items";

export const DEFAULT_RATE_LIMIT = 100;
export const MAX_RATE_LIMIT = 100_000;

export async function createOrganization(
  ctx: DomainContext,
  input: { name: string; organizationId?: string; subscription?: SubscriptionStatus; rateLimit?: number },
): Promise<OrganizationRecord> {
  const record: OrganizationRecord = {
    organizationId: input.organizationId ?? randomUUID(),
    name: input.name,
    subscription: input.subscription ?? "active",
    rateLimit: checkedRateLimit(input.rateLimit ?? DEFAULT_RATE_LIMIT),
    version: 1,
    createdAt: isoTime(ctx.clock()),
  };
  await putNew(ctx.db, items.organization(record), () => new AppError("conflict"));
  return record;
}

export async function getOrganization(
  ctx: DomainContext,
  organizationId: string,
): Promise<OrganizationRecord> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({
      TableName: ctx.db.tableName,
      Key: keys.organization(organizationId),
      ConsistentRead: true,
    }),
  );
  if (!Item) throw new AppError("organization_not_found");
  return records.organization(Item);
}

/** The organizations with these ids that exist (one batched read). */
export async function getOrganizations(
  ctx: DomainContext,
  organizationIds: readonly string[],
): Promise<Map<string, OrganizationRecord>> {
  const found = await batchGetItems(
    ctx.db,
    [...new Set(organizationIds)].map((id) => keys.organization(id)),
  );
  return new Map(found.map(records.organization).map((org) => [org.organizationId, org]));
}

export async function listOrganizations(ctx: DomainContext): Promise<OrganizationRecord[]> {
  const found = (await batchGetItems(ctx.db, await gsi1Keys(ctx.db, gsi1.organizationsPartition))).map(
    records.organization,
  );
  return found.sort(
    (a, b) => a.createdAt.localeCompare(b.createdAt) || a.organizationId.localeCompare(b.organizationId),
  );
}

export interface OrganizationPage {
  organizations: OrganizationRecord[];
  /** The last organization id of this page when there are more (the next page starts after it). */
  nextAfter: string | null;
}

/** A page of organizations in id order: one index Query of `limit` keys, one batched read. */
export async function listOrganizationsPage(
  ctx: DomainContext,
  input: { limit: number; after?: string },
): Promise<OrganizationPage> {
  const page = await ctx.db.client.send(
    new QueryCommand({
      TableName: ctx.db.tableName,
      IndexName: gsi1.name,
      KeyConditionExpression: "GSI1PK = :pk",
      ExpressionAttributeValues: { ":pk": gsi1.organizationsPartition },
      Limit: input.limit + 1,
      ...(input.after
        ? {
            ExclusiveStartKey: {
              ...keys.organization(input.after),
              GSI1PK: gsi1.organizationsPartition,
              GSI1SK: gsi1.organizationSortKey(input.after),
            },
          }
        : {}),
    }),
  );
  const found = (page.Items ?? []).map((item) => ({ PK: String(item.PK), SK: String(item.SK) }));
  const wanted = found.slice(0, input.limit);
  const byKey = new Map((await batchGetItems(ctx.db, wanted)).map((item) => [String(item.PK), item]));
  const organizations = wanted
    .map((key) => byKey.get(key.PK))
    .filter((item) => item !== undefined)
    .map(records.organization);
  const last = organizations.at(-1);
  return { organizations, nextAfter: found.length > input.limit && last ? last.organizationId : null };
}

export interface OrganizationChanges {
  name?: string;
  subscription?: SubscriptionStatus;
  rateLimit?: number;
}

/** DynamoDB allows 100 actions per transaction: the organization plus up to 99 keys. */
const KEYS_PER_TRANSACTION = 99;

export async function updateOrganization(
  ctx: DomainContext,
  organizationId: string,
  changes: OrganizationChanges,
): Promise<OrganizationRecord> {
  const current = await getOrganization(ctx, organizationId);
  const next: OrganizationRecord = {
    ...current,
    ...(changes.name === undefined ? {} : { name: changes.name }),
    ...(changes.subscription === undefined ? {} : { subscription: changes.subscription }),
    ...(changes.rateLimit === undefined ? {} : { rateLimit: checkedRateLimit(changes.rateLimit) }),
    version: current.version + 1,
  };
  const keyItems = await apiKeyKeysOf(ctx, organizationId);
  const keyUpdates = keyItems.map((key) => ({
    Update: {
      TableName: ctx.db.tableName,
      Key: key,
      UpdateExpression: "SET organizationActive = :active, rateLimit = :limit",
      ConditionExpression: "attribute_exists(PK)",
      ExpressionAttributeValues: { ":active": next.subscription === "active", ":limit": next.rateLimit },
    },
  }));
  const organizationUpdate = {
    Update: {
      TableName: ctx.db.tableName,
      Key: keys.organization(organizationId),
      UpdateExpression:
        "SET #name = :name, subscription = :subscription, rateLimit = :limit, version = :next",
      ConditionExpression: "version = :version",
      ExpressionAttributeNames: { "#name": "name" },
      ExpressionAttributeValues: {
        ":name": next.name,
        ":subscription": next.subscription,
        ":limit": next.rateLimit,
        ":next": next.version,
        ":version": current.version,
      },
    },
  };
  // The first transaction carries the version check; an organization with more than 99 keys
  // (unusual) has the rest synced in follow-up transactions.
  for (let start = 0; start === 0 || start < keyUpdates.length; start += KEYS_PER_TRANSACTION) {
    const batch = keyUpdates.slice(start, start + KEYS_PER_TRANSACTION);
    const actions = start === 0 ? [organizationUpdate, ...batch] : batch;
    if (actions.length === 0) break;
    try {
      await ctx.db.client.send(new TransactWriteCommand({ TransactItems: actions }));
    } catch (error) {
      if (cancellationReasons(error).some((reason) => reason.failed)) throw new AppError("conflict");
      throw error;
    }
  }
  return next;
}

function checkedRateLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RATE_LIMIT) {
    throw new AppError("invalid_argument", {
      detail: `Rate limit must be a whole number from 1 to ${MAX_RATE_LIMIT}`,
    });
  }
  return limit;
}
