/**
 * Conversations and the overview in Chromium: conversations made over the public API (a look-up,
 * a fallback, an image) found with the list's filters, read as a transcript (visitor and chatbot
 * messages, the image, the look-up, the status change) and closed; the overview's charts drawn
 * from the usage API, with their numbers as tables.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordTurnUsage } from "#functions/domain/usage";
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
import { api, domain, environment, isLocal } from "#test/support/harness";

let browser: Browser;
let admin: ConsolePage;
let page: Page;
const externalId = `ticket-${Date.now().toString(36)}`;
let conversationId: string;

async function say(message: string, attachments?: unknown[]): Promise<void> {
  const answer = await api.sendMessage(demo().apiKey, {
    conversation_id: conversationId,
    message,
    ...(attachments ? { attachments } : {}),
  });
  if (answer.status !== 200) throw new Error(`message refused: ${answer.status} ${answer.text}`);
}

/** A month of turns for the overview's charts (the usage counters, as turns write them). */
async function seedMonthOfUsage(): Promise<void> {
  const outcomes = ["found", "found", "not_found", "found", "timeout"];
  const turns = [];
  for (let day = 1; day < 30; day++) {
    const count = 2 + ((day * 7) % 9);
    for (let turn = 0; turn < count; turn++) {
      turns.push({
        organizationId: demo().organizationId,
        chatbotId: demo().chatbotId,
        at: Date.now() - day * 86_400_000,
        replies: 1,
        test: false,
        fallback: turn === 0 && day % 4 === 0,
        lookups: turn % 3 === 0 ? [outcomes[(day + turn) % outcomes.length] ?? "found"] : [],
      });
    }
  }
  for (let index = 0; index < turns.length; index += 25) {
    await Promise.all(turns.slice(index, index + 25).map((turn) => recordTurnUsage(domain(), turn)));
  }
}

describe.runIf(isLocal && hasChromium)("conversations and the overview", () => {
  beforeAll(async () => {
    const started = await api.startConversation(demo().apiKey, {
      chatbot_id: demo().chatbotId,
      external_id: externalId,
      user_name: "Jan Jansen",
    });
    conversationId = started.body.conversation_id;
    await say("Hi there!");
    await say("Where is my order 1001?");
    await say("jan.jansen@example.nl");
    await say("Here is a photo of the box", [{ type: "image", url: `${environment.imageBaseUrl}/png` }]);
    await say("Xylophone quasar zephyr?");
    await seedMonthOfUsage();
    browser = await launch();
    admin = await openConsole(browser);
    page = admin.page;
    await signIn(page, demo().consoleEmail, demo().consolePassword);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("draws the last 30 days: messages per chatbot, fallbacks, look-ups by outcome, with tables", async () => {
    await settled(page);
    for (const name of ["Visitor messages per day", "Fallback replies per day", "Look-ups by outcome"]) {
      await page.getByRole("img", { name: new RegExp(`^${name}`) }).waitFor();
    }
    await page.getByText("Visitor messages per day as a table").click();
    const table = page.getByRole("table").first();
    expect(await table.getByRole("row").count()).toBe(31);
    await page.getByText("Visitor messages per day as a table").click();
    expect(
      await page.getByRole("img", { name: /^Look-ups by outcome/ }).getAttribute("aria-labelledby"),
    ).toBeTruthy();
    expect(await page.getByText(/^Look-ups by outcome, 30 days: found \d+/).count()).toBe(1);
    await checkPage(admin, "overview");
    await screenshot(page, "overview");
  });

  it("keeps what a person typed in the filters when the chatbot list arrives after it", async () => {
    // Hold the chatbot list back until the field is filled, as a slow network would.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route("**/manage/chatbots", async (route) => {
      await held;
      await route.continue();
    });
    try {
      await go(page, "Conversations");
      await page.getByRole("table").waitFor();
      await page.getByLabel("External id").fill(externalId);
      release();
      await expect
        .poll(() => page.getByRole("combobox", { name: "Chatbot" }).locator("option").count())
        .toBeGreaterThan(1);
      expect(await page.getByLabel("External id").inputValue()).toBe(externalId);
    } finally {
      release();
      await page.unroute("**/manage/chatbots");
    }
  });

  it("finds a conversation with the filters and reads its transcript, look-up, image and fallback", async () => {
    await go(page, "Conversations");
    await page.getByRole("table").waitFor();
    await page.getByLabel("External id").fill(externalId);
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => page.getByRole("row").count()).toBe(2);
    expect(new URL(page.url()).searchParams.get("external_id")).toBe(externalId);
    await checkPage(admin, "conversations");

    await page.getByRole("link", { name: /^Open/ }).click();
    await page.getByRole("heading", { level: 1, name: "Conversation" }).waitFor();
    await settled(page);
    const transcript = page.getByRole("article", { name: "Transcript" });
    expect(await transcript.locator(".bubble.user").count()).toBe(5);
    expect(await transcript.locator(".bubble.assistant").count()).toBe(5);
    await transcript.getByText("Look-up order_status: found").waitFor();
    await transcript.getByText("Fallback reply").first().waitFor();
    const image = transcript.getByRole("img", { name: "Attachment 1 the visitor sent" });
    expect(await image.getAttribute("src")).toBe(`${environment.imageBaseUrl}/png`);
    // The visitor's messages are signed with their contact's name.
    expect((await transcript.locator(".bubble.user .who").first().textContent()) ?? "").toMatch(
      /^Jan Jansen/,
    );
    expect((await transcript.locator(".bubble.assistant .who").first().textContent()) ?? "").toMatch(
      /^Demo Shop assistant/,
    );
    await checkPage(admin, "transcript");
    await screenshot(page, "conversation-transcript");

    await page.getByRole("button", { name: "Close conversation" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Close conversation" }).click();
    await transcript.getByText(`Conversation closed by ${demo().consoleEmail}`, { exact: false }).waitFor();
    expect(await page.getByRole("button", { name: "Close conversation" }).count()).toBe(0);
    const refused = await api.sendMessage(demo().apiKey, {
      conversation_id: conversationId,
      message: "Hello?",
    });
    expect(refused.status).toBe(409);
  });

  it("lists by status and chatbot, and says so when nothing matches", async () => {
    await page.goto(`${demo().consoleUrl}/conversations?status=closed&chatbot_id=${demo().chatbotId}`);
    await page.getByRole("heading", { level: 1, name: "Conversations" }).waitFor();
    await settled(page);
    expect(await page.getByRole("combobox", { name: "Status" }).inputValue()).toBe("closed");
    await expect
      .poll(() => page.getByRole("combobox", { name: "Chatbot" }).inputValue())
      .toBe(demo().chatbotId);
    await expect.poll(() => page.getByRole("row").count()).toBeGreaterThanOrEqual(2);
    await screenshot(page, "conversations");
    await page.getByLabel("Contact id").fill("00000000-0000-4000-8000-000000000000");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("No conversations match these filters.").waitFor();
  });
});
