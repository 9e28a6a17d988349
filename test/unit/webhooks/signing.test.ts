/**
 * Our signatures must verify with the reference Standard Webhooks library, with one secret and with
 * two during a rotation's overlap, and must fail it for any change of id, timestamp or body.
 */
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { newSigningSecret, sign, webhookHeaders } from "#functions/webhooks/signing";

const body = JSON.stringify({ type: "message.created", timestamp: "2026-01-01T00:00:00.000Z", data: {} });
const id = "evt_01j9example";

describe("Standard Webhooks signing", () => {
  it("makes secrets the reference library accepts: whsec_ and base64 of 32 random bytes", () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newSigningSecret()).not.toBe(secret);
    expect(() => new Webhook(secret)).not.toThrow();
  });

  it("signs so that the reference library verifies the delivery", () => {
    // Prepare
    const secret = newSigningSecret();
    const now = Math.floor(Date.now() / 1000);
    // Act
    const headers = webhookHeaders([secret], id, now, body);
    // Assess
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(headers["webhook-signature"]).toBe(new Webhook(secret).sign(id, new Date(now * 1000), body));
  });

  it("signs with both secrets during an overlap, and each alone verifies", () => {
    const [next, previous] = [newSigningSecret(), newSigningSecret()];
    const now = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([next, previous], id, now, body);
    expect(headers["webhook-signature"].split(" ")).toEqual([
      sign(next, id, now, body),
      sign(previous, id, now, body),
    ]);
    expect(new Webhook(next).verify(body, { ...headers })).toBeTruthy();
    expect(new Webhook(previous).verify(body, { ...headers })).toBeTruthy();
    expect(() => new Webhook(newSigningSecret()).verify(body, { ...headers })).toThrow(
      WebhookVerificationError,
    );
  });

  it("fails verification for another id, timestamp or body", () => {
    const secret = newSigningSecret();
    const now = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([secret], id, now, body);
    const verify = (changed: Record<string, string>, payload = body) =>
      new Webhook(secret).verify(payload, { ...headers, ...changed });
    expect(() => verify({ "webhook-id": "evt_other" })).toThrow(WebhookVerificationError);
    expect(() => verify({ "webhook-timestamp": String(now - 1) })).toThrow(WebhookVerificationError);
    expect(() => verify({}, body.replace("message", "massage"))).toThrow(WebhookVerificationError);
  });

  it("refuses a secret that is not a whsec_ key", () => {
    expect(() => sign("not-a-secret", id, 1, body)).toThrow();
    expect(() => sign("whsec_c2hvcnQ=", id, 1, body)).toThrow();
    expect(() => webhookHeaders([], id, 1, body)).toThrow();
  });
});
