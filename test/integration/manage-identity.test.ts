/**
 * People sign in exactly as the console does (lib/sign-in.ts: USER_PASSWORD_AUTH against the user
 * pool, cognito-local here): invited by e-mail, a first sign-in that must choose a new password,
 * refresh, "forgot password", and the demo users `npm start` seeds. The local mailbox stands in for
 * the e-mails Cognito sends.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import {
  CognitoError,
  completeNewPassword,
  confirmForgotPassword,
  forgotPassword,
  refresh,
  revokeRefreshToken,
  signIn,
} from "#lib/sign-in";
import { environment, isLocal } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  mailbox,
  manage,
  newEmail,
  newPassword,
  type Person,
  seedOperator,
  signInConfig,
} from "#test/support/management";

interface Me {
  principal: { type: string; user_id: string; email: string | null };
  operator: boolean;
  memberships: { organization_id: string; organization_name: string; role: string }[];
}

let operator: Person;

/** Signs in with the invitation's temporary password and chooses a new one, as the console does. */
async function acceptInvitation(email: string): Promise<{ token: string; password: string }> {
  const invitation = await mailbox.latest(email, "invitation");
  const first = await signIn(signInConfig(), email, invitation.code);
  expect(first.kind).toBe("new_password_required");
  if (first.kind !== "new_password_required") throw new Error("no challenge");
  const password = newPassword();
  const tokens = await completeNewPassword(signInConfig(), {
    session: first.session,
    username: first.username,
    newPassword: password,
  });
  return { token: tokens.accessToken, password };
}

describe.runIf(hasIdentity && isLocal)("people and sign-in", () => {
  beforeAll(async () => {
    operator = await seedOperator();
  });

  it("invites an organization's first admin by e-mail; they sign in, choose a password, and manage it", async () => {
    // Act: an operator creates the organization with its first admin.
    const email = newEmail("first-admin");
    const created = await manage<{
      organization: { organization_id: string; name: string };
      admin: { user_id: string; role: string };
      invitation: string;
    }>("POST", "/manage/organizations", {
      as: operator.token,
      body: { name: "Invited Shop", admin_email: email },
    });
    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ admin: { role: "admin" }, invitation: "sent" });
    const { token } = await acceptInvitation(email);
    const me = await manage<Me>("GET", "/manage/me", { as: token });
    expect(me.body).toMatchObject({
      principal: { type: "user", user_id: created.body.admin.user_id, email },
      operator: false,
      memberships: [
        {
          organization_id: created.body.organization.organization_id,
          organization_name: "Invited Shop",
          role: "admin",
        },
      ],
    });
    const renamed = await manage("PATCH", "/manage/organization", {
      as: token,
      body: { name: "Invited Shop B.V." },
    });
    expect(renamed.status).toBe(200);
  });

  it("lets an admin invite a viewer, who signs in and may read but not write", async () => {
    const adminEmail = newEmail("admin");
    const org = await manage<{ organization: { organization_id: string } }>("POST", "/manage/organizations", {
      as: operator.token,
      body: { name: "Viewer Shop", admin_email: adminEmail },
    });
    const admin = await acceptInvitation(adminEmail);
    const viewerEmail = newEmail("viewer");
    const invited = await manage<{ invitation: string; role: string }>("POST", "/manage/members", {
      as: admin.token,
      body: { email: viewerEmail, role: "viewer", display_name: "Vera Viewer" },
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ role: "viewer", invitation: "sent", display_name: "Vera Viewer" });
    const viewer = await acceptInvitation(viewerEmail);
    const read = await manage("GET", "/manage/members", { as: viewer.token });
    expect(read.status).toBe(200);
    const write = await manage("POST", "/manage/chatbots", { as: viewer.token, body: { name: "Nope" } });
    expect([write.status, errorCode(write)]).toEqual([403, "forbidden"]);
    expect(org.body.organization.organization_id).toBeTruthy();
  });

  it("adds someone who has an account already without a new invitation (one person, several organizations)", async () => {
    const email = newEmail("returning");
    await manage("POST", "/manage/organizations", {
      as: operator.token,
      body: { name: "First", admin_email: email },
    });
    const { token } = await acceptInvitation(email);
    const again = await manage<{ invitation: string }>("POST", "/manage/organizations", {
      as: operator.token,
      body: { name: "Second", admin_email: email.toUpperCase() },
    });
    expect(again.body.invitation).toBe("existing_account");
    expect(mailbox.count(email, "invitation")).toBe(1);
    const me = await manage<Me>("GET", "/manage/me", { as: token });
    expect(me.body.memberships.map((m) => m.organization_name).sort()).toEqual(["First", "Second"]);
  });

  it("resets a forgotten password with the e-mailed code; the old password stops working", async () => {
    const email = newEmail("forgetful");
    await manage("POST", "/manage/organizations", {
      as: operator.token,
      body: { name: "Forgetful", admin_email: email },
    });
    const { password: old } = await acceptInvitation(email);
    await forgotPassword(signInConfig(), email);
    const reset = await mailbox.latest(email, "password_reset");
    const fresh = newPassword();
    await confirmForgotPassword(signInConfig(), { email, code: reset.code, newPassword: fresh });
    const signedIn = await signIn(signInConfig(), email, fresh);
    expect(signedIn.kind).toBe("signed_in");
    await expect(signIn(signInConfig(), email, old)).rejects.toBeInstanceOf(CognitoError);
    await expect(
      confirmForgotPassword(signInConfig(), { email, code: "000000", newPassword: newPassword() }),
    ).rejects.toMatchObject({ name: "CodeMismatchException" });
  });

  it("renews an access token with the refresh token, and the new one manages too", async () => {
    const result = await signIn(signInConfig(), operator.email, operator.password);
    if (result.kind !== "signed_in" || !result.tokens.refreshToken) throw new Error("no refresh token");
    const renewed = await refresh(signInConfig(), result.tokens.refreshToken);
    const me = await manage<Me>("GET", "/manage/me", { as: renewed.accessToken });
    expect(me.body).toMatchObject({ operator: true, principal: { user_id: operator.userId } });
  });

  it("signs out by revoking the refresh token, which then renews nothing", async () => {
    const result = await signIn(signInConfig(), operator.email, operator.password);
    if (result.kind !== "signed_in" || !result.tokens.refreshToken) throw new Error("no refresh token");
    await revokeRefreshToken(signInConfig(), result.tokens.refreshToken);
    await expect(refresh(signInConfig(), result.tokens.refreshToken)).rejects.toMatchObject({
      name: "NotAuthorizedException",
    });
  });

  it("seeds the demo's operator, admin and viewer, who sign in with the printed passwords", async () => {
    if (!environment.demoFile) throw new Error("no demo file");
    const demo = JSON.parse(readFileSync(environment.demoFile, "utf8")) as Record<string, string>;
    const standing = async (email: string | undefined, password: string | undefined) => {
      const result = await signIn(signInConfig(), email ?? "", password ?? "");
      if (result.kind !== "signed_in") throw new Error(`${email} cannot sign in`);
      return (await manage<Me>("GET", "/manage/me", { as: result.tokens.accessToken })).body;
    };
    expect(await standing(demo.operatorEmail, demo.operatorPassword)).toMatchObject({ operator: true });
    expect(await standing(demo.consoleEmail, demo.consolePassword)).toMatchObject({
      operator: false,
      memberships: [{ organization_id: demo.organizationId, role: "admin" }],
    });
    expect(await standing(demo.viewerEmail, demo.viewerPassword)).toMatchObject({
      memberships: [{ organization_id: demo.organizationId, role: "viewer" }],
    });
  });
});
