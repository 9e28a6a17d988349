/**
 * The management API's shared security suite, run against every `/manage/*` route of the route
 * table: no credential, another scheme, garbage, an expired token, a token of another client or
 * issuer, a tampered token, `alg: none`, an id token, unknown and revoked keys, and a key of scope
 * chat. Each answer is Format A (401 or 403) from our own code, never the gateway's body, and none
 * reaches the route's work.
 */
import { randomUUID } from "node:crypto";
import { CreateUserPoolClientCommand } from "@aws-sdk/client-cognito-identity-provider";
import { beforeAll, describe, expect, it } from "vitest";
import { generateApiKey, revokeApiKey } from "#functions/domain/api-keys";
import { manageRoutes, type RouteDefinition } from "#lib/routes";
import { signIn } from "#lib/sign-in";
import { domain, isLocal } from "#test/support/harness";
import {
  accessClaims,
  cognitoClient,
  errorCode,
  hasIdentity,
  identity,
  type ManagedTenant,
  manage,
  mintToken,
  seedKey,
  seedManagedTenant,
} from "#test/support/management";

let tenant: ManagedTenant;
let chatKey: string;
let revokedManageKey: string;
let otherClientToken: string;
let idToken: string;

/** A request for the route with every path parameter filled (ids that exist nowhere: refusal comes first). */
function requestFor(route: RouteDefinition): { method: string; path: string; body?: unknown } {
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === "key_id" ? "key_AAAAAAAAAAAAAAAA" : randomUUID(),
  );
  return {
    method: route.method,
    path,
    ...(route.method === "POST" || route.method === "PATCH" ? { body: {} } : {}),
  };
}

async function everyRoute(as: string | undefined, headers: Record<string, string> = {}) {
  return Promise.all(
    manageRoutes.map(async (route) => {
      const { method, path, body } = requestFor(route);
      const response = await manage(method, path, {
        ...(as === undefined ? {} : { as }),
        organization: tenant.organizationId,
        headers,
        ...(body === undefined ? {} : { body }),
      });
      return { route: `${route.method} ${route.path}`, response };
    }),
  );
}

/** Every route answered `status` with Format A `code` (and, for 401, `WWW-Authenticate: Bearer`). */
function expectRefusedEverywhere(
  answers: Awaited<ReturnType<typeof everyRoute>>,
  status: number,
  code: string,
): void {
  const wrong = answers
    .filter(
      ({ response }) =>
        response.status !== status ||
        errorCode(response) !== code ||
        (status === 401 && response.headers.get("www-authenticate") !== "Bearer") ||
        !response.headers.get("x-request-id"),
    )
    .map(({ route, response }) => `${route} → ${response.status} ${response.text.slice(0, 120)}`);
  expect(wrong).toEqual([]);
}

