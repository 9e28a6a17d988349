/**
 * The Webhooks page in Chromium, against a receiver of the test suite: an admin adds an endpoint
 * (its signing secret shown once, and it verifies the deliveries that follow), reads the delivery
 * log (state, HTTP status, latency, each attempt), redelivers (the same webhook-id again), rotates
 * the secret (the overlap shown, and both secrets sign meanwhile), switches the endpoint off (no
 * delivery while off) and on, changes its events, and deletes it; a viewer reads it all without a
 * write control. Each change is checked where it lands: the API's stored endpoint, or the receiver.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getWebhookEndpoint } from "#functions/domain/webhooks";
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
  writeControls,
} from "#test/support/browser";
import { api, domain, isLocal } from "#test/support/harness";
import { bodyOf, receiver, type TestReceiver } from "#test/support/webhooks";

let browser: Browser;
let admin: ConsolePage;
let page: Page;
let hook: TestReceiver;
let endpointId: string;
let firstSecret: string;
const stamp = Date.now().toString(36);

/** Starts a conversation of the demo organization: a conversation.created event. */
async function newConversation(external: string): Promise<string> {
  const started = await api.startConversation(demo().apiKey, {
    chatbot_id: demo().chatbotId,
    external_id: external,
  });
  if (started.status !== 200) throw new Error(`not started: ${started.status} ${started.text}`);
  return started.body.conversation_id;
}

/** The deliveries the receiver got of the conversations this test started (by external id). */
async function receivedFor(external: string) {
  return (await hook.requests()).filter((request) => {
    const data = bodyOf(request).data as { external_id?: string };
    return data.external_id === external;
  });
}

const log = () => page.getByRole("article", { name: "Deliveries" });

