/**
 * Chatbots in Chromium: create one, change its settings, add a knowledge entry, and get that
 * entry's answer in Try it (through the public API with a test key: the conversation is listed as
 * a test); then a WooCommerce look-up tool added against the local fake shop and tested with
 * sample values.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { wooDemo } from "#test/fakes/platforms/woocommerce";
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
import { isLocal } from "#test/support/harness";

let browser: Browser;
let admin: ConsolePage;
let page: Page;
const botName = `Returns helper ${Date.now().toString(36)}`;

describe.runIf(isLocal && hasChromium)("chatbots, knowledge, Try it and tools", () => {
  beforeAll(async () => {
    browser = await launch();
    admin = await openConsole(browser);
    page = admin.page;
    await signIn(page, demo().consoleEmail, demo().consolePassword);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("creates a chatbot, saves its settings, and answers from a new knowledge entry in Try it", async () => {
    await go(page, "Chatbots");
    await checkPage(admin, "chatbots");
    await screenshot(page, "chatbots");
    await page.getByRole("button", { name: "New chatbot" }).click();
    await page.getByRole("heading", { level: 1, name: "New chatbot" }).waitFor();
    await page.getByLabel("Name").fill(botName);
    await page.getByLabel("Welcome message").fill("Hello! Ask me about returns.");
    await page.getByRole("button", { name: "Create chatbot" }).click();
    await page.getByRole("heading", { level: 1, name: botName }).waitFor();

    // Knowledge: the new chatbot opens on it.
    await page.getByLabel("Question", { exact: true }).fill("How do I return a parcel?");
    await page
      .getByLabel("Answer", { exact: true })
      .fill("Print the return label from your account and drop the parcel at any post office.");
    await page.getByRole("button", { name: "Add entry" }).click();
    await page.getByText("How do I return a parcel?", { exact: true }).waitFor();
    await checkPage(admin, "knowledge");
    await screenshot(page, "chatbot-knowledge");

    // Settings: every field, saved with a PATCH of what changed.
    await page.getByRole("navigation", { name: "Chatbot" }).getByRole("link", { name: "Settings" }).click();
    await settled(page);
    await page.getByLabel("Fallback reply").fill("Sorry, I only know about returns.");
    await page.getByLabel("Temperature").fill("0.5");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Saved.").waitFor();
    await page.reload();
    await settled(page);
    expect(await page.getByLabel("Fallback reply").inputValue()).toBe("Sorry, I only know about returns.");
    expect(await page.getByLabel("Temperature").inputValue()).toBe("0.5");
    await checkPage(admin, "chatbot settings");
    await screenshot(page, "chatbot-settings");

    // Try it.
    await page.getByRole("navigation", { name: "Chatbot" }).getByRole("link", { name: "Try it" }).click();
    const message = page.getByRole("textbox", { name: "Message" });
    await message.fill("Hi");
    await page.getByRole("button", { name: "Send" }).click();
    const log = page.getByRole("log");
    await expect.poll(() => log.textContent()).toContain("Hello! Ask me about returns.");
    await message.fill("how can I return my parcel?");
    await message.press("Enter");
    await expect.poll(() => log.textContent()).toContain("Print the return label from your account");
    await checkPage(admin, "Try it");
    await screenshot(page, "chatbot-try-it");

    // The conversation it made is a test.
    await page.getByRole("link", { name: "Open the transcript" }).click();
    await page.getByRole("heading", { level: 1, name: "Conversation" }).waitFor();
    await settled(page);
    await page.getByText("Test (Try it)").waitFor();
    expect(await page.locator(".bubble").count()).toBe(4);
  });

  it("adds a WooCommerce tool for the fake shop, shows what the chatbot collects, and tests it", async () => {
    await go(page, "Tools");
    await page.getByRole("combobox", { name: "Chatbot" }).selectOption({ label: botName });
    await settled(page);
    await page.getByText("No tools on this chatbot yet.").waitFor();
    await page.getByRole("radio", { name: "WooCommerce" }).check();
    await page.getByText("The chatbot asks the visitor for order number and e-mail address").waitFor();
    await page.getByRole("textbox", { name: "Shop URL" }).fill(wooDemo.config.shopUrl);
    await page.getByLabel("Consumer key").fill(wooDemo.secrets.consumerKey);
    await page.getByLabel("Consumer secret").fill(wooDemo.secrets.consumerSecret);
    await page.getByRole("button", { name: "Add WooCommerce tool" }).click();
    const card = page.getByRole("article", { name: /lookup_woocommerce/ });
    await card.waitFor();
    // Write-only: only masked hints come back.
    expect(await card.textContent()).not.toContain(wooDemo.secrets.consumerKey);
    expect(await card.textContent()).toContain("order number, e-mail address");

    await card.getByRole("button", { name: "Test lookup_woocommerce" }).click();
    await card.getByLabel("Order number").fill("1001");
    await card.getByLabel("E-mail address").fill("jan.jansen@example.nl");
    await card.getByRole("button", { name: "Run test" }).click();
    const outcome = card.getByRole("status");
    await outcome.waitFor();
    expect(await outcome.textContent()).toContain("Outcome: found");
    expect(await outcome.textContent()).not.toContain(wooDemo.secrets.consumerSecret);
    await checkPage(admin, "tools");
    await screenshot(page, "tools");

    // Every template has its form.
    for (const platform of ["Shopify", "Lightspeed eCom", "Sendcloud", "Picqer", "Generic GET"]) {
      await page.getByRole("radio", { name: platform }).check();
      await page
        .getByRole("button", { name: `Add ${platform === "Generic GET" ? "generic GET" : platform} tool` })
        .waitFor();
    }
    await page.getByRole("radio", { name: "Shopify" }).check();
    await page.getByRole("button", { name: "Add Shopify tool" }).click();
    // The browser asks for the required values first; nothing was sent.
    expect(await page.getByRole("article", { name: /lookup_shopify/ }).count()).toBe(0);
  });
});
