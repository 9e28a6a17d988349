/**
 * Chatbots in Chromium: create one, change its settings, add a knowledge entry, and get that
 * entry's answer in Try it (through the public API with a test key: the conversation is listed as
 * a test); then a WooCommerce look-up tool added against the local fake shop and tested with
 * sample values, and edited on the chatbot's own Tools tab: its name, description and request cap,
 * and its credentials replaced (a wrong secret makes its test fail, the right one pass again).
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listChatbots } from "#functions/domain/chatbots";
import { listTools } from "#functions/domain/tools";
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
import { domain, isLocal } from "#test/support/harness";

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

  it("edits the tool on the chatbot's own Tools tab, replacing its credentials whole", async () => {
    await go(page, "Chatbots");
    await page.getByRole("link", { name: botName }).click();
    await page.getByRole("heading", { level: 1, name: botName }).waitFor();
    const tabs = page.getByRole("navigation", { name: "Chatbot" });
    await tabs.getByRole("link", { name: "Tools" }).click();
    await settled(page);
    // The tab stays on the chatbot's page.
    const bot = (await listChatbots(domain(), demo().organizationId)).find((one) => one.name === botName);
    expect(new URL(page.url()).pathname).toBe(`/chatbots/${bot?.chatbotId}/tools`);
    await page.getByRole("heading", { level: 1, name: botName }).waitFor();
    expect(await tabs.getByRole("link", { name: "Tools" }).getAttribute("aria-current")).toBe("page");

    const card = page.getByRole("article", { name: /lookup_woocommerce/ });
    await card.getByRole("button", { name: "Edit lookup_woocommerce" }).click();
    const form = card.getByRole("region", { name: "Edit lookup_woocommerce" });
    // The form holds the tool as it is.
    expect(await form.getByLabel("Tool name").inputValue()).toBe("lookup_woocommerce");
    expect(await form.getByLabel("Requests per minute").inputValue()).toBe("60");
    expect(await form.getByRole("textbox", { name: "Shop URL" }).inputValue()).toBe(wooDemo.config.shopUrl);
    // One credential alone would leave the tool half changed: refused before anything is sent.
    await form.getByLabel("New consumer key").fill(wooDemo.secrets.consumerKey);
    await form.getByRole("button", { name: "Save lookup_woocommerce" }).click();
    await form.getByText("New credentials replace all the stored ones: enter Consumer secret too.").waitFor();

    await form.getByLabel("Tool name").fill("order_lookup");
    await form.getByLabel("Description").fill("Looks up a Returns helper order by its number and e-mail.");
    await form.getByLabel("Requests per minute").fill("30");
    await form.getByLabel("New consumer secret").fill("cs_not_the_shops_secret_0000");
    await form.getByRole("button", { name: "Save lookup_woocommerce" }).click();
    const edited = page.getByRole("article", { name: /order_lookup/ });
    await edited.getByText("Saved: the chatbot uses the changed tool from its next look-up.").waitFor();
    const stored = await listTools(domain(), demo().organizationId, bot?.chatbotId ?? "");
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      name: "order_lookup",
      description: "Looks up a Returns helper order by its number and e-mail.",
      requestsPerMinute: 30,
      config: { shopUrl: wooDemo.config.shopUrl },
      credentials: { consumerKey: "••••7f9a", consumerSecret: "••••0000" },
    });
    expect(await edited.textContent()).not.toContain("cs_not_the_shops_secret");

    // The wrong secret is what the platform now gets.
    const test = async (expected: string) => {
      await edited.getByRole("button", { name: "Test order_lookup" }).click();
      await edited.getByLabel("Order number").fill("1001");
      await edited.getByLabel("E-mail address").fill("jan.jansen@example.nl");
      await edited.getByRole("button", { name: "Run test" }).click();
      await expect
        .poll(() => edited.getByRole("status").last().textContent())
        .toContain(`Outcome: ${expected}`);
      await edited.getByRole("button", { name: "Close test order_lookup" }).click();
    };
    await test("auth failed");

    await edited.getByRole("button", { name: "Edit order_lookup" }).click();
    const again = edited.getByRole("region", { name: "Edit order_lookup" });
    await again.getByLabel("New consumer key").fill(wooDemo.secrets.consumerKey);
    await again.getByLabel("New consumer secret").fill(wooDemo.secrets.consumerSecret);
    await checkPage(admin, "tool editing");
    await screenshot(page, "chatbot-tools-edit");
    await again.getByRole("button", { name: "Save order_lookup" }).click();
    await edited.getByText("Saved: the chatbot uses the changed tool from its next look-up.").waitFor();
    await test("found");
    await checkPage(admin, "chatbot tools tab");
  });
});
