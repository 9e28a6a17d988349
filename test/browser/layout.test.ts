/**
 * Every page of the console (test/support/console-pages.ts) at 1280 and 375 px: nothing to scroll
 * sideways, nothing drawn over anything else, no text under 11 px, no clipped control, only the
 * current page highlighted in the navigation (also after following it by click or tap), axe-core
 * clean, no CSP violation or script error. Each page's screenshot at both widths goes to
 * docs/screenshots/pages/ (`npm run console:screenshots`).
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getChatbot } from "#functions/domain/chatbots";
import { createWebhookEndpoint } from "#functions/domain/webhooks";
import {
  type ConsolePage,
  checkPage,
  demo,
  desktop,
  hasChromium,
  launch,
  openConsole,
  phone,
  screenshot,
  settled,
  signIn,
} from "#test/support/browser";
import {
  type ConsolePageVisit,
  consolePages,
  type Seeded,
  signedOutPages,
} from "#test/support/console-pages";
import { api, call, domain, isLocal } from "#test/support/harness";
import { checkLayout } from "#test/support/layout";
import { seedOperator } from "#test/support/management";
import { receiver, webhooksContext } from "#test/support/webhooks";

let browser: Browser;
let seeded: Seeded;
let operator: { email: string; password: string };

async function conversationWithTurns(messages: string[]): Promise<string> {
  const started = await api.startConversation(demo().apiKey, { chatbot_id: demo().chatbotId });
  if (started.status !== 200) throw new Error(`not started: ${started.status} ${started.text}`);
  for (const message of messages) {
    const answer = await api.sendMessage(demo().apiKey, {
      conversation_id: started.body.conversation_id,
      message,
    });
    if (answer.status !== 200) throw new Error(`message refused: ${answer.status} ${answer.text}`);
  }
  return started.body.conversation_id;
}

/** Opens a page and checks it: layout, accessibility, CSP; then its screenshot. */
async function visit(console: ConsolePage, entry: ConsolePageVisit, width: number): Promise<void> {
  const { page } = console;
  await page.goto(`${demo().consoleUrl}${entry.path}`);
  await page.getByRole("heading", { level: 1, name: entry.heading }).waitFor();
  await settled(page);
  await checkLayout(page, entry.name);
  await checkPage(console, `${entry.name} at ${width} px`);
  await screenshot(page, `pages/${entry.name}-${width}`);
}

describe.runIf(isLocal && hasChromium)("the console's layout at 1280 and 375 px", () => {
  beforeAll(async () => {
    browser = await launch();
    const bot = await getChatbot(domain(), demo().organizationId, demo().chatbotId);
    // An endpoint that receives the conversations below: its page has a delivery log to show.
    const hook = receiver(`layout-${Date.now().toString(36)}`);
    const endpoint = await createWebhookEndpoint(webhooksContext(), {
      organizationId: demo().organizationId,
      url: hook.url,
      events: ["conversation.created", "conversation.handoff"],
      description: "Layout check",
    });
    await hook.configure({ secrets: [endpoint.secret] });
    const conversationId = await conversationWithTurns(["Hi", "How long does shipping take?"]);
    const waitingConversationId = await conversationWithTurns(["My parcel arrived damaged."]);
    const handoff = await call("POST", `/api/conversation/${waitingConversationId}/handoff`, {
      key: demo().apiKey,
      body: { reason: "damaged parcel" },
    });
    expect(handoff.status).toBe(200);
    // A contact with every detail: the Contacts pages show it.
    const contact = await api.startConversation(demo().apiKey, {
      chatbot_id: demo().chatbotId,
      user_name: "Ada Lovelace",
      user_email: "ada.lovelace@analytical.example",
      user_phone: "+44 20 7946 0000",
      external_id: "crm-1815",
    });
    expect(contact.status).toBe(200);
    seeded = {
      demo: demo(),
      contactId: contact.body.contact_id,
      chatbotName: bot.name,
      conversationId,
      waitingConversationId,
      webhookEndpointId: endpoint.endpoint.endpointId,
    };
    operator = await seedOperator();
  });
  afterAll(async () => {
    await browser?.close();
  });

  for (const viewport of [desktop, phone]) {
    it(`lays out every page at ${viewport.width} px`, async () => {
      const signedOut = await openConsole(browser, viewport);
      for (const entry of signedOutPages) await visit(signedOut, entry, viewport.width);
      await signedOut.context.close();

      const pages = consolePages(seeded);
      const admin = await openConsole(browser, viewport);
      await signIn(admin.page, demo().consoleEmail, demo().consolePassword);
      for (const entry of pages.filter((candidate) => (candidate.as ?? "admin") === "admin")) {
        await visit(admin, entry, viewport.width);
      }
      await admin.context.close();

      const operatorConsole = await openConsole(browser, viewport);
      await signIn(operatorConsole.page, operator.email, operator.password, "No organization yet");
      for (const entry of pages.filter((candidate) => candidate.as === "operator")) {
        await visit(operatorConsole, entry, viewport.width);
      }
      await operatorConsole.context.close();
    });

    it(`follows the navigation at ${viewport.width} px, one entry highlighted at a time`, async () => {
      const console = await openConsole(browser, viewport);
      const { page } = console;
      await signIn(page, demo().consoleEmail, demo().consolePassword);
      const navigation = page.getByRole("navigation", { name: "Main" });
      const menu = page.getByRole("button", { name: /^Menu/ });
      if (viewport === phone) {
        // A phone's bar is slim: the navigation folds behind Menu.
        const bar = await page.locator(".sidebar").boundingBox();
        expect(bar?.height).toBeLessThanOrEqual(64);
        expect(await navigation.isVisible()).toBe(false);
      }
      for (const [label, heading] of [
        ["Members", "Members"],
        ["Overview", "Overview"],
        ["Chatbots", "Chatbots"],
        [/^Inbox/, "Inbox"],
        ["Settings → API", "Settings → API"],
      ] as const) {
        if (viewport === phone) {
          await menu.tap();
          await navigation.getByRole("link", { name: label }).tap();
        } else await navigation.getByRole("link", { name: label }).click();
        await page.getByRole("heading", { level: 1, name: heading }).waitFor();
        await settled(page);
        if (viewport === phone) {
          // Following a link folds the menu again; open it to see the highlight.
          expect(await navigation.isVisible()).toBe(false);
          await menu.tap();
        }
        await checkLayout(page, `navigation to ${heading}`);
        if (viewport === phone) await menu.tap();
      }
      await checkPage(console, `navigation at ${viewport.width} px`);
      await console.context.close();
    });
  }
});
