/**
 * Settings → API in Chromium: the API's base URL and streaming endpoint, a key created with a name and scope (shown
 * once, copied with its button, with a ready curl command naming one of the organization's
 * chatbots) that then works over HTTP, and revoked with a confirmation, after which it is refused.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkPage,
  demo,
  go,
  hasChromium,
  launch,
  openConsole,
  screenshot,
  signIn,
} from "#test/support/browser";
import { call, isLocal } from "#test/support/harness";

let browser: Browser;

describe.runIf(isLocal && hasChromium)("Settings → API", () => {
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("creates a key that answers 200 with the curl it shows and streams at the URL it shows, and revokes it (then 401)", async () => {
    const console = await openConsole(browser);
    const { page } = console;
    await signIn(page, demo().consoleEmail, demo().consolePassword);
    await go(page, "Settings → API");
    expect(await page.getByRole("textbox", { name: "API base URL" }).inputValue()).toBe(demo().baseUrl);
    const streamEndpoint = await page.getByRole("textbox", { name: "Streaming endpoint" }).inputValue();
    expect(streamEndpoint).toBe(`${new URL(demo().consoleUrl).origin}/api/message/stream`);

    await page.getByLabel("Name").fill("Website widget");
    await page.getByRole("combobox", { name: "Scope" }).selectOption("chat");
    await page.getByRole("button", { name: "Create key" }).click();
    const shown = page.getByRole("textbox", { name: "The new API key" });
    await shown.waitFor();
    const key = await shown.inputValue();
    expect(key).toMatch(/^cbk_[0-9A-Za-z]{38}$/);
    await page.getByRole("button", { name: "Copy key" }).click();
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(key);
    await page.getByRole("button", { name: /^Copied/ }).waitFor();

    const command = (await page.locator("pre.command code").textContent()) ?? "";
    expect(command).toContain(`${demo().baseUrl}/api/conversation`);
    expect(command).toContain(`Authorization: Bearer ${key}`);
    const chatbotId = /"chatbot_id":"([0-9a-f-]{36})"/.exec(command)?.[1];
    expect(chatbotId).toBe(demo().chatbotId);
    await checkPage(console, "Settings → API with a new key");
    await screenshot(page, "settings-api-new-key");

    // The command, as a terminal would send it.
    const started = await call("POST", "/api/conversation", { key, body: { chatbot_id: chatbotId } });
    expect(started.status).toBe(200);
    // And a streamed turn at the streaming endpoint the page shows.
    const streamed = await fetch(streamEndpoint, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        conversation_id: (started.body as { conversation_id: string }).conversation_id,
        message: "Hello",
      }),
      signal: AbortSignal.timeout(30_000),
    });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await streamed.text();
    expect(events).toContain("event: message.start");
    expect(events).toContain("event: message.end");

    await page.getByRole("button", { name: "I have stored the key" }).click();
    expect(await shown.count()).toBe(0);
    const row = page.getByRole("row", { name: /Website widget/ });
    await expect.poll(() => row.textContent()).toContain(key.slice(0, 10));
    expect(await row.textContent()).not.toContain(key);
    await screenshot(page, "settings-api");

    await page.getByRole("button", { name: "Revoke Website widget" }).click();
    const dialog = page.getByRole("dialog", { name: "Revoke the key “Website widget”?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Revoke key" }).click();
    await dialog.waitFor({ state: "hidden" });
    await expect.poll(() => row.count()).toBe(0);
    const refused = await call("POST", "/api/conversation", { key, body: { chatbot_id: chatbotId } });
    expect([refused.status, refused.body]).toEqual([401, { detail: "Invalid API key" }]);
    await console.context.close();
  });

  it("shows the API's own message when a key cannot be created", async () => {
    const console = await openConsole(browser);
    const { page } = console;
    await signIn(page, demo().consoleEmail, demo().consolePassword);
    await go(page, "Settings → API");
    // A name of spaces passes the browser's `required` and is refused by the API.
    await page.getByLabel("Name").fill(" ");
    await page.getByRole("button", { name: "Create key" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/name/i);
    await console.context.close();
  });

  it("takes a new user five clicks from the sign-in page to a 200 from POST /api/conversation", async () => {
    const console = await openConsole(browser);
    const { page } = console;
    let clicks = 0;
    const click = async (locator: ReturnType<typeof page.getByRole>) => {
      clicks++;
      await locator.click();
    };
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    // Typing the e-mail, password and key name; a tab between the two sign-in fields.
    await page.getByLabel("E-mail address").focus();
    await page.keyboard.type(demo().consoleEmail);
    await page.keyboard.press("Tab");
    await page.keyboard.type(demo().consolePassword);
    await click(page.getByRole("button", { name: "Sign in" }));
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await click(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings → API" }));
    await click(page.getByRole("textbox", { name: "Name" }));
    await page.keyboard.type("My first key");
    await click(page.getByRole("button", { name: "Create key" }));
    await click(page.getByRole("button", { name: "Copy command" }));
    const command = await page.evaluate<string>("navigator.clipboard.readText()");

    // Pasted into a terminal: the command's URL, header and body, sent as curl sends them.
    const url = /curl -s -X POST (\S+)/.exec(command)?.[1] ?? "";
    const authorization = /-H "Authorization: ([^"]+)"/.exec(command)?.[1] ?? "";
    const body = /-d '([^']+)'/.exec(command)?.[1] ?? "";
    const answer = await fetch(url, {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      body,
    });
    expect(answer.status).toBe(200);
    expect(clicks).toBe(5);
    await console.context.close();
  });
});
