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

/** What sticks out past the window's right edge: the innermost such elements, as tag.class. */
const overflowing = (page: import("playwright-core").Page): Promise<string[]> =>
  page.evaluate<string[]>(`(() => {
    const out = [...document.querySelectorAll("body *")].filter((element) => {
      if (element.parentElement && element.parentElement.closest(".overflow-auto, pre")) return false;
      return element.getBoundingClientRect().right > window.innerWidth + 1;
    });
    return out
      .filter((element) => !out.some((other) => other !== element && element.contains(other)))
      .slice(0, 5)
      .map((element) => element.tagName.toLowerCase() + (element.className ? "." + String(element.className).split(" ").join(".") : "") + " " + Math.round(element.getBoundingClientRect().right));
  })()`);

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
    const overflow: Record<string, string[]> = {};
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
      ["inbox", `/conversations/inbox?conversation=${conversationId}`, "Inbox"],
      ["members", "/members", "Members"],
    ];
    for (const [name, path, heading] of pages) {
      await page.goto(`${demo().consoleUrl}${path}`);
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
      await settled(page);
      if ((await horizontalOverflow(page)) > 0) overflow[name] = await overflowing(page);
      await checkPage(narrow, `${name} at 375 px`);
      if (name === "overview" || name === "transcript" || name === "inbox")
        await screenshot(page, `phone-${name}`);
    }
    expect(overflow).toEqual({});
    // The navigation is on the page and usable: follow it to another page.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Conversations" }).click();
    await page.getByRole("heading", { level: 1, name: "Conversations" }).waitFor();
  });
});
