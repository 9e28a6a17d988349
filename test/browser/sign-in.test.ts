/**
 * Signing in to the console in Chromium, as people do: the printed admin, the keyboard alone, an
 * invited person's first sign-in (a new password of their own), the authenticator app's code,
 * "forgot password" with the code from the mailbox, signing out, and the organization switcher for
 * people in several.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finishAuthenticator, startAuthenticator, usesAuthenticator } from "#lib/sign-in";
import {
  checkPage,
  demo,
  focusedText,
  go,
  hasChromium,
  launch,
  openConsole,
  screenshot,
  signIn,
} from "#test/support/browser";
import { isLocal } from "#test/support/harness";
import {
  addMembership,
  mailbox,
  newEmail,
  newPassword,
  seedManagedTenant,
  seedPerson,
  signInConfig,
} from "#test/support/management";
import { totp } from "#test/support/totp";

let browser: Browser;

describe.runIf(isLocal && hasChromium)("signing in to the console", () => {
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("signs the printed admin in to the overview, keeps them signed in on reload, and signs them out", async () => {
    const console = await openConsole(browser);
    const { page } = console;
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await checkPage(console, "sign in");
    await screenshot(page, "sign-in");

    await signIn(page, demo().consoleEmail, demo().consolePassword);
    await expect.poll(() => page.getByText(demo().consoleEmail).count()).toBe(1);
    await page.reload();
    await page.getByRole("heading", { name: "Overview" }).waitFor();

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.goto(`${demo().consoleUrl}/chatbots`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    await console.context.close();
  });

  it("refuses a wrong password with a message, and signs in with the keyboard alone", async () => {
    const console = await openConsole(browser);
    const { page } = console;
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.getByLabel("E-mail address").fill(demo().consoleEmail);
    await page.getByLabel("Password").fill("Not-the-password-1!");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toBe("That e-mail address and password do not match an account.");

    await page.getByLabel("E-mail address").fill("");
    await page.getByLabel("Password").fill("");
    await page.getByLabel("E-mail address").focus();
    await page.keyboard.type(demo().consoleEmail);
    await page.keyboard.press("Tab");
    await page.keyboard.type(demo().consolePassword);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    // The page's heading takes the focus when the page opens, so screen readers announce it.
    await expect.poll(() => focusedText(page)).toBe("Overview");
    // From the top of the page the skip link comes first, then the sidebar: all reachable with Tab.
    // Blurring is not enough to start at the top: Chromium goes on from where the focus last was
    // (the heading) unless that node was re-rendered. A sentinel at the very start of the body,
    // focused by script, is a fixed starting point.
    await page.evaluate(`(() => {
      const start = document.createElement("span");
      start.tabIndex = -1;
      document.body.prepend(start);
      start.focus();
    })()`);
    await page.keyboard.press("Tab");
    expect(await focusedText(page)).toBe("Skip to content");
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.closest('.sidebar') !== null")).toBe(true);
    await console.context.close();
  });

  it("lets an invited person choose their own password at the first sign-in", async () => {
    const admin = await openConsole(browser);
    await signIn(admin.page, demo().consoleEmail, demo().consolePassword);
    await go(admin.page, "Members");
    const email = newEmail("invited");
    await admin.page.getByLabel("E-mail address").fill(email);
    await admin.page.getByLabel("Role", { exact: true }).selectOption("viewer");
    await admin.page.getByRole("button", { name: "Invite", exact: true }).click();
    await admin.page.getByText(`${email} is invited`).waitFor();
    await expect.poll(() => admin.page.getByRole("cell", { name: email, exact: true }).count()).toBe(1);
    await checkPage(admin, "members");
    await screenshot(admin.page, "members-invited");
    await admin.context.close();

    const invitation = await mailbox.latest(email, "invitation");
    const invited = await openConsole(browser);
    const { page } = invited;
    await page.getByLabel("E-mail address").fill(email);
    await page.getByLabel("Password").fill(invitation.code);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Choose a new password" }).waitFor();
    await checkPage(invited, "new password");
    await screenshot(page, "first-sign-in-new-password");
    const password = newPassword();
    await page.getByLabel("New password", { exact: true }).fill(password);
    await page.getByLabel("New password again").fill(password);
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await invited.context.close();
  });

  it("asks a person who added an authenticator app for its code, refuses a wrong one, then signs them in", async () => {
    const person = await seedPerson("authenticator");
    await addMembership(person, demo().organizationId, "viewer");
    const config = signInConfig();
    const { secret, uri } = await startAuthenticator(config, person.token, {
      email: person.email,
      issuer: "Chatbot console",
    });
    expect(uri).toBe(
      `otpauth://totp/${encodeURIComponent(`Chatbot console:${person.email}`)}?secret=${secret}&issuer=Chatbot%20console`,
    );
    expect(await usesAuthenticator(config, person.token)).toBe(false);
    await finishAuthenticator(config, person.token, totp(secret));
    expect(await usesAuthenticator(config, person.token)).toBe(true);

    const console = await openConsole(browser);
    const { page } = console;
    await page.getByLabel("E-mail address").fill(person.email);
    await page.getByLabel("Password").fill(person.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Authenticator code" }).waitFor();
    await checkPage(console, "authenticator code");
    // A code of ten minutes ago is outside every window.
    await page.getByLabel("Code").fill(totp(secret, Date.now() - 600_000));
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toBe("That code is not right. Enter the code your authenticator app shows now.");
    await page.getByLabel("Code").fill(totp(secret));
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await console.context.close();
  });

  it("resets a forgotten password with the e-mailed code", async () => {
    const person = await seedPerson("forgetful");
    await addMembership(person, demo().organizationId, "viewer");
    const console = await openConsole(browser);
    const { page } = console;
    await page.getByRole("link", { name: "Forgot your password?" }).click();
    await page.getByRole("heading", { name: "Reset your password" }).waitFor();
    await checkPage(console, "forgot password");
    await screenshot(page, "forgot-password");
    await page.getByLabel("E-mail address").fill(person.email);
    await page.getByRole("button", { name: "Send the code" }).click();
    await page.getByLabel("Code from the e-mail").waitFor();
    const code = (await mailbox.latest(person.email, "password_reset")).code;
    const password = newPassword();
    await page.getByLabel("Code from the e-mail").fill(code);
    await page.getByLabel("New password").fill(password);
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByText("Your password has been changed").waitFor();
    await signIn(page, person.email, password);
    await console.context.close();
  });

  it("switches between the organizations of a person in several", async () => {
    const tenant = await seedManagedTenant();
    await addMembership(tenant.admin, demo().organizationId, "viewer");
    const console = await openConsole(browser);
    const { page } = console;
    await signIn(page, tenant.admin.email, tenant.admin.password);
    const switcher = page.getByRole("combobox", { name: "Organization" });
    await expect.poll(() => switcher.locator("option").count()).toBe(2);

    await switcher.selectOption(demo().organizationId);
    await go(page, "Chatbots");
    await page.getByRole("link", { name: "Demo Shop assistant" }).waitFor();
    expect(await page.getByRole("button", { name: "New chatbot" }).count()).toBe(0);

    await switcher.selectOption(tenant.organizationId);
    await go(page, "Chatbots");
    await page.getByRole("link", { name: "Test assistant" }).waitFor();
    expect(await page.getByRole("button", { name: "New chatbot" }).count()).toBe(1);
    await console.context.close();
  });
});
