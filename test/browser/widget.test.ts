/**
 * The website widget in Chromium, on a business's page served on another origin than the API and
 * the console, under a strict Content-Security-Policy (test/support/widget-page.ts): open, chat,
 * the reply streamed as it is written, reload and another tab continuing the conversation, identify,
 * images, hand off and a person's reply arriving by polling (paused while the page is hidden),
 * full screen at 375 px, axe, the keyboard, the page's CSS kept out and in, one global, and a page on
 * an origin that is not allowed getting no session and showing nothing.
 */
import { randomUUID } from "node:crypto";
import type { Browser, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { converseStream } from "#test/fakes/bedrock-server";
import { bedrockControl } from "#test/fakes/keyed-bedrock";
import {
  accessibilityViolations,
  demo,
  desktop,
  hasChromium,
  launch,
  phone,
  screenshot,
} from "#test/support/browser";
import { call, environment, isLocal } from "#test/support/harness";
import {
  identityToken,
  rotateIdentitySecret,
  seedWidgetTenant,
  type WidgetTenant,
} from "#test/support/widget";
import {
  newGlobals,
  recordPageEvents,
  startWidgetPages,
  violations,
  type WidgetPages,
} from "#test/support/widget-page";

let browser: Browser;
let pages: WidgetPages;

const widgetUrl = () => `${demo().consoleUrl}/widget.js`;
const handoff = { allowed: true, message: "I'll find a colleague for you.", phrases: ["a person"] };

async function widgetTenant(engine?: { kind: "bedrock"; modelId: string }): Promise<WidgetTenant> {
  return seedWidgetTenant(
    {
      allowed_origins: [pages.origin],
      appearance: { title: "Shop help", starter_questions: ["Do you ship to Belgium?"] },
    },
    { chatbot: { handoff, ...(engine ? { engine } : {}) } },
  );
}

async function openPage(
  chatbotId: string,
  viewport: { width: number; height: number } = desktop,
  lang?: string,
) {
  const context = await browser.newContext({ viewport });
  await recordPageEvents(context);
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(pages.url(chatbotId, lang ? { lang } : {}));
  return { context, page };
}

const launcher = (page: Page | Frame) => page.locator("#chatbot-widget .launcher");
const dialog = (page: Page) => page.getByRole("dialog");
const log = (page: Page) => page.getByRole("log");

async function sendMessage(page: Page, text: string): Promise<void> {
  await page.getByRole("textbox", { name: "Message" }).fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

describe.runIf(isLocal && hasChromium)("the website widget", () => {
  beforeAll(async () => {
    browser = await launch();
    pages = await startWidgetPages(widgetUrl());
  });
  afterAll(async () => {
    await browser?.close();
    await pages?.close();
  });

  it("opens and streams a reply under a strict CSP, with no violation and one global", async () => {
    const modelId = `test.widget-${randomUUID()}`;
    const tenant = await widgetTenant({ kind: "bedrock", modelId });
    const bedrock = bedrockControl(environment.bedrockControlUrl ?? "");
    const text = "We ship to Belgium in two working days.";
    await bedrock.script(modelId, converseStream(text, { holdAfter: 3 }));
    const { context, page } = await openPage(tenant.chatbotId);

    await launcher(page).waitFor();
    expect(await launcher(page).getAttribute("aria-expanded")).toBe("false");
    await launcher(page).click();
    await dialog(page).waitFor();
    expect(await dialog(page).getAttribute("aria-modal")).toBe("true");
    await expect.poll(() => log(page).textContent()).toContain("Welcome to the test shop!");
    // A starter question sends itself.
    await page.getByRole("button", { name: "Do you ship to Belgium?" }).click();
    const writing = page.locator("#chatbot-widget .msg.assistant[aria-busy=true]");
    await expect.poll(() => writing.textContent()).toMatch(/We ship to$/);
    await bedrock.release(modelId);
    await expect.poll(() => log(page).textContent()).toContain(text);
    await expect.poll(() => writing.count()).toBe(0);
    await screenshot(page, "widget-desktop");

    expect(await violations(page)).toEqual([]);
    expect(await newGlobals(page)).toEqual(["ChatbotWidget"]);
    await context.close();
  });

  it("keeps the conversation across a reload and in another tab, and continues it", async () => {
    const tenant = await widgetTenant();
    const { context, page } = await openPage(tenant.chatbotId);
    await launcher(page).click();
    await sendMessage(page, "How long does delivery take?");
    await expect.poll(() => log(page).locator(".msg.assistant").count()).toBe(2);

    await page.reload();
    await launcher(page).click();
    await expect.poll(() => log(page).textContent()).toContain("How long does delivery take?");
    await sendMessage(page, "And to Germany?");
    await expect.poll(() => log(page).locator(".msg.user").count()).toBe(2);

    const tab = await context.newPage();
    await tab.goto(pages.url(tenant.chatbotId));
    await launcher(tab).click();
    await expect.poll(() => log(tab).textContent()).toContain("And to Germany?");
    expect(await log(tab).locator(".msg.user").count()).toBe(2);
    expect(await violations(page)).toEqual([]);
    await context.close();
  });

  it("identifies the visitor, who keeps the conversation they had", async () => {
    const tenant = await widgetTenant();
    await call("PUT", `/manage/chatbots/${tenant.chatbotId}/widget`, {
      key: tenant.manageKey,
      body: { identity_verification: "optional" },
    });
    const secret = await rotateIdentitySecret(tenant);
    const { context, page } = await openPage(tenant.chatbotId);
    await launcher(page).click();
    await sendMessage(page, "Hello, anonymous for now");
    await expect.poll(() => log(page).locator(".msg.assistant").count()).toBe(2);

    const sub = `customer-${randomUUID()}`;
    const token = await identityToken(secret, { sub, name: "Ann Visser", email: "ann@example.nl" });
    await page.evaluate(`window.ChatbotWidget.identify(${JSON.stringify(token)})`);
    // The same person on another device finds the same contact and the same conversation.
    const elsewhere = await call<{ contact_id: string; conversation_id: string; identified: boolean }>(
      "POST",
      "/api/widget/session",
      {
        authorization: null,
        headers: { origin: pages.origin },
        body: { chatbot_id: tenant.chatbotId, identity: await identityToken(secret, { sub }) },
      },
    );
    expect(elsewhere.body.identified).toBe(true);
    const stored = await page.evaluate<{ conversationId: string }>(
      `JSON.parse(localStorage.getItem("chatbot-widget:${tenant.chatbotId}"))`,
    );
    expect(elsewhere.body.conversation_id).toBe(stored.conversationId);
    await expect.poll(() => log(page).textContent()).toContain("Hello, anonymous for now");
    expect(await violations(page)).toEqual([]);
    await context.close();
  });

  it("sends an image from the picker", async () => {
    const tenant = await widgetTenant();
    const { context, page } = await openPage(tenant.chatbotId);
    await launcher(page).click();
    // A 1×1 PNG.
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
      "base64",
    );
    await page
      .locator("#chatbot-widget input[type=file]")
      .setInputFiles({ name: "parcel.png", mimeType: "image/png", buffer: png });
    await page.getByRole("button", { name: "Remove image" }).waitFor();
    await sendMessage(page, "This arrived damaged");
    await expect.poll(() => log(page).locator(".msg.assistant").count()).toBe(2);
    const stored = await page.evaluate<{ conversationId: string }>(
      `JSON.parse(localStorage.getItem("chatbot-widget:${tenant.chatbotId}"))`,
    );
    const history = await call<{ messages: { role: string; attachments: { media_type?: string }[] }[] }>(
      "GET",
      `/api/conversation/${stored.conversationId}/messages`,
      { key: tenant.apiKey },
    );
    expect(history.body.messages.find((message) => message.role === "user")?.attachments).toMatchObject([
      { media_type: "image/png" },
    ]);
    expect(await violations(page)).toEqual([]);
    await context.close();
  });

  it("hands off, shows the status, and a person's reply arrives by polling, paused while hidden", async () => {
    const tenant = await widgetTenant();
    const { context, page } = await openPage(tenant.chatbotId);
    const polls: number[] = [];
    page.on("request", (request) => {
      if (/\/messages\?/.test(request.url())) polls.push(Date.now());
    });
    await launcher(page).click();
    await sendMessage(page, "I would like to talk to a person please");
    await expect.poll(() => log(page).textContent()).toContain(handoff.message);
    const status = page.getByRole("status");
    await expect.poll(() => status.textContent()).toContain("A person will answer you here shortly.");

    const stored = await page.evaluate<{ conversationId: string }>(
      `JSON.parse(localStorage.getItem("chatbot-widget:${tenant.chatbotId}"))`,
    );
    const sent = Date.now();
    const reply = await call("POST", `/manage/conversations/${stored.conversationId}/reply`, {
      key: tenant.manageKey,
      body: { message: "Hello, this is Sam from the shop. How can I help?" },
    });
    expect(reply.status).toBe(200);
    await expect.poll(() => log(page).textContent()).toContain("this is Sam from the shop");
    const shownAfterMs = Date.now() - sent;
    console.log(`a person's reply showed ${shownAfterMs} ms after it was sent`);
    await expect.poll(() => status.textContent()).toContain("You are chatting with a person.");
    // Polled with backoff, never more than the 4 s it grows to (plus the request itself).
    const gaps = polls.slice(1).map((at, index) => at - (polls[index] ?? at));
    expect(Math.max(...gaps)).toBeLessThan(5_000);

    // Hidden: no polling at all. Visible again: polling at once.
    await page.evaluate(
      `Object.defineProperty(document, "hidden", { configurable: true, get: () => true }); document.dispatchEvent(new Event("visibilitychange"))`,
    );
    const whileHidden = polls.length;
    await new Promise((resolveWait) => setTimeout(resolveWait, 6_000));
    expect(polls.length).toBe(whileHidden);
    await page.evaluate(
      `Object.defineProperty(document, "hidden", { configurable: true, get: () => false }); document.dispatchEvent(new Event("visibilitychange"))`,
    );
    await expect.poll(() => polls.length).toBeGreaterThan(whileHidden);
    expect(await violations(page)).toEqual([]);
    await context.close();
  });

  it("is full screen at 375 px, keyboard operable, and has no axe violation", async () => {
    const tenant = await widgetTenant();
    const { context, page } = await openPage(tenant.chatbotId, phone);
    await launcher(page).waitFor();
    // The page's own button, then the launcher.
    await page.locator("#own-button").focus();
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await dialog(page).waitFor();
    const box = await page.locator("#chatbot-widget .panel").boundingBox();
    expect(box).toEqual({ x: 0, y: 0, width: phone.width, height: phone.height });
    const focused = () =>
      page.evaluate<string>(`document.querySelector("#chatbot-widget").shadowRoot.activeElement?.id ?? ""`);
    expect(await focused()).toBe("cbw-input");
    // Tab goes round inside the dialog.
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      expect(await page.evaluate<boolean>(`document.activeElement?.id === "chatbot-widget"`)).toBe(true);
    }
    await expect.poll(() => log(page).textContent()).toContain("Welcome");
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "widget-375");
    await page.keyboard.press("Escape");
    expect(await dialog(page).isVisible()).toBe(false);
    expect(
      await page.evaluate<string>(
        `document.querySelector("#chatbot-widget").shadowRoot.activeElement?.className ?? ""`,
      ),
    ).toBe("launcher");
    expect(await launcher(page).getAttribute("aria-expanded")).toBe("false");
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(await violations(page)).toEqual([]);
    await context.close();
  });

  it("keeps the page's CSS out and its own in, in px whatever the root font size", async () => {
    const tenant = await widgetTenant();
    const { context, page } = await openPage(tenant.chatbotId);
    await launcher(page).click();
    await dialog(page).waitFor();
    const styles = await page.evaluate<Record<string, string>>(`(() => {
      const root = document.querySelector("#chatbot-widget").shadowRoot;
      const of = (selector, property) => getComputedStyle(root.querySelector(selector)).getPropertyValue(property);
      return {
        launcherFont: of(".launcher", "font-size"),
        launcherFamily: of(".launcher", "font-family"),
        textareaFont: of("textarea", "font-size"),
        textColor: of(".msg.assistant", "color"),
        logPadding: of(".log", "padding-top"),
        panelWidth: of(".panel", "width"),
        pageButton: getComputedStyle(document.querySelector("#own-button")).getPropertyValue("background-color"),
        documentSheets: String(document.styleSheets.length),
      };
    })()`);
    expect(styles).toEqual({
      launcherFont: "15px",
      launcherFamily: expect.not.stringContaining("Comic") as unknown as string,
      textareaFont: "14px",
      textColor: "rgb(17, 17, 17)",
      logPadding: "16px",
      panelWidth: "380px",
      // The page's own rules still hold for its own elements; the widget added no sheet to it.
      pageButton: "rgb(0, 255, 0)",
      documentSheets: "1",
    });
    await context.close();
  });

  it("speaks the page's language", async () => {
    const tenant = await widgetTenant();
    const { context, page } = await openPage(tenant.chatbotId, desktop, "de-DE");
    await launcher(page).waitFor();
    expect(await launcher(page).textContent()).toBe("Chat");
    expect(await launcher(page).getAttribute("aria-label")).toBe("Chat öffnen: Shop help");
    await launcher(page).click();
    await page.getByRole("textbox", { name: "Nachricht" }).waitFor();
    await page.getByRole("button", { name: "Senden" }).waitFor();
    await context.close();
  });

  it("shows a typing indicator, the chatbot's fallback for a failed reply, and an error with a retry", async () => {
    const modelId = `test.widget-${randomUUID()}`;
    const tenant = await widgetTenant({ kind: "bedrock", modelId });
    const bedrock = bedrockControl(environment.bedrockControlUrl ?? "");
    await bedrock.script(
      modelId,
      converseStream("We ship to Belgium.", { holdAfter: 0 }),
      converseStream("Half a rep", { ending: { exception: "modelStreamErrorException", message: "boom" } }),
      converseStream("It left our warehouse today."),
    );
    const { context, page } = await openPage(tenant.chatbotId);
    await launcher(page).click();

    // Until the first words arrive: the typing indicator, named for screen readers.
    await sendMessage(page, "Do you ship to Belgium?");
    const typing = page.locator("#chatbot-widget .typing");
    await typing.waitFor({ state: "visible" });
    expect(await typing.getAttribute("aria-label")).toBe("Typing…");
    expect(await log(page).locator(".msg.assistant").count()).toBe(1); // the welcome message only
    await bedrock.release(modelId);
    await expect.poll(() => log(page).textContent()).toContain("We ship to Belgium.");
    await typing.waitFor({ state: "hidden" });

    // The model fails mid-reply: what it had written goes, the chatbot's fallback takes its place.
    await sendMessage(page, "Where is my parcel?");
    const lastReply = log(page).locator(".msg.assistant").last();
    await expect.poll(() => lastReply.textContent()).toBe("Sorry, I don't know that one.");
    await expect.poll(() => lastReply.getAttribute("aria-busy")).toBeNull();
    expect(await log(page).textContent()).not.toContain("Half a rep");

    // The network fails: a polite line with a retry, which sends the message (once) when clicked.
    let refusals = 1;
    await page.route("**/api/message/stream", (route) =>
      refusals-- > 0 ? route.abort("connectionreset") : route.continue(),
    );
    await sendMessage(page, "And now?");
    const alert = page.getByRole("alert");
    await expect.poll(() => alert.textContent()).toContain("Sorry, your message could not be sent.");
    await page.getByRole("button", { name: "Try again" }).click();
    await expect.poll(() => log(page).textContent()).toContain("It left our warehouse today.");
    expect(await alert.isVisible()).toBe(false);
    expect(await log(page).locator(".msg.user").count()).toBe(3);
    const stored = await page.evaluate<{ conversationId: string }>(
      `JSON.parse(localStorage.getItem("chatbot-widget:${tenant.chatbotId}"))`,
    );
    const history = await call<{ messages: { role: string; content: string }[] }>(
      "GET",
      `/api/conversation/${stored.conversationId}/messages`,
      { key: tenant.apiKey },
    );
    expect(history.body.messages.map((message) => message.content)).toEqual([
      "Do you ship to Belgium?",
      "We ship to Belgium.",
      "Where is my parcel?",
      "Sorry, I don't know that one.",
      "And now?",
      "It left our warehouse today.",
    ]);
    expect(await violations(page)).toEqual([]);
    await context.close();
  });

  it("sends a pasted image", async () => {
    const tenant = await widgetTenant();
    const { context, page } = await openPage(tenant.chatbotId);
    await launcher(page).click();
    await dialog(page).waitFor();
    // What a browser dispatches when an image is pasted into the message box.
    await page.evaluate(`(() => {
      const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
      const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], "pasted.png", { type: "image/png" }));
      const box = document.querySelector("#chatbot-widget").shadowRoot.querySelector("textarea");
      box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    })()`);
    await page.getByRole("button", { name: "Remove image" }).waitFor();
    await sendMessage(page, "Pasted from my screen");
    await expect.poll(() => log(page).locator(".msg.assistant").count()).toBe(2);
    const stored = await page.evaluate<{ conversationId: string }>(
      `JSON.parse(localStorage.getItem("chatbot-widget:${tenant.chatbotId}"))`,
    );
    const history = await call<{ messages: { role: string; attachments: { media_type?: string }[] }[] }>(
      "GET",
      `/api/conversation/${stored.conversationId}/messages`,
      { key: tenant.apiKey },
    );
    expect(history.body.messages.find((message) => message.role === "user")?.attachments).toMatchObject([
      { media_type: "image/png" },
    ]);
    expect(await violations(page)).toEqual([]);
    await context.close();
  });

  it("answers to the page: open(), close(), reset() and the open, close and message events", async () => {
    const tenant = await widgetTenant();
    const { context, page } = await openPage(tenant.chatbotId);
    await launcher(page).waitFor();
    await page.evaluate(`(() => {
      window.__events = [];
      for (const name of ["open", "close", "message"])
        window.ChatbotWidget.on(name, (detail) => window.__events.push(name + (detail ? ":" + detail.role : "")));
    })()`);
    await page.evaluate("window.ChatbotWidget.open()");
    await dialog(page).waitFor();
    await sendMessage(page, "Hello from the page");
    // The reply's event comes when it is complete (its bubble shows from its first words).
    await expect.poll(() => page.evaluate<string[]>("window.__events")).toContain("message:assistant");
    await page.evaluate("window.ChatbotWidget.close()");
    await dialog(page).waitFor({ state: "hidden" });
    expect(await page.evaluate<string[]>("window.__events")).toEqual([
      "open",
      "message:user",
      "message:assistant",
      "close",
    ]);
    const before = await page.evaluate<{ visitor: string }>(
      `JSON.parse(localStorage.getItem("chatbot-widget:${tenant.chatbotId}"))`,
    );

    // reset(): the visitor is forgotten (a shared computer's sign-out); the next open starts afresh.
    await page.evaluate("window.ChatbotWidget.reset()");
    expect(await page.evaluate(`localStorage.getItem("chatbot-widget:${tenant.chatbotId}")`)).toBeNull();
    await page.evaluate("window.ChatbotWidget.open()");
    await dialog(page).waitFor();
    await expect.poll(() => log(page).textContent()).toContain("Welcome to the test shop!");
    expect(await log(page).textContent()).not.toContain("Hello from the page");
    await sendMessage(page, "Starting afresh");
    await expect.poll(() => log(page).locator(".msg.assistant").count()).toBe(2);
    const after = await page.evaluate<{ visitor: string }>(
      `JSON.parse(localStorage.getItem("chatbot-widget:${tenant.chatbotId}"))`,
    );
    expect(after.visitor).not.toBe(before.visitor);
    expect(await violations(page)).toEqual([]);
    await context.close();
  });

  it("speaks the chatbot's language when its settings name one, and Spanish and Dutch pages'", async () => {
    const french = await seedWidgetTenant({
      allowed_origins: [pages.origin],
      appearance: { title: "Aide", language: "fr" },
    });
    const { context, page } = await openPage(french.chatbotId, desktop, "en");
    await launcher(page).waitFor();
    expect(await launcher(page).textContent()).toBe("Discuter");
    expect(await launcher(page).getAttribute("aria-label")).toBe("Ouvrir le chat: Aide");
    await launcher(page).click();
    await page.getByRole("button", { name: "Envoyer" }).waitFor();
    await context.close();

    const tenant = await widgetTenant();
    for (const [lang, label, send] of [
      ["es-ES", "Abrir el chat: Shop help", "Enviar"],
      ["nl", "Chat openen: Shop help", "Versturen"],
    ] as const) {
      const opened = await openPage(tenant.chatbotId, desktop, lang);
      await launcher(opened.page).waitFor();
      expect(await launcher(opened.page).getAttribute("aria-label")).toBe(label);
      await launcher(opened.page).click();
      await opened.page.getByRole("button", { name: send }).waitFor();
      await opened.context.close();
    }
  });

  it("runs on the demo page npm start prints, against the demo chatbot, under its strict CSP", async () => {
    const { demoPageUrl, consoleUrl } = demo();
    expect(demoPageUrl, "npm start serves a demo page").toBeDefined();
    expect(new URL(demoPageUrl ?? "").origin).not.toBe(new URL(consoleUrl).origin);
    const context = await browser.newContext({ viewport: desktop });
    await recordPageEvents(context);
    const page = await context.newPage();
    const answer = await page.goto(demoPageUrl ?? "");
    expect(answer?.headers()["content-security-policy"]).not.toMatch(/unsafe-(inline|eval)/);
    await launcher(page).click();
    await dialog(page).waitFor();
    await expect.poll(() => log(page).textContent()).toContain("I'm the Demo Shop assistant");
    expect(await violations(page)).toEqual([]);
    await context.close();
  });

  it("shows nothing, and gets no session, on a page whose origin is not allowed", async () => {
    const tenant = await seedWidgetTenant({ allowed_origins: ["https://elsewhere.example"] });
    const context = await browser.newContext();
    await recordPageEvents(context);
    const page = await context.newPage();
    const session = page.waitForResponse(
      (response) => response.url().endsWith("/api/widget/session") && response.request().method() === "POST",
    );
    const warned = page.waitForEvent("console", (message) => message.text().includes("no session"));
    await page.goto(pages.url(tenant.chatbotId));
    const answer = await session;
    // (Its body, `Origin not allowed`, is pinned by the HTTP tests: the widget does not read it.)
    expect(answer.status()).toBe(403);
    await warned;
    expect(await page.locator("#chatbot-widget").count()).toBe(0);
    expect(
      await page.evaluate<string | null>(`localStorage.getItem("chatbot-widget:${tenant.chatbotId}")`),
    ).toBeNull();
    expect(await violations(page)).toEqual([]);
    await context.close();
  });
});
