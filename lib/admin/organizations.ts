/** `organizations …` and `keys …`: tenants, their subscription and rate limit, and their API keys. */
import { createApiKey, listApiKeys, revokeApiKey } from "#functions/domain/api-keys";
import {
  createOrganization,
  getOrganization,
  listOrganizations,
  updateOrganization,
} from "#functions/domain/organizations";
import { AppError } from "#functions/errors";
import type { ApiKeyRecord, SubscriptionStatus } from "#functions/store/items";
import { type Command, numberOption, optional, positional, required } from "./command.ts";

function subscriptionOption(value: string | undefined): SubscriptionStatus | undefined {
  if (value === undefined) return undefined;
  if (value !== "active" && value !== "inactive") {
    throw new AppError("invalid_argument", { detail: "--subscription must be active or inactive" });
  }
  return value;
}

export const organizationCommands: Command[] = [
  {
    group: "organizations",
    name: "create",
    summary: "Create an organization (active, 100 requests/minute per key unless told otherwise).",
    options: { name: { type: "string" }, "rate-limit": { type: "string" }, subscription: { type: "string" } },
    help: {
      name: "Display name (required)",
      "rate-limit": "Requests per minute per API key",
      subscription: "active | inactive",
    },
    run: (ctx, input) => {
      const rateLimit = numberOption(input, "rate-limit");
      const subscription = subscriptionOption(optional(input, "subscription"));
      return createOrganization(ctx, {
        name: required(input, "name"),
        ...(rateLimit === undefined ? {} : { rateLimit }),
        ...(subscription === undefined ? {} : { subscription }),
      });
    },
  },
  {
    group: "organizations",
    name: "list",
    summary: "List organizations.",
    options: {},
    help: {},
    run: (ctx) => listOrganizations(ctx),
  },
  {
    group: "organizations",
    name: "show",
    summary: "Show one organization.",
    positionals: ["organizationId"],
    options: {},
    help: {},
    run: (ctx, input) => getOrganization(ctx, positional(input, 0, "organizationId")),
  },
  {
    group: "organizations",
    name: "update",
    summary: "Change an organization's name, subscription or rate limit (its keys follow at once).",
    positionals: ["organizationId"],
    options: { name: { type: "string" }, subscription: { type: "string" }, "rate-limit": { type: "string" } },
    help: {
      name: "New name",
      subscription: "active | inactive",
      "rate-limit": "Requests per minute per API key",
    },
    run: (ctx, input) => {
      const rateLimit = numberOption(input, "rate-limit");
      const subscription = subscriptionOption(optional(input, "subscription"));
      const name = optional(input, "name");
      return updateOrganization(ctx, positional(input, 0, "organizationId"), {
        ...(name === undefined ? {} : { name }),
        ...(subscription === undefined ? {} : { subscription }),
        ...(rateLimit === undefined ? {} : { rateLimit }),
      });
    },
  },
  {
    group: "keys",
    name: "create",
    summary: "Create an API key. The key is shown once: store it now.",
    options: {
      org: { type: "string" },
      name: { type: "string" },
      scope: { type: "string" },
      "expires-in-days": { type: "string" },
    },
    help: {
      org: "Organization id (required)",
      name: "A label for the key",
      scope: "chat (default: the public API only) | manage (also the management API, as an admin)",
      "expires-in-days": "Refuse the key after this many days",
    },
    run: async (ctx, input) => {
      const days = numberOption(input, "expires-in-days");
      const scope = optional(input, "scope") ?? "chat";
      if (scope !== "chat" && scope !== "manage") {
        throw new AppError("invalid_argument", { detail: "--scope must be chat or manage" });
      }
      const created = await createApiKey(ctx, {
        organizationId: required(input, "org"),
        name: optional(input, "name") ?? "default",
        scope,
        ...(days === undefined ? {} : { expiresAt: Math.floor(ctx.clock() / 1000 + days * 86_400) }),
      });
      return { apiKey: created.apiKey, ...publicKey(created.record) };
    },
  },
  {
    group: "keys",
    name: "list",
    summary: "List an organization's API keys (never the keys themselves).",
    options: { org: { type: "string" } },
    help: { org: "Organization id (required)" },
    run: async (ctx, input) => (await listApiKeys(ctx, required(input, "org"))).map(publicKey),
  },
  {
    group: "keys",
    name: "revoke",
    summary: "Revoke an API key; its next request gets 401.",
    positionals: ["keyId"],
    options: { org: { type: "string" } },
    help: { org: "Organization id (required)" },
    run: async (ctx, input) =>
      publicKey(
        await revokeApiKey(ctx, {
          organizationId: required(input, "org"),
          keyId: positional(input, 0, "keyId"),
        }),
      ),
  },
];

/** What may be shown of a key: never its hash or bucket state. */
function publicKey(
  record: Pick<
    ApiKeyRecord,
    | "keyId"
    | "organizationId"
    | "name"
    | "displayPrefix"
    | "createdAt"
    | "revokedAt"
    | "expiresAt"
    | "scope"
    | "lastUsedAt"
  >,
) {
  return {
    keyId: record.keyId,
    organizationId: record.organizationId,
    name: record.name,
    scope: record.scope ?? "chat",
    prefix: record.displayPrefix,
    createdAt: record.createdAt,
    lastUsedAt: record.lastUsedAt ?? null,
    revokedAt: record.revokedAt ?? null,
    expiresAt: record.expiresAt === undefined ? null : new Date(record.expiresAt * 1000).toISOString(),
  };
}