describe.runIf(hasIdentity)("security of every management route", () => {
  beforeAll(async () => {
    tenant = await seedManagedTenant();
    chatKey = tenant.apiKey;
    const revoked = await seedKey(tenant.organizationId, "manage");
    await revokeApiKey(domain(), { organizationId: tenant.organizationId, keyId: revoked.keyId });
    revokedManageKey = revoked.key;
    const signedIn = await signIn(
      { endpoint: identity?.endpoint ?? "", clientId: identity?.clientId ?? "" },
      tenant.admin.email,
      tenant.admin.password,
    );
    if (signedIn.kind !== "signed_in") throw new Error("the admin could not sign in");
    idToken = signedIn.tokens.idToken;
    if (isLocal && identity) {
      // A second app client of the same pool: its tokens are genuine, but not the console's.
      const other = await cognitoClient().send(
        new CreateUserPoolClientCommand({
          UserPoolId: identity.userPoolId,
          ClientName: `other-${randomUUID().slice(0, 8)}`,
          ExplicitAuthFlows: ["ALLOW_USER_PASSWORD_AUTH"],
        }),
      );
      const viaOther = await signIn(
        { endpoint: identity.endpoint, clientId: other.UserPoolClient?.ClientId ?? "" },
        tenant.admin.email,
        tenant.admin.password,
      );
      if (viaOther.kind !== "signed_in") throw new Error("could not sign in through the other client");
      otherClientToken = viaOther.tokens.accessToken;
    }
  });

  it("answers a genuine admin token on the same routes with something other than 401 (the suite's control)", async () => {
    const answers = await everyRoute(tenant.admin.token);
    expect(answers.filter(({ response }) => response.status === 401).map(({ route }) => route)).toEqual([]);
  });

  it("answers unknown paths and methods under /manage/ in the management format too", async () => {
    for (const as of [undefined, tenant.admin.token, tenant.manageKey]) {
      const unknown = await manage("GET", "/manage/no-such-thing", as === undefined ? {} : { as });
      expect([unknown.status, unknown.body]).toEqual([
        404,
        { error: { code: "route_not_found", message: "Not Found", details: {} } },
      ]);
      const method = await manage("DELETE", "/manage/me", as === undefined ? {} : { as });
      expect([method.status, errorCode(method), method.headers.get("allow")]).toEqual([
        405,
        "method_not_allowed",
        "GET",
      ]);
    }
    // The public API keeps its own format.
    const publicMiss = await manage("GET", "/api/no-such-thing");
    expect([publicMiss.status, publicMiss.body]).toEqual([404, { detail: "Not Found" }]);
  });

  it("refuses a request without credentials: 401 unauthenticated, WWW-Authenticate: Bearer", async () => {
    expectRefusedEverywhere(await everyRoute(undefined), 401, "unauthenticated");
  });

  it("refuses another scheme and garbage bearer tokens", async () => {
    expectRefusedEverywhere(
      await everyRoute(undefined, { authorization: `Basic ${btoa("a:b")}` }),
      401,
      "unauthenticated",
    );
    expectRefusedEverywhere(await everyRoute("not-a-token"), 401, "unauthenticated");
    expectRefusedEverywhere(await everyRoute("a.b.c"), 401, "unauthenticated");
  });

  it("refuses an id token (only access tokens manage)", async () => {
    expectRefusedEverywhere(await everyRoute(idToken), 401, "unauthenticated");
  });

  it("refuses unknown and revoked API keys", async () => {
    expectRefusedEverywhere(await everyRoute(generateApiKey()), 401, "unauthenticated");
    expectRefusedEverywhere(await everyRoute(revokedManageKey), 401, "unauthenticated");
  });

  it("refuses a key of scope chat with 403 forbidden (it is valid, but cannot manage)", async () => {
    const answers = await everyRoute(chatKey);
    expectRefusedEverywhere(answers, 403, "forbidden");
    // A valid key: its answers carry its bucket, as on the public API.
    expect(answers.every(({ response }) => response.headers.get("x-ratelimit-limit") === "100")).toBe(true);
  });

  describe.runIf(isLocal)("tokens a real pool does not hand out (signed with the local pool's key)", () => {
    it("refuses an expired token", async () => {
      const claims = { ...accessClaims(tenant.admin.userId), exp: Math.floor(Date.now() / 1000) - 60 };
      expectRefusedEverywhere(await everyRoute(mintToken(claims)), 401, "unauthenticated");
    });

    it("refuses a token without an expiry, or issued in the future", async () => {
      const { exp: _exp, ...noExpiry } = accessClaims(tenant.admin.userId);
      expectRefusedEverywhere(await everyRoute(mintToken(noExpiry)), 401, "unauthenticated");
      const yearAhead = Math.floor(Date.now() / 1000) + 365 * 86_400;
      const future = { ...accessClaims(tenant.admin.userId), iat: yearAhead, exp: yearAhead + 3600 };
      expectRefusedEverywhere(await everyRoute(mintToken(future)), 401, "unauthenticated");
    });

    it("refuses a token of another app client of the same pool", async () => {
      expectRefusedEverywhere(await everyRoute(otherClientToken), 401, "unauthenticated");
      const minted = mintToken({ ...accessClaims(tenant.admin.userId), client_id: "someoneelsesclient" });
      expectRefusedEverywhere(await everyRoute(minted), 401, "unauthenticated");
    });

    it("refuses a token of another issuer, even signed with the same key", async () => {
      const claims = { ...accessClaims(tenant.admin.userId), iss: `${identity?.endpoint}/local_other` };
      expectRefusedEverywhere(await everyRoute(mintToken(claims)), 401, "unauthenticated");
    });

    it("refuses a tampered token (claims changed after signing)", async () => {
      const [head, , signature] = tenant.viewer.token.split(".");
      const payload = JSON.parse(
        Buffer.from(tenant.viewer.token.split(".")[1] ?? "", "base64url").toString(),
      );
      const forged = Buffer.from(JSON.stringify({ ...payload, sub: tenant.admin.userId })).toString(
        "base64url",
      );
      expectRefusedEverywhere(await everyRoute(`${head}.${forged}.${signature}`), 401, "unauthenticated");
    });

    it("refuses `alg: none` (unsigned) tokens", async () => {
      const head = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT", kid: "CognitoLocal" })).toString(
        "base64url",
      );
      const body = Buffer.from(JSON.stringify(accessClaims(tenant.admin.userId))).toString("base64url");
      expectRefusedEverywhere(await everyRoute(`${head}.${body}.`), 401, "unauthenticated");
      expectRefusedEverywhere(await everyRoute(`${head}.${body}`), 401, "unauthenticated");
    });

    it("refuses a token whose key id the pool does not publish", async () => {
      const minted = mintToken(accessClaims(tenant.admin.userId), { kid: "someone-else" });
      expectRefusedEverywhere(await everyRoute(minted), 401, "unauthenticated");
    });

    it("accepts a correctly minted token (the minting is sound, so the refusals above are the checks)", async () => {
      const answers = await everyRoute(mintToken(accessClaims(tenant.admin.userId)));
      expect(answers.filter(({ response }) => response.status === 401).map(({ route }) => route)).toEqual([]);
    });
  });
});
