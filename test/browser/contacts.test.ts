/**
 * Contacts in the console: the Contacts page (search, CSV export), a contact's page with its
 * conversations, the contact's name in the conversation list, the transcript and the Inbox, and a
 * transcript's message counts as the API defines them. At 1280 and 375 px.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsolePage,
  checkPage,
  demo,
  go,
  hasChromium,
  horizontalOverflow,
  launch,
  openConsole,
  phone,
  screenshot,
  settled,
  signIn,
} from "#test/support/browser";
import { api, call, isLocal } from "#test/support/harness";

let browser: Browser;
let admin: ConsolePage;
let page: Page;
/** A name no other test uses, so searches find exactly this contact. */
const surname = `Quenby${randomUUID().slice(0, 6)}`;
const name = `Zoë ${surname}`;
const email = `zoe.${surname.toLowerCase()}@shop.example`;
const phoneNumber = "+31 6 5555 0199";
let contactId: string;
let conversationId: string;

describe.runIf(isLocal && hasChromium)("contacts in the console", () => {
  beforeAll(async () => {
    contactId = randomUUID();
    const started = await api.startConversation(demo().apiKey, {
      chatbot_id: demo().chatbotId,
      contact_id: contactId,
      user_name: name,
      user_email: email,
      user_phone: phoneNumber,
      external_id: `order-${surname}`,
    });
    conversationId = started.body.conversation_id;
    for (const message of ["Hello!", "How long does shipping take?"]) {
      await api.sendMessage(demo().apiKey, { conversation_id: conversationId, message });
    }
    // Waiting for a person: the conversation shows in the Inbox.
    await call("POST", `/api/conversation/${conversationId}/handoff`, { key: demo().apiKey });
    browser = await launch();
    admin = await openConsole(browser);
    page = admin.page;
    await signIn(page, demo().consoleEmail, demo().consolePassword);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("finds a contact by a part of its name, e-mail or phone, and exports the search as CSV", async () => {
    await go(page, "Contacts");
    await page.getByRole("table").waitFor();
    for (const query of [surname.toLowerCase(), email.slice(0, 12), "+31 6 5555 01"]) {
      await page.getByLabel("Name, e-mail, phone or external id").fill(query);
      await page.getByRole("button", { name: "Search" }).click();
      await expect.poll(() => page.getByRole("row").count(), { message: query }).toBeGreaterThanOrEqual(2);
      await page.getByRole("link", { name }).waitFor();
    }
    await page.getByLabel("Name, e-mail, phone or external id").fill(surname);
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.getByRole("row").count()).toBe(2);
    const row = page.getByRole("row", { name: new RegExp(surname) });
    await row.getByText(email).waitFor();
    await row.getByText(phoneNumber).waitFor();
    await checkPage(admin, "contacts");
    await screenshot(page, "contacts");

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export CSV" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^contacts-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = (await readFile((await download.path()) ?? "", "utf8")).replace(/^\uFEFF/, "");
    const lines = csv.trimEnd().split("\r\n");
    expect(lines[0]).toBe(
      "contact_id,name,email,phone,external_ids,conversations,last_conversation_at,created_at",
    );
    expect(lines).toHaveLength(2);
    // A phone number starting with "+" would be a formula to a spreadsheet: it is kept as text.
    expect(lines[1]).toContain(`${contactId},${name},${email},'${phoneNumber},order-${surname},1,`);

    await page.getByLabel("Name, e-mail, phone or external id").fill("no such person anywhere");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByText("No contact matches “no such person anywhere”.").waitFor();
  });

  it("opens a contact with its conversations, and from there the transcript with the counts", async () => {
    await page.goto(`${demo().consoleUrl}/contacts?query=${encodeURIComponent(surname)}`);
    await page.getByRole("link", { name }).click();
    await page.getByRole("heading", { level: 1, name }).waitFor();
    await settled(page);
    await page.getByText(email).first().waitFor();
    await page.getByText(`order-${surname}`).waitFor();
    const conversations = page.getByRole("article", { name: "Conversations" });
    expect(await conversations.getByRole("row").count()).toBe(2);
    await checkPage(admin, "contact");
    await screenshot(page, "contact");

    await conversations.getByRole("link", { name: /^Open/ }).click();
    await page.getByRole("heading", { level: 1, name: "Conversation" }).waitFor();
    await settled(page);
    // The visitor sent 2 messages; the history holds 5: 2 of theirs, 2 replies, 1 status line.
    const facts = page.locator("dl.facts");
    await expect
      .poll(() => facts.locator("dt:has-text('Messages from the visitor') + dd").textContent())
      .toBe("2");
    await expect.poll(() => facts.locator("dt:has-text('Messages in all') + dd").textContent()).toBe("5");
    const answer = await call<{ message_count: number; visitor_message_count: number }>(
      "GET",
      `/api/conversation/${conversationId}`,
      { key: demo().apiKey },
    );
    expect([answer.body.visitor_message_count, answer.body.message_count]).toEqual([2, 5]);
    await facts.getByRole("link", { name }).waitFor();
    const transcript = page.getByRole("article", { name: "Transcript" });
    expect(await transcript.locator(".bubble.user .who").first().textContent()).toMatch(
      new RegExp(`^${name}`),
    );
    await checkPage(admin, "transcript with contact");
  });

  it("shows the contact's name in the conversation list and the Inbox", async () => {
    await page.goto(`${demo().consoleUrl}/conversations?external_id=order-${surname}`);
    await page.getByRole("heading", { level: 1, name: "Conversations" }).waitFor();
    await settled(page);
    const row = page.getByRole("row", { name: new RegExp(name) });
    await row.waitFor();
    expect(await row.locator("td").nth(4).textContent()).toBe("2");
    await page.goto(`${demo().consoleUrl}/inbox?conversation=${conversationId}`);
    await page.getByRole("heading", { level: 2, name }).waitFor();
    await settled(page);
    await page.getByText(`${email} · ${phoneNumber}`).waitFor();
    expect(await page.getByRole("link", { name: new RegExp(`^${name}`) }).count()).toBeGreaterThanOrEqual(1);
    await checkPage(admin, "inbox with contact");
  });

  it("fits the pages it changed into 375 px", async () => {
    const narrow = await openConsole(browser, phone);
    await signIn(narrow.page, demo().consoleEmail, demo().consolePassword);
    const pages: [string, string, string | RegExp][] = [
      ["phone-contacts", `/contacts?query=${encodeURIComponent(surname)}`, "Contacts"],
      ["phone-contact", `/contacts/${contactId}`, name],
      ["phone-conversations", `/conversations?external_id=order-${surname}`, "Conversations"],
    ];
    for (const [shot, path, heading] of pages) {
      await narrow.page.goto(`${demo().consoleUrl}${path}`);
      await narrow.page.getByRole("heading", { level: 1, name: heading }).waitFor();
      await settled(narrow.page);
      expect(await horizontalOverflow(narrow.page), shot).toBeLessThanOrEqual(0);
      await checkPage(narrow, shot);
      await screenshot(narrow.page, shot);
    }
    await narrow.context.close();
  });
});
