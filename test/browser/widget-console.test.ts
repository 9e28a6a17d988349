/**
 * Chatbot → Widget in the console, walked as a new business walks it, from sign-in to the widget
 * working on its own page: a new chatbot, the widget turned on for the page's origin, the appearance
 * changed and seen at once in the live preview (the real widget), the snippet copied, and that very
 * snippet's widget answering on the page. Then the identity secret, shown once and rotated.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsolePage,
  checkPage,
  demo,
  go,
  hasChromium,
  launch,
  openConsole,
  screenshot,
  settled,
  signIn,
} from "#test/support/browser";
import { call, isLocal } from "#test/support/harness";
import { identityToken } from "#test/support/widget";
import { recordPageEvents, startWidgetPages, violations, type WidgetPages } from "#test/support/widget-page";

let browser: Browser;
let admin: ConsolePage;
let page: Page;
let pages: WidgetPages;
let chatbotId = "";
let identitySecret = "";
const botName = `Website helper ${Date.now().toString(36)}`;

describe.runIf(isLocal && hasChromium)("Chatbot → Widget", () => {
  beforeAll(async () => {
    browser = await launch();
    pages = await startWidgetPages(`${demo().consoleUrl}/widget.js`);
    admin = await openConsole(browser);
    page = admin.page;
  });
  afterAll(async () => {
    await browser?.close();
    await pages?.close();
  });

  it("takes a new business from sign-in to a working widget on its own page", async () => {
    // 1. Sign in.
    await signIn(page, demo().consoleEmail, demo().consolePassword);
    // 2. A new chatbot.
    await go(page, "Chatbots");
    await page.getByRole("button", { name: "New chatbot" }).click();
    await page.getByLabel("Name").fill(botName);
    await page.getByLabel("Welcome message").fill("Hello from the website!");
    await page.getByRole("button", { name: "Create chatbot" }).click();
    await page.getByRole("heading", { level: 1, name: botName }).waitFor();
    chatbotId = new URL(page.url()).pathname.split("/")[2] ?? "";
    // 3. Its Widget tab: the live preview shows the real widget.
    await page.getByRole("navigation", { name: "Chatbot" }).getByRole("link", { name: "Widget" }).click();
    await page.getByRole("heading", { level: 2, name: "Website widget" }).waitFor();
    await settled(page);
    const preview = page.locator("#widget-preview #chatbot-widget");
    await expect.poll(() => preview.locator(".panel h2").textContent()).toBe(botName);
    await expect.poll(() => preview.locator(".log").textContent()).toContain("Hello from the website!");
    // The appearance changes the preview as it is typed.
    await page.getByLabel("Title").fill("Ask the shop");
    await expect.poll(() => preview.locator(".panel h2").textContent()).toBe("Ask the shop");
    await page.getByLabel("Starter questions (up to 4, one per line)").fill("Is it in stock?");
    await expect.poll(() => preview.getByRole("button", { name: "Is it in stock?" }).count()).toBe(1);
    // 4. On, for the business's page; saved.
    await page.getByLabel("Visitors can chat on your website").check();
    await page.getByLabel("Allowed pages (origins, one per line)").fill(pages.origin);
    await page.getByLabel("Daily message budget").fill("750");
    await page.getByRole("button", { name: "Save widget" }).click();
    await page.getByText("The widget's settings are saved.").waitFor();
    await checkPage(admin, "chatbot widget");
    await screenshot(page, "console-widget");
    // 5. The snippet, copied.
    await page.getByRole("button", { name: "Copy snippet" }).click();
    const snippet = await page.evaluate<string>("navigator.clipboard.readText()");
    expect(snippet).toBe(
      `<script src="${demo().consoleUrl}/widget.js" data-chatbot-id="${chatbotId}" async></script>`,
    );

    // 6. That snippet on the business's own page: the widget answers there.
    const context = await browser.newContext();
    await recordPageEvents(context);
    const shop = await context.newPage();
    await shop.goto(pages.url(chatbotId));
    await shop.locator("#chatbot-widget .launcher").click();
    await shop.getByRole("dialog").waitFor();
    expect(await shop.getByRole("dialog").getByRole("heading").textContent()).toBe("Ask the shop");
    await shop.getByRole("button", { name: "Is it in stock?" }).click();
    await expect.poll(() => shop.locator("#chatbot-widget .msg.assistant").count()).toBe(2);
    expect(await violations(shop)).toEqual([]);
    await context.close();
  });

  it("shows the identity secret once, then rotates it", async () => {
    await page.getByRole("button", { name: "Make a secret" }).click();
    const secret = page.getByLabel("The new identity secret");
    await secret.waitFor();
    const first = await secret.inputValue();
    expect(first).toMatch(/^cis_/);
    await page.getByText(/The current secret was made/).waitFor();
    await page.getByRole("button", { name: "Rotate secret" }).click();
    await expect.poll(() => secret.inputValue()).not.toBe(first);
    identitySecret = await secret.inputValue();
    await page.getByText(/The previous one still verifies until/).waitFor();
    await page.getByText("ChatbotWidget.identify(identity)", { exact: false }).waitFor();
    await checkPage(admin, "chatbot widget, identity secret");
    // Reading the page again shows no secret.
    await page.reload();
    await page.getByRole("heading", { level: 2, name: "Identity secret" }).waitFor();
    await settled(page);
    expect(await page.getByLabel("The new identity secret").count()).toBe(0);
    // The daily budget saved with the settings is what the page reads again.
    expect(await page.getByLabel("Daily message budget").inputValue()).toBe("750");
  });

  it("names the widget's identified visitor, and the channel, in Conversations and the Inbox", async () => {
    await page.getByLabel("Identity verification").selectOption("optional");
    await page.getByRole("button", { name: "Save widget" }).click();
    await page.getByText("The widget's settings are saved.").waitFor();
    // A signed-in customer of the shop chats in the widget and asks for a person.
    const identity = await identityToken(identitySecret, {
      sub: `customer-${Date.now()}`,
      name: "Ann Visser",
      email: "ann.visser@example.nl",
    });
    const session = await call<{ token: string }>("POST", "/api/widget/session", {
      authorization: null,
      headers: { origin: pages.origin },
      body: { chatbot_id: chatbotId, identity },
    });
    expect(session.status).toBe(200);
    const started = await call<{ conversation_id: string }>("POST", "/api/conversation", {
      key: session.body.token,
      body: { chatbot_id: chatbotId },
    });
    await call("POST", "/api/message", {
      key: session.body.token,
      body: { conversation_id: started.body.conversation_id, message: "Is it in stock?" },
    });
    await call("POST", `/api/conversation/${started.body.conversation_id}/handoff`, {
      key: session.body.token,
    });

    await go(page, "Conversations");
    const row = page.getByRole("row").filter({ hasText: "Ann Visser" });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.getByText("Website", { exact: true }).count()).toBe(1);
    await go(page, /^Inbox/, "Inbox");
    const waiting = page.getByRole("link").filter({ hasText: "Ann Visser" });
    await expect.poll(() => waiting.count()).toBe(1);
    await waiting.click();
    await page.getByRole("heading", { level: 2, name: "Ann Visser" }).waitFor();
    await page.getByText("Website widget", { exact: true }).waitFor();
    await checkPage(admin, "Inbox with a widget conversation");
  });
});
