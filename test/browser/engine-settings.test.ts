/**
 * A chatbot's engine in the console: an admin connects the business's own OpenAI-compatible model
 * (server, model, a pasted key), tests it before saving, saves it (the key then shows only as a
 * masked hint, never in the page), and picks a Bedrock model from the stage's list. The model is
 * the local OpenAI-compatible stand-in, reached through the test relay. At 1280 and 375 px.
 */
import { randomUUID } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChatbot, getChatbot } from "#functions/domain/chatbots";
import { completionText, type FakeOpenAi, openAiError, startFakeOpenAi } from "#test/fakes/openai-server";
import {
  type ConsolePage,
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
import { domain, isLocal, reachable } from "#test/support/harness";

let browser: Browser;
let admin: ConsolePage;
let page: Page;
let openAi: FakeOpenAi;
let chatbotId: string;
const botName = `Own model ${Date.now().toString(36)}`;
const key = `sk-console-${randomUUID()}`;

describe.runIf(isLocal && hasChromium)("a chatbot's engine in the console", () => {
  beforeAll(async () => {
    openAi = await startFakeOpenAi();
    chatbotId = (await createChatbot(domain(), { organizationId: demo().organizationId, name: botName }))
      .chatbotId;
    browser = await launch();
    admin = await openConsole(browser);
    page = admin.page;
    await signIn(page, demo().consoleEmail, demo().consolePassword);
  });
  afterAll(async () => {
    await browser?.close();
    await openAi?.close();
  });

  it("connects the business's own model: tests it with a pasted key, saves it, shows the key only masked", async () => {
    await page.goto(`${demo().consoleUrl}/chatbots/${chatbotId}`);
    await page.getByRole("heading", { level: 1, name: botName }).waitFor();
    await settled(page);
    await page.locator("select[name=engine]").selectOption("openai");
    await page.locator("input[name=base_url]").fill(`${reachable(openAi.url)}/v1`);
    await page.locator("input[name=model]").fill("gpt-own");
    await page.locator("input[name=api_key]").fill(key);

    openAi.enqueue(completionText("Hello from your own model."));
    await page.getByRole("button", { name: "Test the engine" }).click();
    await page.getByText(/The engine answered in [\d.]+ s: “Hello from your own model\.”/).waitFor();
    expect(openAi.requests.at(-1)?.headers.authorization).toBe(`Bearer ${key}`);
    // Testing saved nothing.
    expect((await getChatbot(domain(), demo().organizationId, chatbotId)).engine.kind).toBe("scripted");

    await page.getByRole("button", { name: "Save settings" }).click();
    await expect
      .poll(async () => (await getChatbot(domain(), demo().organizationId, chatbotId)).engine.kind)
      .toBe("openai");
    await page.getByText(`A key is stored (••••${key.slice(-4)})`, { exact: false }).waitFor();
    expect(await page.locator("input[name=api_key]").inputValue()).toBe("");
    expect(await page.content()).not.toContain(key);
    await checkPage(admin, "chatbot engine");
    await screenshot(page, "chatbot-settings");

    // A refusing server: the test says so, in words.
    openAi.enqueue(openAiError(401, "Incorrect API key", "invalid_request_error"));
    await page.locator("input[name=api_key]").fill("sk-wrong-0000000000000");
    await page.getByRole("button", { name: "Test the engine" }).click();
    await page.getByText("The engine did not answer: The model server refused the key (HTTP 401).").waitFor();
  });

  it("picks a Bedrock model from the stage's list", async () => {
    await page.goto(`${demo().consoleUrl}/chatbots/${chatbotId}`);
    await page.getByRole("heading", { level: 1, name: botName }).waitFor();
    await settled(page);
    await page.locator("select[name=engine]").selectOption("bedrock");
    const models = page.locator("select[name=model_id]");
    await expect
      .poll(() => models.locator("option").allTextContents())
      .toEqual(["anthropic.claude-engine-test-v1", "eu.anthropic.claude-engine-test-v1:0"]);
    await models.selectOption("eu.anthropic.claude-engine-test-v1:0");
    await page.getByRole("button", { name: "Save settings" }).click();
    await expect
      .poll(async () => (await getChatbot(domain(), demo().organizationId, chatbotId)).engine)
      .toEqual({ kind: "bedrock", modelId: "eu.anthropic.claude-engine-test-v1:0" });
  });

  it("fits the engine settings into 375 px", async () => {
    const narrow = await openConsole(browser, phone);
    await signIn(narrow.page, demo().consoleEmail, demo().consolePassword);
    await narrow.page.goto(`${demo().consoleUrl}/chatbots/${chatbotId}`);
    await narrow.page.getByRole("heading", { level: 1, name: botName }).waitFor();
    await settled(narrow.page);
    await narrow.page.locator("select[name=engine]").selectOption("openai");
    expect(await horizontalOverflow(narrow.page)).toBeLessThanOrEqual(0);
    await checkPage(narrow, "chatbot engine at 375 px");
    await screenshot(narrow.page, "phone-chatbot-settings");
    await narrow.context.close();
  });
});
