/**
 * People of an organization (members with a role) and platform operators.
 *
 * Main course of an invitation: the directory (the user pool) creates the person's account and
 * e-mails the temporary password, or finds their existing account; then one transaction puts the
 * membership (refused if they are a member already), counts a new admin on the organization, and
 * notes the person's e-mail on their own item.
 *
 * The organization counts its admins (`adminCount`) in the same transaction as every change of a
 * membership, and a demotion or removal of an admin is conditional on `adminCount > 1`: the last
 * admin can never go, however concurrent requests interleave.
 */
import {
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import type { DomainContext } from "#functions/domain/context";
import { isoTime } from "#functions/domain/context";
import type { PeopleDirectory } from "#functions/domain/directory";
import { AppError } from "#functions/errors";
import { cancellationReasons, deleteExisting, putNew } from "#functions/store/conditions";
import { batchGetItems, gsi1Keys } from "#functions/store/index-reads";
import {
  entities,
  gsi1,
  type Item,
  items,
  keys,
  type MembershipRecord,
  type OperatorGrantRecord,
  prefixes,
  type Role,
  records,
} from "#functions/store/items";

export const roles: readonly Role[] = ["admin", "viewer"];

export const memberLimits = { email: 254, displayName: 120 } as const;

export interface InviteInput {
  organizationId: string;
  email: string;
  role: Role;
  displayName?: string;
  /** A user id, or `key:{keyId}` for a manage key; absent for the operator CLI. */
  invitedBy?: string;
}

export interface Invitation {
  member: MembershipRecord;
  /** `sent`: a new account, the invitation e-mail is on its way; `existing_account`: they sign in as before. */
  invitation: "sent" | "existing_account";
}

/** E-mail addresses are compared and stored in lower case (the user pool treats them case-insensitively). */
export function normalisedEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function inviteMember(
  ctx: DomainContext,
  directory: PeopleDirectory,
  input: InviteInput,
): Promise<Invitation> {
  const email = normalisedEmail(input.email);
  const { Item: organization } = await ctx.db.client.send(
    new GetCommand({ TableName: ctx.db.tableName, Key: keys.organization(input.organizationId) }),
  );
  if (!organization) throw new AppError("organization_not_found");
  const user = await directory.invite(email);
  const now = isoTime(ctx.clock());
  const member: MembershipRecord = {
    userId: user.userId,
    organizationId: input.organizationId,
    role: input.role,
    email,
    createdAt: now,
    ...(input.displayName ? { displayName: input.displayName } : {}),
    ...(input.invitedBy ? { invitedBy: input.invitedBy } : {}),
  };
  try {
    await ctx.db.client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: ctx.db.tableName,
              Item: items.membership(member),
              ConditionExpression: "attribute_not_exists(PK)",
            },
          },
          {
            Update: {
              TableName: ctx.db.tableName,
              Key: keys.organization(input.organizationId),
              UpdateExpression: "ADD adminCount :added",
              ConditionExpression: "attribute_exists(PK)",
              ExpressionAttributeValues: { ":added": input.role === "admin" ? 1 : 0 },
            },
          },
          {
            Update: {
              TableName: ctx.db.tableName,
              Key: keys.person(user.userId),
              UpdateExpression:
                "SET email = :email, userId = :userId, #entity = :entity, createdAt = if_not_exists(createdAt, :now)",
              ExpressionAttributeNames: { "#entity": "entity" },
              ExpressionAttributeValues: {
                ":email": email,
                ":userId": user.userId,
                ":entity": entities.person,
                ":now": now,
              },
            },
          },
        ],
      }),
    );
  } catch (error) {
    const [membership, org] = cancellationReasons(error);
    if (membership?.failed) {
      throw new AppError("conflict", {
        detail: `${email} is a member of this organization already`,
        details: { reason: "already_member" },
      });
    }
    if (org?.failed) throw new AppError("organization_not_found");
    throw error;
  }
  return { member, invitation: user.invited ? "sent" : "existing_account" };
}

/** The organization's members, by e-mail. */
export async function listMembers(ctx: DomainContext, organizationId: string): Promise<MembershipRecord[]> {
  const memberKeys = await gsi1Keys(ctx.db, gsi1.organizationPartition(organizationId), {
    beginsWith: gsi1.membersPrefix,
  });
  const found = (await batchGetItems(ctx.db, memberKeys)).map(records.membership);
  return found.sort((a, b) => a.email.localeCompare(b.email) || a.userId.localeCompare(b.userId));
}

export async function getMember(
  ctx: DomainContext,
  input: { organizationId: string; userId: string },
): Promise<MembershipRecord> {
  const { Item } = await ctx.db.client.send(
    new GetCommand({
      TableName: ctx.db.tableName,
      Key: keys.membership(input.userId, input.organizationId),
      ConsistentRead: true,
    }),
  );
  if (!Item) throw new AppError("member_not_found");
  return records.membership(Item);
}

