/**
 * POST /api/widget/session over HTTP: origins (exact, wildcard, not allowed, none), unknown chatbots
 * and widgets that are off, a returning visitor, the per-address session limit (429 with headers,
 * refused before anything else is read), CORS on the route and its preflight, and identity tokens
 * (verified, forged, expired, `alg: none`, another algorithm, wrong secret, too long-lived, missing
 * when required, rotation with its overlap, the same person on another device, an anonymous visitor
 * who identifies keeping their conversations).
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { call, isLocal, runtimeLog, UUID } from "#test/support/harness";
import {
  identityToken,
  putWidget,
  rotateIdentitySecret,
  seedWidgetTenant,
  session,
  shopOrigin,
  startSession,
  unsignedIdentityToken,
} from "#test/support/widget";

describe("POST /api/widget/session", () => {
  it("gives a page on an allowed origin a token, a visitor secret and the widget's greeting", async () => {
    const tenant = await seedWidgetTenant({
      appearance: { title: "Shop help", color: "#0A7B34", starter_questions: ["Where is my order?"] },
    });
    const started = await startSession(tenant.chatbotId);
    expect(started.status).toBe(200);
    expect(started.body.token).toMatch(/^cbv_[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
    expect(started.body.visitor).toMatch(/^cvs_[A-Za-z0-9_-]{43}$/);
    expect(started.body.contact_id).toMatch(UUID);
    expect(started.body.conversation_id).toBeNull();
    const expiresIn = Date.parse(started.body.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(55 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(60 * 60_000);
    expect(started.body.widget).toEqual({
      title: "Shop help",
      color: "#0a7b34",
      position: "right",
      launcher_label: "",
      starter_questions: ["Where is my order?"],
      language: "auto",
      welcome_message: "Welcome to the test shop!",
    });
    // CORS for the page, and the address's session bucket.
    expect(started.headers.get("access-control-allow-origin")).toBe(shopOrigin);
    expect(started.headers.get("access-control-allow-credentials")).toBeNull();
    expect(started.headers.get("access-control-expose-headers")).toContain("X-RateLimit-Remaining");
    expect(started.headers.get("x-ratelimit-limit")).toBe("30");
    expect(started.headers.get("x-ratelimit-remaining")).toBe("29");
  });

  it("refuses an origin that is not allowed (403), with CORS so the page can tell", async () => {
    const tenant = await seedWidgetTenant();
    for (const origin of [
      "https://evil.example",
      "http://shop.example",
      "https://shop.example:8443",
      "null",
    ]) {
      const refused = await startSession(tenant.chatbotId, { origin });
      expect(refused.status, origin).toBe(403);
      expect(refused.body).toEqual({ detail: "Origin not allowed" });
    }
    const none = await startSession(tenant.chatbotId, { origin: null });
    expect(none.status).toBe(403);
    expect(none.body).toEqual({ detail: "Origin not allowed" });
  });

  it("matches one leading wildcard label, and exact origins with a port", async () => {
    const tenant = await seedWidgetTenant({
      allowed_origins: ["https://*.shop.example", "http://localhost:8080"],
    });
    expect((await startSession(tenant.chatbotId, { origin: "https://eu.shop.example" })).status).toBe(200);
    expect((await startSession(tenant.chatbotId, { origin: "http://localhost:8080" })).status).toBe(200);
    for (const origin of [
      "https://shop.example",
      "https://a.b.shop.example",
      "https://eushop.example",
      "http://localhost:8081",
    ]) {
      expect((await startSession(tenant.chatbotId, { origin })).status, origin).toBe(403);
    }
  });

  it("answers 404 for an unknown chatbot and for a widget that is off, whatever the origin", async () => {
    const unknown = await startSession(randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: "Chatbot not found" });
    const tenant = await seedWidgetTenant({ enabled: false });
    const off = await startSession(tenant.chatbotId);
    expect(off.status).toBe(404);
    expect(off.body).toEqual({ detail: "Chatbot not found" });
  });

  it("validates the body as every public route does (422, Format B)", async () => {
    const refused = await call("POST", "/api/widget/session", {
      authorization: null,
      headers: { origin: shopOrigin },
      body: { chatbot_id: "nope", visitor: 5 },
    });
    expect(refused.status).toBe(422);
    const items = (refused.body as { detail: { loc: unknown[]; type: string }[] }).detail;
    expect(items.map((item) => item.loc)).toEqual([
      ["body", "chatbot_id"],
      ["body", "visitor"],
    ]);
  });

  it("resumes the same contact and its open conversation for a returning visitor", async () => {
    const tenant = await seedWidgetTenant();
    const first = await session(tenant.chatbotId);
    const conversation = await call<{ conversation_id: string }>("POST", "/api/conversation", {
      key: first.token,
      headers: { origin: shopOrigin },
      body: { chatbot_id: tenant.chatbotId },
    });
    expect(conversation.status).toBe(200);
    const again = await session(tenant.chatbotId, { visitor: first.visitor });
    expect(again.contact_id).toBe(first.contact_id);
    expect(again.visitor).toBe(first.visitor);
    expect(again.conversation_id).toBe(conversation.body.conversation_id);
    expect(again.token).not.toBe(first.token);
    // Both tokens work until they expire.
    for (const token of [first.token, again.token]) {
      const read = await call("GET", `/api/conversation/${conversation.body.conversation_id}`, {
        key: token,
      });
      expect(read.status).toBe(200);
    }
    // A made-up or another chatbot's visitor secret is a new visitor.
    const other = await seedWidgetTenant();
    const stranger = await session(other.chatbotId, { visitor: first.visitor });
    expect(stranger.contact_id).not.toBe(first.contact_id);
    expect(stranger.visitor).not.toBe(first.visitor);
  });

  it("limits sessions per client address and chatbot, refusing before anything else is read", async () => {
    const tenant = await seedWidgetTenant();
    const first = await startSession(tenant.chatbotId);
    const limit = Number(first.headers.get("x-ratelimit-limit"));
    expect(limit).toBeGreaterThan(0);
    // Without an allowed origin each request is refused (403), yet still takes its session token.
    const results = await Promise.all(
      Array.from({ length: limit + 4 }, () =>
        startSession(tenant.chatbotId, { origin: "https://evil.example" }),
      ),
    );
    const refused = results.filter((result) => result.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(5);
    expect(results.filter((result) => result.status === 403).length).toBe(limit - 1);
    const answer = refused[0];
    expect(answer?.headers.get("x-ratelimit-limit")).toBe(String(limit));
    expect(answer?.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(answer?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const detail = ((answer?.body ?? {}) as unknown as { detail: Record<string, unknown> }).detail;
    expect(detail).toMatchObject({ error: "Rate limit exceeded", limit, remaining: 0 });
    expect(detail.reset).toMatch(/Z$/);
    if (isLocal) {
      // Counted as the widget's rate-limited requests (docs/operations.md "Metrics").
      const requestId = answer?.headers.get("x-request-id");
      expect(requestId).toBeTruthy();
      const metrics = () =>
        runtimeLog()
          .split("\n")
          .filter((line) => line.startsWith("{") && line.includes('"_aws"'))
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .filter((document) => document.requestId === requestId);
      await expect.poll(metrics).toMatchObject([{ Stage: "local", Api: "widget", RateLimited: 1 }]);
    }
    // Another chatbot is not held to this one's bucket.
    const other = await seedWidgetTenant();
    expect((await startSession(other.chatbotId)).status).toBe(200);
  });

  it("answers the CORS preflight of the session route", async () => {
    const preflight = await call("OPTIONS", "/api/widget/session", {
      authorization: null,
      headers: {
        origin: "https://anywhere.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://anywhere.example");
    expect(preflight.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
    expect(preflight.headers.get("access-control-allow-headers")).toBe(
      "authorization, content-type, idempotency-key",
    );
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
  });
});

describe("identity tokens", () => {
  it("identifies the visitor: the token's sub names the contact, its name and e-mail update it", async () => {
    const tenant = await seedWidgetTenant({ identity_verification: "optional" });
    const secret = await rotateIdentitySecret(tenant);
    expect(secret).toMatch(/^cis_/);
    const sub = `customer-${randomUUID()}`;
    const token = await identityToken(secret, { sub, name: "Ann Visser", email: "ann@example.nl" });
    const first = await session(tenant.chatbotId, { identity: token });
    expect(first.identified).toBe(true);
    // The same person on another device (no visitor secret) is the same contact.
    const elsewhere = await session(tenant.chatbotId, { identity: await identityToken(secret, { sub }) });
    expect(elsewhere.contact_id).toBe(first.contact_id);
    expect(elsewhere.visitor).not.toBe(first.visitor);
    // Another person is another contact.
    const someoneElse = await session(tenant.chatbotId, {
      identity: await identityToken(secret, { sub: `customer-${randomUUID()}` }),
    });
    expect(someoneElse.contact_id).not.toBe(first.contact_id);
  });

  it("refuses forged, expired, alg none, other-algorithm, wrong-secret and too long-lived tokens (401)", async () => {
    const tenant = await seedWidgetTenant({ identity_verification: "optional" });
    const secret = await rotateIdentitySecret(tenant);
    const now = Math.floor(Date.now() / 1000);
    const good = await identityToken(secret);
    const [header, , signature] = good.split(".");
    const forgedClaims = Buffer.from(JSON.stringify({ sub: "someone-else", exp: now + 600 })).toString(
      "base64url",
    );
    const refusedTokens: Record<string, string> = {
      forged: `${header}.${forgedClaims}.${signature}`,
      expired: await identityToken(secret, { exp: now - 120 }),
      "alg none": unsignedIdentityToken({ sub: "customer-1", exp: now + 600 }),
      HS512: await identityToken(secret, {}, "HS512"),
      "wrong secret": await identityToken("cis_not-the-widget-secret-at-all-00000000000"),
      "a week ahead": await identityToken(secret, { exp: now + 7 * 86_400 }),
      "not a JWT": "hello",
    };
    for (const [name, identity] of Object.entries(refusedTokens)) {
      const refused = await startSession(tenant.chatbotId, { identity });
      expect(refused.status, name).toBe(401);
      expect(refused.body, name).toEqual({ detail: "Invalid identity token" });
    }
    // Within the minute of skew an expired token still passes.
    expect(
      (await startSession(tenant.chatbotId, { identity: await identityToken(secret, { exp: now - 20 }) }))
        .status,
    ).toBe(200);
  });

  it("requires a token when verification is required, and ignores one when it is off", async () => {
    const tenant = await seedWidgetTenant({ identity_verification: "required" });
    const secret = await rotateIdentitySecret(tenant);
    const missing = await startSession(tenant.chatbotId);
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ detail: "Invalid identity token" });
    expect((await startSession(tenant.chatbotId, { identity: await identityToken(secret) })).status).toBe(
      200,
    );
    await putWidget(tenant, { identity_verification: "off" });
    const ignored = await session(tenant.chatbotId, { identity: "not even a token" });
    expect(ignored.identified).toBe(false);
  });

  it("keeps the previous secret verifying after a rotation", async () => {
    const tenant = await seedWidgetTenant({ identity_verification: "required" });
    const before = await rotateIdentitySecret(tenant);
    const after = await rotateIdentitySecret(tenant);
    expect(after).not.toBe(before);
    expect((await startSession(tenant.chatbotId, { identity: await identityToken(before) })).status).toBe(
      200,
    );
    expect((await startSession(tenant.chatbotId, { identity: await identityToken(after) })).status).toBe(200);
    const settings = await call<{ previous_identity_secret_expires_at: string }>(
      "GET",
      `/manage/chatbots/${tenant.chatbotId}/widget`,
      { key: tenant.manageKey },
    );
    const overlap = Date.parse(settings.body.previous_identity_secret_expires_at) - Date.now();
    expect(overlap).toBeGreaterThan(23.9 * 3_600_000);
    expect(overlap).toBeLessThanOrEqual(24 * 3_600_000);
  });

  it("lets an anonymous visitor who identifies keep their conversation", async () => {
    const tenant = await seedWidgetTenant({ identity_verification: "optional" });
    const secret = await rotateIdentitySecret(tenant);
    const sub = `customer-${randomUUID()}`;
    // The person is known already (another device), then talks anonymously on this one.
    const known = await session(tenant.chatbotId, { identity: await identityToken(secret, { sub }) });
    const anonymous = await session(tenant.chatbotId);
    const started = await call<{ conversation_id: string }>("POST", "/api/conversation", {
      key: anonymous.token,
      body: { chatbot_id: tenant.chatbotId },
    });
    expect(started.status).toBe(200);
    // Signing in on this device: the same visitor, now the person's contact, with the conversation.
    const identified = await session(tenant.chatbotId, {
      visitor: anonymous.visitor,
      identity: await identityToken(secret, { sub }),
    });
    expect(identified.contact_id).toBe(known.contact_id);
    expect(identified.conversation_id).toBe(started.body.conversation_id);
    const read = await call<{ contact_id: string }>(
      "GET",
      `/api/conversation/${started.body.conversation_id}`,
      {
        key: identified.token,
      },
    );
    expect(read.status).toBe(200);
    expect(read.body.contact_id).toBe(known.contact_id);
  });
});
