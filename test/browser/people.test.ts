/**
 * People in Chromium: an admin invites someone, changes their role and removes them (Members); an
 * operator creates an organization, switches its subscription off and on and sets its rate limit
 * (Organizations), each change still there after a reload; and a viewer, on every page, finds
 * nothing that writes: no write button, no editable field outside the conversation filters.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkPage,
  demo,
  go,
  hasChromium,
  launch,
  openConsole,
  screenshot,
  settled,
  signIn,
  writeControls,
} from "#test/support/browser";
import { api, isLocal } from "#test/support/harness";

let browser: Browser;
const stamp = Date.now().toString(36);

describe.runIf(isLocal && hasChromium)("members, organizations and what a viewer sees", () => {
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("invites a member, changes their role and removes them", async () => {
    const admin = await openConsole(browser);
    const page = admin.page;
    await signIn(page, demo().consoleEmail, demo().consolePassword);
    await go(page, "Members");
    const email = `new-${stamp}@example.com`;
    await page.getByLabel("E-mail address").fill(email);
    await page.getByLabel("Name (optional)").fill("Nina New");
    await page.getByRole("combobox", { name: "Role", exact: true }).selectOption("viewer");
    await page.getByRole("button", { name: "Invite", exact: true }).click();
    await page.getByRole("status").getByText(`${email} is invited`).waitFor();
    const role = page.getByRole("combobox", { name: `Role of ${email}` });
    await role.waitFor();
    expect(await role.inputValue()).toBe("viewer");
    await checkPage(admin, "members");
    await screenshot(page, "members");

    await role.selectOption("admin");
    await settled(page);
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Members" }).waitFor();
    await expect
      .poll(() => page.getByRole("combobox", { name: `Role of ${email}` }).inputValue())
      .toBe("admin");

    // The button says "Remove"; the e-mail address is for screen readers only, not repeated on screen.
    const remove = page.getByRole("button", { name: `Remove ${email}` });
    const hidden = (await remove.locator(".visually-hidden").allTextContents()).join("");
    expect(hidden.trim()).toBe(email);
    expect((await remove.textContent())?.replace(hidden, "").trim()).toBe("Remove");
    expect((await remove.boundingBox())?.width ?? 0).toBeLessThan(120);
    await remove.click();
    await page.getByRole("dialog").getByRole("button", { name: "Remove", exact: true }).click();
    await expect.poll(() => page.getByRole("cell", { name: email }).count()).toBe(0);
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Members" }).waitFor();
    await settled(page);
    expect(await page.getByRole("cell", { name: demo().viewerEmail, exact: true }).count()).toBe(1);
    expect(await page.getByRole("cell", { name: email, exact: true }).count()).toBe(0);
    await admin.context.close();
  });

  it("lets an operator create an organization, switch its subscription and set its rate limit", async () => {
    const operator = await openConsole(browser);
    const page = operator.page;
    await page.getByLabel("E-mail address").fill(demo().operatorEmail);
    await page.getByLabel("Password").fill(demo().operatorPassword);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Organizations" }).click();
    await page.getByRole("heading", { level: 1, name: "Organizations" }).waitFor();
    await settled(page);

    const name = `Bike Shop ${stamp}`;
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByLabel("Rate limit (per minute)").fill("42");
    await page.getByRole("button", { name: "Create", exact: true }).click();
    await page.getByRole("status").getByText(`${name} is created.`).waitFor();
    const limit = page.getByLabel(`Rate limit of ${name}, requests per minute`);
    await limit.waitFor();
    expect(await limit.inputValue()).toBe("42");
    const subscription = page.getByRole("switch", { name: new RegExp(`subscription of ${name}`) });
    expect(await subscription.isChecked()).toBe(true);
    await checkPage(operator, "organizations");
    await screenshot(page, "organizations");

    await subscription.click();
    await expect.poll(() => subscription.isChecked()).toBe(false);
    await limit.fill("77");
    await page.getByRole("button", { name: `Save rate limit of ${name}` }).click();
    await settled(page);
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Organizations" }).waitFor();
    await settled(page);
    await expect
      .poll(() => page.getByLabel(`Rate limit of ${name}, requests per minute`).inputValue())
      .toBe("77");
    expect(await page.getByRole("switch", { name: new RegExp(`subscription of ${name}`) }).isChecked()).toBe(
      false,
    );
    await page.getByRole("switch", { name: new RegExp(`subscription of ${name}`) }).click();
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Organizations" }).waitFor();
    await settled(page);
    await expect
      .poll(() => page.getByRole("switch", { name: new RegExp(`subscription of ${name}`) }).isChecked())
      .toBe(true);
    await operator.context.close();
  });

  it("shows a viewer no write control on any page", async () => {
    const started = await api.startConversation(demo().apiKey, { chatbot_id: demo().chatbotId });
    const conversationId = started.body.conversation_id;
    await api.sendMessage(demo().apiKey, { conversation_id: conversationId, message: "Hello" });

    const viewer = await openConsole(browser);
    const page = viewer.page;
    await signIn(page, demo().viewerEmail, demo().viewerPassword);
    const seen: Record<string, string[]> = {};
    const visit = async (name: string, path: string, heading: string | RegExp) => {
      await page.goto(`${demo().consoleUrl}${path}`);
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
      seen[name] = await writeControls(page);
      await checkPage(viewer, `${name} (viewer)`);
    };
    await visit("overview", "/", "Overview");
    await visit("settings-api", "/settings/api", "Settings → API");
    await visit("chatbots", "/chatbots", "Chatbots");
    await visit("new-chatbot", "/chatbots/new", "New chatbot");
    await visit("chatbot-settings", `/chatbots/${demo().chatbotId}`, "Demo Shop assistant");
    await visit("chatbot-knowledge", `/chatbots/${demo().chatbotId}/knowledge`, "Demo Shop assistant");
    await visit("chatbot-try", `/chatbots/${demo().chatbotId}/try`, "Demo Shop assistant");
    await visit("tools", "/tools", "Tools");
    await visit("conversations", "/conversations", "Conversations");
    await visit("transcript", `/conversations/${conversationId}`, "Conversation");
    await visit("inbox", `/inbox?conversation=${conversationId}`, "Inbox");
    await visit("contacts", "/contacts", "Contacts");
    await visit("members", "/members", "Members");
    await visit("organizations", "/organizations", "Organizations");
    expect(seen).toEqual(Object.fromEntries(Object.keys(seen).map((name) => [name, []])));
    // The pages were read, not empty: the viewer sees the demo chatbot and the people.
    await page.goto(`${demo().consoleUrl}/members`);
    await page.getByText(demo().consoleEmail).waitFor();
    await screenshot(page, "members-viewer");
    await viewer.context.close();
  });
});
