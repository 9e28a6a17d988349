/**
 * The console at 375 px (a small phone): every page fits the width (nothing to scroll sideways),
 * passes the same accessibility checks, and its navigation is still reachable.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkPage,
  demo,
  hasChromium,
  horizontalOverflow,
  launch,
  openConsole,
  phone,
  screenshot,
  settled,
  signIn,
} from "#test/support/browser";
import { api, isLocal } from "#test/support/harness";

let browser: Browser;

describe.runIf(isLocal && hasChromium)("the console at 375 px", () => {
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("fits every page into the width, with its navigation reachable", async () => {
    const started = await api.startConversation(demo().apiKey, { chatbot_id: demo().chatbotId });
    const conversationId = started.body.conversation_id;
    await api.sendMessage(demo().apiKey, {
      conversation_id: conversationId,
      message: "How long does shipping take?",
    });
    const narrow = await openConsole(browser, phone);
    const page = narrow.page;
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect(await horizontalOverflow(page), "sign-in").toBeLessThanOrEqual(0);
    await screenshot(page, "phone-sign-in");
    await signIn(page, demo().consoleEmail, demo().consolePassword);
    const overflow: Record<string, number> = {};
    const pages: [string, string, string | RegExp][] = [
      ["overview", "/", "Overview"],
      ["settings-api", "/settings/api", "Settings → API"],
      ["chatbots", "/chatbots", "Chatbots"],
      ["chatbot-settings", `/chatbots/${demo().chatbotId}`, "Demo Shop assistant"],
      ["chatbot-knowledge", `/chatbots/${demo().chatbotId}/knowledge`, "Demo Shop assistant"],
      ["chatbot-try", `/chatbots/${demo().chatbotId}/try`, "Demo Shop assistant"],
      ["tools", "/tools", "Tools"],
      ["conversations", "/conversations", "Conversations"],
      ["transcript", `/conversations/${conversationId}`, "Conversation"],
      ["members", "/members", "Members"],
    ];
    for (const [name, path, heading] of pages) {
      await page.goto(`${demo().consoleUrl}${path}`);
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
      await settled(page);
      overflow[name] = Math.max(0, await horizontalOverflow(page));
      await checkPage(narrow, `${name} at 375 px`);
      if (name === "overview" || name === "transcript") await screenshot(page, `phone-${name}`);
    }
    expect(overflow).toEqual(Object.fromEntries(pages.map(([name]) => [name, 0])));
    // The navigation is on the page and usable: follow it to another page.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Conversations" }).click();
    await page.getByRole("heading", { level: 1, name: "Conversations" }).waitFor();
  });
});
