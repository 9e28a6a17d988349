/**
 * What the management API's integration tests share: people in the user pool (created through
 * Cognito's admin API, then signed in through lib/sign-in.ts exactly as the console signs in),
 * tenants with an admin, a viewer and keys of both scopes, a client for `/manage/*`, the local
 * mailbox, and tokens minted with cognito-local's own signing key for the edge cases a real pool
 * will not hand out (expired, another issuer, tampered, `alg: none`).
 */
import { createSign, randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import {
  AdminCreateUserCommand,
  AdminSetUserPasswordCommand,
  CognitoIdentityProviderClient,
} from "@aws-sdk/client-cognito-identity-provider";
import { createApiKey } from "#functions/domain/api-keys";
import type { PeopleDirectory } from "#functions/domain/directory";
import { grantOperator, inviteMember } from "#functions/domain/people";
import type { ApiKeyScope, Role } from "#functions/store/items";
import type { MailboxMessage } from "#lib/local/cognito-local";
import { type CognitoClientConfig, signIn } from "#lib/sign-in";
import {
  type ApiResponse,
  call,
  domain,
  environment,
  seedTenant,
  type Tenant,
  type TenantOptions,
} from "#test/support/harness";

export const identity = environment.cognito;
/** Tests that need people run only where a user pool is known. */
export const hasIdentity = identity !== undefined;

export function signInConfig(): CognitoClientConfig {
  if (!identity) throw new Error("no user pool in this environment");
  return { endpoint: identity.endpoint, clientId: identity.clientId };
}

let client: CognitoIdentityProviderClient | undefined;
export function cognitoClient(): CognitoIdentityProviderClient {
  if (!identity) throw new Error("no user pool in this environment");
  client ??=
    environment.mode === "local"
      ? new CognitoIdentityProviderClient({
          endpoint: identity.endpoint,
          region: identity.region,
          credentials: { accessKeyId: "local", secretAccessKey: "local" },
        })
      : new CognitoIdentityProviderClient({ region: identity.region });
  return client;
}

export interface Person {
  userId: string;
  email: string;
  password: string;
  /** A fresh access token (signed in through the console's sign-in code). */
  token: string;
}

export const newEmail = (label = "person") => `${label}-${randomUUID().slice(0, 12)}@test.example`;
export const newPassword = () => `Pw-${randomUUID()}-x9`;

/** A person with an account and a password of their own (no first-sign-in challenge), signed in. */
export async function seedPerson(label?: string): Promise<Person> {
  if (!identity) throw new Error("no user pool in this environment");
  const email = newEmail(label);
  const password = newPassword();
  const created = await cognitoClient().send(
    new AdminCreateUserCommand({
      UserPoolId: identity.userPoolId,
      Username: email,
      UserAttributes: [
        { Name: "email", Value: email },
        { Name: "email_verified", Value: "true" },
      ],
      MessageAction: "SUPPRESS",
      TemporaryPassword: password,
    }),
  );
  await cognitoClient().send(
    new AdminSetUserPasswordCommand({
      UserPoolId: identity.userPoolId,
      Username: email,
      Password: password,
      Permanent: true,
    }),
  );
  const userId = created.User?.Attributes?.find((attribute) => attribute.Name === "sub")?.Value;
  if (!userId) throw new Error("the user pool returned no sub");
  return { userId, email, password, token: await tokenFor(email, password) };
}

export async function tokenFor(email: string, password: string): Promise<string> {
  const result = await signIn(signInConfig(), email, password);
  if (result.kind !== "signed_in") throw new Error(`sign-in needs ${result.kind}`);
  return result.tokens.accessToken;
}

/** The directory as it answers for a person who exists already. */
const knownPerson = (person: Person): PeopleDirectory => ({
  find: async () => ({ userId: person.userId, email: person.email }),
  invite: async () => ({ userId: person.userId, email: person.email, invited: false }),
});

/** A signed-in person with `role` in the organization. */
export async function seedMember(organizationId: string, role: Role, label: string = role): Promise<Person> {
  const person = await seedPerson(label);
  await inviteMember(domain(), knownPerson(person), { organizationId, email: person.email, role });
  return person;
}

export async function addMembership(person: Person, organizationId: string, role: Role): Promise<void> {
  await inviteMember(domain(), knownPerson(person), { organizationId, email: person.email, role });
}

export async function seedOperator(): Promise<Person> {
  const person = await seedPerson("operator");
  await grantOperator(domain(), { userId: person.userId, email: person.email });
  return person;
}

export interface ManagedTenant extends Tenant {
  admin: Person;
  viewer: Person;
  /** An API key of scope manage. */
  manageKey: string;
  manageKeyId: string;
}

export async function seedKey(
  organizationId: string,
  scope: ApiKeyScope,
): Promise<{ key: string; keyId: string }> {
  const created = await createApiKey(domain(), { organizationId, name: `${scope} key`, scope });
  return { key: created.apiKey, keyId: created.record.keyId };
}

/** A tenant (organization, chat key, chatbot) with an admin, a viewer and a manage key. */
export async function seedManagedTenant(options: TenantOptions = {}): Promise<ManagedTenant> {
  const tenant = await seedTenant(options);
  const [admin, viewer, manage] = await Promise.all([
    seedMember(tenant.organizationId, "admin"),
    seedMember(tenant.organizationId, "viewer"),
    seedKey(tenant.organizationId, "manage"),
  ]);
  return { ...tenant, admin, viewer, manageKey: manage.key, manageKeyId: manage.keyId };
}

export interface ManageOptions {
  /** An access token or an API key: sent as `Authorization: Bearer …`. */
  as?: string;
  /** X-Organization-Id. */
  organization?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One request to the management API. */
export function manage<T = unknown>(
  method: string,
  path: string,
  options: ManageOptions = {},
): Promise<ApiResponse<T>> {
  return call<T>(method, path, {
    ...(options.as === undefined ? {} : { authorization: `Bearer ${options.as}` }),
    headers: {
      ...(options.organization === undefined ? {} : { "x-organization-id": options.organization }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: options.body }),
  });
}

export interface FormatA {
  error: { code: string; message: string; details: Record<string, unknown> };
}

/** The Format A error code of an answer (undefined when it is not one). */
export const errorCode = (response: ApiResponse<unknown>): string | undefined =>
  (response.body as Partial<FormatA> | null)?.error?.code;

// ---------- the local mailbox ----------

export const mailbox = {
  /** The newest message of `kind` to `to` (waits a little: cognito-local prints it asynchronously). */
  async latest(to: string, kind: string, timeoutMs = 10_000): Promise<MailboxMessage> {
    const file = identity?.mailboxFile;
    if (!file) throw new Error("the mailbox exists only locally");
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const messages = existsSync(file)
        ? readFileSync(file, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((line) => JSON.parse(line) as MailboxMessage)
            .filter((message) => message.to === to && message.kind === kind)
        : [];
      const last = messages.at(-1);
      if (last) return last;
      if (Date.now() > deadline) throw new Error(`no ${kind} for ${to} in the mailbox`);
      await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    }
  },
  /** How many messages of `kind` went to `to` so far. */
  count(to: string, kind: string): number {
    const file = identity?.mailboxFile;
    if (!file || !existsSync(file)) return 0;
    return readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as MailboxMessage)
      .filter((message) => message.to === to && message.kind === kind).length;
  },
};

// ---------- minted tokens (local only) ----------

const require = createRequire(import.meta.url);

/** cognito-local's signing key (published in its package), so a test can sign tokens the pool would never issue. */
function localSigningKey(): string {
  return (require("cognito-local/lib/keys/cognitoLocal.private.json") as { pem: string }).pem;
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** The claims of a genuine console access token for `userId`, issued now. */
export function accessClaims(userId: string): Record<string, unknown> {
  if (!identity) throw new Error("no user pool in this environment");
  const now = Math.floor(Date.now() / 1000);
  return {
    sub: userId,
    iss: `${identity.endpoint}/${identity.userPoolId}`,
    client_id: identity.clientId,
    token_use: "access",
    scope: "aws.cognito.signin.user.admin",
    auth_time: now,
    iat: now,
    exp: now + 3600,
    jti: randomUUID(),
    username: userId,
  };
}

/** A JWT signed with the local pool's key (RS256), with any header and claims. */
export function mintToken(claims: Record<string, unknown>, header: Record<string, unknown> = {}): string {
  const head = base64url({ alg: "RS256", typ: "JWT", kid: "CognitoLocal", ...header });
  const body = base64url(claims);
  const signature = createSign("RSA-SHA256")
    .update(`${head}.${body}`)
    .sign(localSigningKey())
    .toString("base64url");
  return `${head}.${body}.${signature}`;
}
