/**
 * What the widget's integration and browser tests share: a tenant whose chatbot has its widget set
 * up through the management API (with a manage key, so it runs against a deployed stage too),
 * sessions started as a browser on an origin would start them, and identity tokens signed as a
 * business's server signs them (jose, HS256), or forged.
 */
import { SignJWT } from "jose";
import { createApiKey } from "#functions/domain/api-keys";
import {
  type ApiResponse,
  call,
  domain,
  seedTenant,
  type Tenant,
  type TenantOptions,
} from "#test/support/harness";

export const shopOrigin = "https://shop.example";

export interface WidgetTenant extends Tenant {
  manageKey: string;
}

export interface SessionBody {
  token: string;
  expires_at: string;
  visitor: string;
  contact_id: string;
  conversation_id: string | null;
  identified: boolean;
  widget: {
    title: string;
    color: string;
    position: string;
    launcher_label: string;
    starter_questions: string[];
    language: string;
    welcome_message: string;
  };
}

/** A tenant (with a manage key) whose chatbot's widget is on for `shopOrigin`, plus `settings`. */
export async function seedWidgetTenant(
  settings: Record<string, unknown> = {},
  options: TenantOptions = {},
): Promise<WidgetTenant> {
  const tenant = await seedTenant(options);
  const key = await createApiKey(domain(), {
    organizationId: tenant.organizationId,
    name: "widget admin",
    scope: "manage",
  });
  const widget: WidgetTenant = { ...tenant, manageKey: key.apiKey };
  const updated = await putWidget(widget, { enabled: true, allowed_origins: [shopOrigin], ...settings });
  if (updated.status !== 200)
    throw new Error(`could not set the widget up: ${updated.status} ${updated.text}`);
  return widget;
}

export const putWidget = (tenant: WidgetTenant, body: Record<string, unknown>) =>
  call<Record<string, unknown>>("PUT", `/manage/chatbots/${tenant.chatbotId}/widget`, {
    key: tenant.manageKey,
    body,
  });

/** A new identity secret, through the management API. */
export async function rotateIdentitySecret(tenant: WidgetTenant): Promise<string> {
  const rotated = await call<{ identity_secret: string }>(
    "POST",
    `/manage/chatbots/${tenant.chatbotId}/widget/identity-secret`,
    { key: tenant.manageKey },
  );
  if (rotated.status !== 201) throw new Error(`could not rotate: ${rotated.status} ${rotated.text}`);
  return rotated.body.identity_secret;
}

/** POST /api/widget/session as a page on `origin` (null: no Origin header). */
export function startSession(
  chatbotId: string,
  options: { origin?: string | null; visitor?: string; identity?: string } = {},
): Promise<ApiResponse<SessionBody>> {
  const origin = options.origin === undefined ? shopOrigin : options.origin;
  return call<SessionBody>("POST", "/api/widget/session", {
    authorization: null,
    headers: origin === null ? {} : { origin },
    body: {
      chatbot_id: chatbotId,
      ...(options.visitor ? { visitor: options.visitor } : {}),
      ...(options.identity ? { identity: options.identity } : {}),
    },
  });
}

/** A session that must succeed. */
export async function session(
  chatbotId: string,
  options: { visitor?: string; identity?: string } = {},
): Promise<SessionBody> {
  const started = await startSession(chatbotId, options);
  if (started.status !== 200) throw new Error(`no session: ${started.status} ${started.text}`);
  return started.body;
}

/** An identity token as a business's server signs it (HS256), with `claims` over the defaults. */
export async function identityToken(
  secret: string,
  claims: { sub?: string; exp?: number; name?: string; email?: string; phone?: string } = {},
  algorithm = "HS256",
): Promise<string> {
  const { sub = "customer-1", exp = Math.floor(Date.now() / 1000) + 600, ...rest } = claims;
  return new SignJWT(rest)
    .setProtectedHeader({ alg: algorithm, typ: "JWT" })
    .setSubject(sub)
    .setExpirationTime(exp)
    .setIssuedAt()
    .sign(new TextEncoder().encode(secret));
}

/** The same claims with `alg: none` and no signature: what a forger sends. */
export function unsignedIdentityToken(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part(claims)}.`;
}