const lastAdmin = () =>
  new AppError("conflict", {
    detail: "An organization keeps at least one admin: make someone else an admin first",
    details: { reason: "last_admin" },
  });

type TransactAction = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

/** The organization's admin count changes with the membership, and never below one. */
function adminCountUpdate(ctx: DomainContext, organizationId: string, change: -1 | 1): TransactAction {
  return {
    Update: {
      TableName: ctx.db.tableName,
      Key: keys.organization(organizationId),
      UpdateExpression: "ADD adminCount :change",
      ConditionExpression: change < 0 ? "adminCount > :one" : "attribute_exists(PK)",
      ExpressionAttributeValues: { ":change": change, ...(change < 0 ? { ":one": 1 } : {}) },
    },
  };
}

export async function changeMemberRole(
  ctx: DomainContext,
  input: { organizationId: string; userId: string; role: Role },
): Promise<MembershipRecord> {
  const current = await getMember(ctx, input);
  if (current.role === input.role) return current;
  const membershipUpdate: TransactAction = {
    Update: {
      TableName: ctx.db.tableName,
      Key: keys.membership(input.userId, input.organizationId),
      UpdateExpression: "SET #role = :role",
      ConditionExpression: "#role = :was",
      ExpressionAttributeNames: { "#role": "role" },
      ExpressionAttributeValues: { ":role": input.role, ":was": current.role },
    },
  };
  await transact(ctx, [
    membershipUpdate,
    adminCountUpdate(ctx, input.organizationId, input.role === "admin" ? 1 : -1),
  ]);
  return { ...current, role: input.role };
}

export async function removeMember(
  ctx: DomainContext,
  input: { organizationId: string; userId: string },
): Promise<void> {
  const current = await getMember(ctx, input);
  const membershipDelete: TransactAction = {
    Delete: {
      TableName: ctx.db.tableName,
      Key: keys.membership(input.userId, input.organizationId),
      ConditionExpression: "#role = :was",
      ExpressionAttributeNames: { "#role": "role" },
      ExpressionAttributeValues: { ":was": current.role },
    },
  };
  await transact(
    ctx,
    current.role === "admin"
      ? [membershipDelete, adminCountUpdate(ctx, input.organizationId, -1)]
      : [membershipDelete],
  );
}

/** A membership change and its admin count: the membership refused → it changed meanwhile; the count → last admin. */
async function transact(ctx: DomainContext, actions: TransactAction[]): Promise<void> {
  try {
    await ctx.db.client.send(new TransactWriteCommand({ TransactItems: actions }));
  } catch (error) {
    const [membership, count] = cancellationReasons(error);
    if (count?.failed) throw lastAdmin();
    if (membership?.failed) throw new AppError("conflict", { details: { reason: "changed" } });
    throw error;
  }
}

// ---------- the person ----------

export interface PersonOverview {
  userId: string;
  email?: string;
  operator: boolean;
  memberships: { organizationId: string; role: Role }[];
}

/** Everything about a person in one Query of their partition: their item, operator grant and memberships. */
export async function personOverview(ctx: DomainContext, userId: string): Promise<PersonOverview> {
  const found: Item[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await ctx.db.client.send(
      new QueryCommand({
        TableName: ctx.db.tableName,
        KeyConditionExpression: "PK = :pk",
        ExpressionAttributeValues: { ":pk": prefixes.person(userId) },
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    found.push(...(page.Items ?? []));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  const overview: PersonOverview = { userId, operator: false, memberships: [] };
  for (const item of found) {
    const sortKey = String(item.SK);
    if (sortKey === keys.person(userId).SK) {
      const email = records.person(item).email;
      if (email) overview.email = email;
    } else if (sortKey === keys.operatorGrant(userId).SK) {
      overview.operator = true;
    } else if (sortKey.startsWith(prefixes.memberships)) {
      const member = records.membership(item);
      overview.memberships.push({ organizationId: member.organizationId, role: member.role });
      overview.email ??= member.email;
    }
  }
  return overview;
}

// ---------- operators ----------

/** Makes a person a platform operator (operator CLI only: there is no route that grants it). */
export async function grantOperator(
  ctx: DomainContext,
  input: { userId: string; email?: string },
): Promise<OperatorGrantRecord> {
  const record: OperatorGrantRecord = {
    userId: input.userId,
    grantedAt: isoTime(ctx.clock()),
    ...(input.email ? { email: normalisedEmail(input.email) } : {}),
  };
  await putNew(
    ctx.db,
    items.operatorGrant(record),
    () => new AppError("conflict", { detail: "This person is an operator already" }),
  );
  return record;
}

export async function revokeOperator(ctx: DomainContext, userId: string): Promise<void> {
  await deleteExisting(
    ctx.db,
    keys.operatorGrant(userId),
    () => new AppError("invalid_argument", { detail: "This person is no operator" }),
  );
}