describe.runIf(isLocal && hasChromium)("the Webhooks page", () => {
  beforeAll(async () => {
    hook = receiver(`console-${stamp}`);
    browser = await launch();
    admin = await openConsole(browser);
    page = admin.page;
    await signIn(page, demo().consoleEmail, demo().consolePassword);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("adds an endpoint, shows its secret once, and its first delivery in the log", async () => {
    await go(page, "Webhooks");
    const form = page.getByRole("region", { name: "Add an endpoint" });
    await form.getByLabel("URL").fill(hook.url);
    await form.getByLabel("Description (optional)").fill(`Console test ${stamp}`);
    // Only conversation.created: the defaults also tick conversation.handoff.
    await form.getByRole("checkbox", { name: /^conversation\.handoff/ }).uncheck();
    await form.getByRole("button", { name: "Add endpoint" }).click();
    const secretBox = page.getByRole("textbox", { name: "Signing secret" });
    await secretBox.waitFor();
    firstSecret = await secretBox.inputValue();
    expect(firstSecret).toMatch(/^whsec_/);
    await hook.configure({ secrets: [firstSecret] });
    await checkPage(admin, "webhooks with a new secret");
    await screenshot(page, "webhooks-new-secret");

    // Shown once: a reload shows the endpoint, never the secret.
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor();
    await settled(page);
    expect(await page.content()).not.toContain(firstSecret);
    await page.getByRole("link", { name: hook.url }).click();
    await page.getByRole("heading", { level: 1, name: "Webhook endpoint" }).waitFor();
    endpointId = new URL(page.url()).pathname.split("/").at(-1) ?? "";
    expect(
      await getWebhookEndpoint(domain(), { organizationId: demo().organizationId, endpointId }),
    ).toMatchObject({
      url: hook.url,
      events: ["conversation.created"],
      enabled: true,
    });

    const external = `hook-first-${stamp}`;
    await newConversation(external);
    await expect
      .poll(async () => (await receivedFor(external)).map((request) => request.verified))
      .toEqual([[true]]);
    const row = log()
      .getByRole("row", { name: /conversation\.created/ })
      .first();
    await expect.poll(() => row.textContent()).toMatch(/delivered.*HTTP 200\d+ ms1/);
    await checkPage(admin, "webhook endpoint");
  });

  it("redelivers a delivery with the same webhook-id", async () => {
    const [first] = await hook.requests();
    const row = log().getByRole("row", { name: new RegExp(first?.webhookId ?? "none") });
    await row.getByRole("button", { name: `Redeliver ${first?.webhookId}` }).click();
    await expect
      .poll(async () => (await hook.requests()).map((request) => request.webhookId))
      .toEqual([first?.webhookId, first?.webhookId]);
    await expect.poll(() => row.locator("details summary").textContent()).toMatch(/^2 attempts/);
    await row.locator("details summary").click();
    await expect
      .poll(() => row.locator("ol.attempts").textContent())
      .toMatch(/#2 .*\(manual\): HTTP 200 in \d+ ms/);
    await screenshot(page, "webhook-endpoint");
  });

  it("rotates the secret: the overlap is shown and both secrets sign meanwhile", async () => {
    await page.getByRole("button", { name: "Rotate secret" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Rotate secret" }).click();
    const secretBox = page.getByRole("textbox", { name: "Signing secret" });
    await secretBox.waitFor();
    const second = await secretBox.inputValue();
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(firstSecret);
    const stored = await getWebhookEndpoint(domain(), { organizationId: demo().organizationId, endpointId });
    expect(stored.previousSecretExpiresAt).toBeDefined();
    await page.getByText(/every delivery carries two signatures/).waitFor();
    await page.getByText(/^The previous secret also signs until /).waitFor();

    await hook.configure({ secrets: [firstSecret, second] });
    const external = `hook-rotated-${stamp}`;
    await newConversation(external);
    await expect
      .poll(async () => (await receivedFor(external)).map((request) => request.verified))
      .toEqual([[true, true]]);
  });

  it("switches the endpoint off (nothing is sent) and on again, and changes its events", async () => {
    await page.getByRole("button", { name: "Switch off" }).click();
    await page.getByText("Switched off: no events are sent to it until it is switched on.").waitFor();
    await expect
      .poll(
        async () =>
          (await getWebhookEndpoint(domain(), { organizationId: demo().organizationId, endpointId })).enabled,
      )
      .toBe(false);
    const external = `hook-off-${stamp}`;
    await newConversation(external);
    // Deliveries take well under a second here; give an off endpoint five to prove it gets none.
    await page.waitForTimeout(5_000);
    expect(await receivedFor(external)).toEqual([]);
    expect(
      await log()
        .getByRole("button", { name: /^Redeliver/ })
        .first()
        .isDisabled(),
    ).toBe(true);

    await page.getByRole("button", { name: "Switch on" }).click();
    await page.getByText("Switched on: events are sent to it again.").waitFor();
    await page.getByRole("button", { name: "Edit", exact: true }).click();
    const edit = page.getByRole("form", { name: "Edit the endpoint" });
    await edit.getByRole("checkbox", { name: /^conversation\.closed/ }).check();
    await edit.getByRole("button", { name: "Save endpoint" }).click();
    await page.getByText("Saved.").waitFor();
    expect(
      await getWebhookEndpoint(domain(), { organizationId: demo().organizationId, endpointId }),
    ).toMatchObject({
      enabled: true,
      events: ["conversation.created", "conversation.closed"],
    });
    await checkPage(admin, "webhook endpoint after changes");
  });

  it("shows a viewer the endpoint and its log, without a write control", async () => {
    const viewer = await openConsole(browser);
    await signIn(viewer.page, demo().viewerEmail, demo().viewerPassword);
    await go(viewer.page, "Webhooks");
    expect(await writeControls(viewer.page)).toEqual([]);
    await viewer.page.getByRole("link", { name: hook.url }).click();
    await viewer.page.getByRole("heading", { level: 1, name: "Webhook endpoint" }).waitFor();
    await viewer.page
      .getByRole("article", { name: "Deliveries" })
      .getByRole("row", { name: /conversation\.created/ })
      .first()
      .waitFor();
    expect(await writeControls(viewer.page)).toEqual([]);
    await checkPage(viewer, "webhook endpoint (viewer)");
    await viewer.context.close();
  });

  it("deletes the endpoint", async () => {
    await page.getByRole("button", { name: "Delete endpoint" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete endpoint" }).click();
    await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor();
    await settled(page);
    expect(await page.getByRole("link", { name: hook.url }).count()).toBe(0);
    await expect(
      getWebhookEndpoint(domain(), { organizationId: demo().organizationId, endpointId }),
    ).rejects.toThrow();
  });
});
