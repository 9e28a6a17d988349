/**
 * The console token check (aws-jwt-verify) against a user pool of our own: a JWKS served over http
 * from a key made here, tokens signed with it. Each way a token can be wrong is rejected as such; a
 * pool whose keys cannot be fetched is not mistaken for a bad token.
 */
import { createSign, generateKeyPairSync, type KeyObject } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AccessTokenRejected,
  type AccessTokenVerifier,
  createAccessTokenVerifier,
} from "#functions/domain/access-tokens";

let server: Server;
let issuer: string;
let privateKey: KeyObject;
let verifier: AccessTokenVerifier;
let jwksRequests = 0;
const clientId = "console-client";

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

function sign(
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
  key = privateKey,
): string {
  const head = encode({ alg: "RS256", typ: "JWT", kid: "pool-key", ...header });
  const body = encode(claims);
  return `${head}.${body}.${createSign("RSA-SHA256").update(`${head}.${body}`).sign(key).toString("base64url")}`;
}

function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    sub: "user-1",
    iss: issuer,
    client_id: clientId,
    token_use: "access",
    iat: now,
    exp: now + 600,
    ...overrides,
  };
}

async function rejection(token: string): Promise<string> {
  try {
    await verifier.verify(token);
  } catch (error) {
    if (error instanceof AccessTokenRejected) return error.reason;
    throw error;
  }
  return "accepted";
}

describe("console access tokens", () => {
  beforeAll(async () => {
    const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
    privateKey = pair.privateKey;
    const jwk = { ...pair.publicKey.export({ format: "jwk" }), kid: "pool-key", alg: "RS256", use: "sig" };
    server = createServer((req, res) => {
      jwksRequests += 1;
      if (req.url?.endsWith("/.well-known/jwks.json")) res.end(JSON.stringify({ keys: [jwk] }));
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/local_pool`;
    verifier = createAccessTokenVerifier({ issuer, clientId });
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("accepts a genuine access token of the console client, fetching the pool's keys once", async () => {
    expect(await verifier.verify(sign(claims()))).toEqual({ userId: "user-1" });
    expect(await verifier.verify(sign(claims({ sub: "user-2" })))).toEqual({ userId: "user-2" });
    expect(jwksRequests).toBe(1);
  });

  it("rejects each kind of wrong token for what it is", async () => {
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    const now = Math.floor(Date.now() / 1000);
    const genuine = sign(claims());
    const [head, , signature] = genuine.split(".");
    const cases: [string, string | string[]][] = [
      [sign(claims({ exp: now - 10 })), "expired"],
      [sign(claims({ iss: `${issuer}-other` })), "issuer"],
      [sign(claims({ client_id: "another-client" })), "client_id"],
      [sign(claims({ token_use: "id" })), "token_use"],
      [sign(claims(), {}, other), "signature"],
      [`${head}.${encode(claims({ sub: "admin" }))}.${signature}`, "signature"],
      // Unsigned: refused as malformed (no signature) or for its algorithm, never accepted.
      [
        `${encode({ alg: "none", typ: "JWT", kid: "pool-key" })}.${encode(claims())}.`,
        ["malformed", "algorithm"],
      ],
      [
        `${encode({ alg: "none", typ: "JWT", kid: "pool-key" })}.${encode(claims())}.${signature}`,
        "algorithm",
      ],
      [sign(claims(), { alg: "HS256" }), "algorithm"],
      ["not.a.jwt", "malformed"],
      // Signed by the pool's key, but not as the pool signs: no expiry, no issue time, issued a
      // year (or just over a minute) ahead, or living longer than a pool's tokens can.
      [sign(claims({ exp: undefined })), "no_expiry"],
      [sign(claims({ exp: "never" })), "malformed"],
      [sign(claims({ iat: undefined })), "no_issued_at"],
      [sign(claims({ iat: now + 365 * 86_400, exp: now + 365 * 86_400 + 600 })), "issued_in_future"],
      [sign(claims({ iat: now + 120 })), "issued_in_future"],
      [sign(claims({ iat: now - 60, exp: now + 10 * 365 * 86_400 })), "lifetime"],
    ];
    for (const [token, reason] of cases) {
      const got = await rejection(token);
      expect([reason, got]).toEqual([reason, Array.isArray(reason) && reason.includes(got) ? got : reason]);
    }
  });

  it("accepts an issue time a few seconds ahead of our clock (clocks differ a little)", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await verifier.verify(sign(claims({ iat: now + 30 })))).toEqual({ userId: "user-1" });
  });

  it("rejects a key id the pool does not publish, without fetching its keys on every such token", async () => {
    const before = jwksRequests;
    for (let i = 0; i < 5; i++)
      expect(await rejection(sign(claims(), { kid: `unknown-${i}` }))).toBe("key_id");
    // One refetch (a key may have been rotated in), then the library's penalty box.
    expect(jwksRequests - before).toBeLessThanOrEqual(1);
  });

  it("does not call a token bad when the pool's keys cannot be fetched (an outage, not a refusal)", async () => {
    const unreachable = createAccessTokenVerifier({ issuer: "http://127.0.0.1:9/local_pool", clientId });
    const token = sign({ ...claims(), iss: "http://127.0.0.1:9/local_pool" });
    await expect(unreachable.verify(token)).rejects.not.toBeInstanceOf(AccessTokenRejected);
  });
});
