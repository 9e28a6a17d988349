/**
 * Chatbot → Knowledge in Chromium, the answering side: "Test a question" shows the passages and
 * scores a turn would use; the gaps list shows what visitors asked that the knowledge could not
 * answer, and "Add an answer" adds it to the knowledge, after which the chatbot answers it; Try it
 * and the transcript show the sources a reply drew on. Screenshots at 1280 and 375 px.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addKnowledgeEntry, createChatbot } from "#functions/domain/chatbots";
import { demoKnowledge } from "#lib/local/demo";
import {
  type ConsolePage,
  checkPage,
  demo,
  hasChromium,
  launch,
  openConsole,
  phone,
  screenshot,
  settled,
  signIn,
} from "#test/support/browser";
import { api, domain, isLocal } from "#test/support/harness";

let browser: Browser;
let admin: ConsolePage;
let page: Page;
let chatbotId: string;

async function ask(message: string): Promise<void> {
  const started = await api.startConversation(demo().apiKey, { chatbot_id: chatbotId });
  const conversationId = (started.body as { conversation_id: string }).conversation_id;
  const answer = await api.sendMessage(demo().apiKey, { conversation_id: conversationId, message });
  expect(answer.status).toBe(200);
}

describe.runIf(isLocal && hasChromium)("knowledge: test a question, gaps, sources", () => {
  beforeAll(async () => {
    const bot = await createChatbot(domain(), {
      organizationId: demo().organizationId,
      name: `Knowledge helper ${Date.now().toString(36)}`,
      welcomeMessage: "Hello! Ask me about the shop.",
    });
    chatbotId = bot.chatbotId;
    for (const entry of demoKnowledge) {
      await addKnowledgeEntry(domain(), { organizationId: demo().organizationId, chatbotId, entry });
    }
    await ask("Do you repair bicycles?");
    await ask("do you repair bicycles");
    browser = await launch();
    admin = await openConsole(browser);
    page = admin.page;
    await signIn(page, demo().consoleEmail, demo().consolePassword);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("tests a question: the passages a turn would use, with their scores", async () => {
    await page.goto(`${demo().consoleUrl}/chatbots/${chatbotId}/knowledge`);
    await page.getByRole("heading", { name: "Test a question" }).waitFor();
    await page.getByRole("searchbox", { name: "A visitor's question" }).fill("can I return a product?");
    await page.getByRole("button", { name: "Test", exact: true }).click();
    const passages = page.getByRole("list", { name: 'Passages for "can I return a product?"' });
    await passages.waitFor();
    const first = passages.getByRole("listitem").first();
    expect(await first.textContent()).toContain("Can I return my order?");
    expect(await first.textContent()).toContain("answers");
    expect(await first.textContent()).toMatch(/score \d+ %/);
    await checkPage(admin, "knowledge, test a question");
    await screenshot(page, "chatbot-knowledge-test-question");
  });

  it("lists the gaps, and an answer added from one is what the chatbot then says", async () => {
    const gaps = page.getByRole("article", { name: "Knowledge gaps" });
    const gap = gaps.getByRole("listitem").filter({ hasText: "Do you repair bicycles?" });
    await gap.waitFor();
    expect(await gap.textContent()).toContain("asked 2 times");
    await screenshot(page, "chatbot-knowledge-gaps");
    await gap.getByRole("button", { name: "Add an answer" }).click();
    await gap
      .getByLabel("Answer")
      .fill("We do not repair bicycles; we sell headphones, speakers and electronics.");
    await gap.getByRole("button", { name: "Add to knowledge" }).click();
    await page.getByText("We do not repair bicycles; we sell headphones", { exact: false }).first().waitFor();

    // The chatbot now answers it, citing the new entry.
    const started = await api.startConversation(demo().apiKey, { chatbot_id: chatbotId });
    const conversationId = (started.body as { conversation_id: string }).conversation_id;
    const answer = await api.sendMessage(demo().apiKey, {
      conversation_id: conversationId,
      message: "Do you repair bicycles?",
    });
    expect(answer.body.messages[0]?.content).toContain("We do not repair bicycles");
    expect(answer.body.messages[0]?.sources.map((source) => source.title)).toEqual([
      "Do you repair bicycles?",
    ]);
  });

  it("shows a reply's sources in Try it and in the transcript", async () => {
    await page.getByRole("navigation", { name: "Chatbot" }).getByRole("link", { name: "Try it" }).click();
    const message = page.getByRole("textbox", { name: "Message" });
    await message.fill("what is your return policy");
    await page.getByRole("button", { name: "Send" }).click();
    const log = page.getByRole("log");
    await expect.poll(() => log.textContent()).toContain("Sources:");
    expect(await log.textContent()).toContain("Can I return my order?");
    await checkPage(admin, "Try it with sources");
    await screenshot(page, "chatbot-try-it-sources");
    await page.getByRole("link", { name: "Open the transcript" }).click();
    await page.getByRole("heading", { level: 1, name: "Conversation" }).waitFor();
    await settled(page);
    expect(await page.locator(".bubble .sources").first().textContent()).toContain("Can I return my order?");
    await screenshot(page, "conversation-transcript-sources");
  });

  it("fits a phone (375 px)", async () => {
    await page.setViewportSize(phone);
    await page.goto(`${demo().consoleUrl}/chatbots/${chatbotId}/knowledge`);
    await page.getByRole("heading", { name: "Test a question" }).waitFor();
    await page.getByRole("searchbox", { name: "A visitor's question" }).fill("how long does shipping take");
    await page.getByRole("button", { name: "Test", exact: true }).click();
    await page.getByRole("list", { name: 'Passages for "how long does shipping take"' }).waitFor();
    await checkPage(admin, "knowledge on a phone");
    await screenshot(page, "phone-chatbot-knowledge-test-question");
    await page.getByRole("article", { name: "Knowledge gaps" }).scrollIntoViewIfNeeded();
    await screenshot(page, "phone-chatbot-knowledge-gaps");
  });
});
