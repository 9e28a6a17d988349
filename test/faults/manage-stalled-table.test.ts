/**
 * The table stops answering while the management API is called: the management authorizer (a
 * person's membership, a manage key's bucket) or the route's own table call. Either way the answer
 * is a Format A 503 `service_unavailable` with Retry-After and X-Request-Id, long before the
 * gateway's own 30 s timeout, never the gateway's body; and it answers again once the table does.
 * Runs on a runtime of its own (test/support/fault-runtime.ts): a stall would stall everyone else.
 */
import { randomUUID } from "node:crypto";
import {
  AdminCreateUserCommand,
  AdminSetUserPasswordCommand,
  CognitoIdentityProviderClient,
} from "@aws-sdk/client-cognito-identity-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "#functions/domain/api-keys";
import { inviteMember } from "#functions/domain/people";
import { signIn } from "#lib/sign-in";
import type { TableCall } from "#test/support/dynamodb-tap";
import { type FaultResponse, type FaultRuntime, startFaultRuntime } from "#test/support/fault-runtime";

let runtime: FaultRuntime;
beforeAll(async () => {
  runtime = await startFaultRuntime();
}, 180_000);
afterAll(async () => {
  await runtime?.stop();
});

const GATEWAY_TIMEOUT_MS = 30_000;

function expectUnavailable(response: FaultResponse<unknown>): void {
  expect(response.body, response.text).toMatchObject({
    error: { code: "service_unavailable", message: "Service temporarily unavailable" },
  });
  expect(response.status).toBe(503);
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(response.headers.get("x-request-id")).toBeTruthy();
  expect(response.elapsedMs).toBeLessThan(GATEWAY_TIMEOUT_MS - 5_000);
}

/** An organization with an admin (signed in through the runtime's cognito-local) and a manage key. */
async function seedManaged(): Promise<{ organizationId: string; token: string; manageKey: string }> {
  const tenant = await runtime.seedTenant();
  const cognito = new CognitoIdentityProviderClient({
    endpoint: runtime.cognito.endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  const email = `admin-${randomUUID().slice(0, 8)}@faults.example`;
  const password = `Pw-${randomUUID()}`;
  const created = await cognito.send(
    new AdminCreateUserCommand({
      UserPoolId: runtime.cognito.userPoolId,
      Username: email,
      UserAttributes: [{ Name: "email", Value: email }],
      MessageAction: "SUPPRESS",
      TemporaryPassword: password,
    }),
  );
  await cognito.send(
    new AdminSetUserPasswordCommand({
      UserPoolId: runtime.cognito.userPoolId,
      Username: email,
      Password: password,
      Permanent: true,
    }),
  );
  const userId = created.User?.Attributes?.find((attribute) => attribute.Name === "sub")?.Value ?? "";
  await inviteMember(
    runtime.domain,
    { find: async () => ({ userId, email }), invite: async () => ({ userId, email, invited: false }) },
    { organizationId: tenant.organizationId, email, role: "admin" },
  );
  const signedIn = await signIn(
    { endpoint: runtime.cognito.endpoint, clientId: runtime.cognito.clientId },
    email,
    password,
  );
  if (signedIn.kind !== "signed_in") throw new Error("could not sign in");
  const key = await createApiKey(runtime.domain, {
    organizationId: tenant.organizationId,
    name: "manage",
    scope: "manage",
  });
  return { organizationId: tenant.organizationId, token: signedIn.tokens.accessToken, manageKey: key.apiKey };
}

describe("a stalled table under the management API", () => {
  it("answers a Format A 503 when the authorizer cannot reach the table, and answers again once it can", async () => {
    const managed = await seedManaged();
    const asPerson = {
      authorization: `Bearer ${managed.token}`,
      "x-organization-id": managed.organizationId,
    };
    const asKey = { authorization: `Bearer ${managed.manageKey}` };
    runtime.stallTable();
    let answers: FaultResponse<unknown>[];
    try {
      answers = await Promise.all([
        runtime.call("GET", "/manage/organization", { headers: asPerson }),
        runtime.call("GET", "/manage/me", { headers: asPerson }),
        runtime.call("GET", "/manage/chatbots", { headers: asKey }),
      ]);
    } finally {
      runtime.resumeTable();
    }
    for (const answer of answers) expectUnavailable(answer);
    const again = await runtime.call("GET", "/manage/organization", { headers: asPerson });
    expect(again.status, again.text).toBe(200);
  });

  it("answers a Format A 503 when the route's own table call stalls after the authorizer let it in", async () => {
    const managed = await seedManaged();
    const readsOrganization = (call: TableCall) =>
      call.operation === "GetItem" && call.body.includes(`"SK":{"S":"ORG"}`);
    const stalled = runtime.stallTableAt(readsOrganization);
    try {
      const answer = await runtime.call("GET", "/manage/organization", {
        headers: { authorization: `Bearer ${managed.token}`, "x-organization-id": managed.organizationId },
      });
      await stalled;
      expectUnavailable(answer);
    } finally {
      runtime.resumeTable();
    }
  });
});
