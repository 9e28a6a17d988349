/**
 * The Inbox in Chromium: a conversation handed to a person is listed first; a visitor's message
 * sent over the public API meanwhile appears in the open Inbox without a reload; an admin replies
 * from it (the reply is in the public history as role `agent` under their display name), hands
 * back, takes over and closes (each change seen over the API); a viewer follows it without a
 * write control; a chatbot's handoff settings are edited on its form and then act on a turn; with
 * more conversations waiting than one page holds, the Inbox says so and links to them all; and the
 * navigation's Inbox entry counts who waits, on every page, and (when the person turned them on) a
 * browser notification and a chime tell them when a conversation starts waiting.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChatbot } from "#functions/domain/chatbots";
import { inviteMember } from "#functions/domain/people";
import {
  type ConsolePage,
  checkPage,
  demo,
  desktop,
  go,
  hasChromium,
  launch,
  openConsole,
  phone,
  screenshot,
  settled,
  signIn,
  writeControls,
} from "#test/support/browser";
import { api, call, domain, isLocal } from "#test/support/harness";
import { type Person, seedManagedTenant, seedPerson } from "#test/support/management";

let browser: Browser;
let admin: ConsolePage;
let page: Page;
let agent: Person;
const agentName = "Ada Agent";
const stamp = Date.now().toString(36);
const externalId = `inbox-${stamp}`;
let conversationId: string;

async function startConversation(external: string): Promise<string> {
  const started = await api.startConversation(demo().apiKey, {
    chatbot_id: demo().chatbotId,
    external_id: external,
  });
  if (started.status !== 200) throw new Error(`not started: ${started.status} ${started.text}`);
  return started.body.conversation_id;
}

async function say(id: string, message: string): Promise<{ status: string; messages: unknown[] }> {
  const answer = await api.sendMessage(demo().apiKey, { conversation_id: id, message });
  if (answer.status !== 200) throw new Error(`message refused: ${answer.status} ${answer.text}`);
  return answer.body as unknown as { status: string; messages: unknown[] };
}

async function handOff(id: string): Promise<void> {
  const answer = await call("POST", `/api/conversation/${id}/handoff`, { key: demo().apiKey, body: {} });
  if (answer.status !== 200) throw new Error(`handoff refused: ${answer.status} ${answer.text}`);
}

/** The conversation's status as the public API reads it. */
async function statusOverApi(id: string): Promise<string> {
  const answer = await call<{ status: string }>("GET", `/api/conversation/${id}`, { key: demo().apiKey });
  return answer.body.status;
}

const button = (name: string) => page.getByRole("button", { name, exact: true });

describe.runIf(isLocal && hasChromium)("the Inbox", () => {
  beforeAll(async () => {
    // A person of the demo organization with a display name of their own, so replies show it.
    agent = await seedPerson("agent");
    await inviteMember(
      domain(),
      {
        find: async () => ({ userId: agent.userId, email: agent.email }),
        invite: async () => ({ userId: agent.userId, email: agent.email, invited: false }),
      },
      { organizationId: demo().organizationId, email: agent.email, role: "admin", displayName: agentName },
    );
    conversationId = await startConversation(externalId);
    await say(conversationId, "Hello, my parcel arrived damaged.");
    await handOff(conversationId);
    browser = await launch();
    admin = await openConsole(browser);
    page = admin.page;
    await signIn(page, agent.email, agent.password);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("lists waiting conversations first and shows a visitor's new message without a reload", async () => {
    await go(page, /^Inbox/, "Inbox");
    // The browser tab carries the count the list's heading shows, for a person in another tab.
    // (Read together: other tests may hand conversations of this organization over meanwhile.)
    const tabAndHeading = async () => {
      const heading = await page
        .getByRole("heading", { level: 2, name: /^Waiting for a person/ })
        .textContent();
      const count = /\((\d+\+?)\)/.exec(heading ?? "")?.[1] ?? "none";
      return {
        someoneWaits: Number.parseInt(count, 10) > 0,
        tabSaysIt: (await page.title()) === `(${count}) Inbox · Chatbot console`,
      };
    };
    await expect.poll(tabAndHeading).toEqual({ someoneWaits: true, tabSaysIt: true });
    const waiting = page.getByRole("list", { name: /^Waiting for a person/ });
    await waiting.getByRole("link", { name: new RegExp(externalId) }).click();
    await page.getByRole("heading", { level: 2, name: externalId }).waitFor();
    const log = page.getByRole("log", { name: "Messages" });
    await log.getByText("Hello, my parcel arrived damaged.").waitFor();
    await log.getByText(/^Handed to a person by the client application ·/).waitFor();
    expect(await button("Take over").isDisabled()).toBe(true);
    expect(await button("Hand back").isEnabled()).toBe(true);
    expect(await button("Close").isEnabled()).toBe(true);

    // A mark on the window survives only if the page is not loaded again.
    await page.evaluate("window.inboxMark = 'still here'");
    const answer = await say(conversationId, "Is anyone there? The box is crushed.");
    expect(answer).toMatchObject({ status: "handoff", messages: [] });
    await log.getByText("Is anyone there? The box is crushed.").waitFor({ timeout: 30_000 });
    expect(await page.evaluate("window.inboxMark")).toBe("still here");
    await checkPage(admin, "inbox");
  });

  it("stops looking for news while the tab is hidden and once the page is left", async () => {
    // The Inbox's own requests. (The navigation's count keeps looking for waiting conversations on
    // every page, hidden or not: that is what tells a person in another tab; tested below.)
    const polls: string[] = [];
    const onRequest = (request: { url: () => string }) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith("/manage/conversations") && url.searchParams.get("status") !== "handoff")
        polls.push(request.url());
    };
    const setHidden = (hidden: boolean) =>
      page.evaluate(
        `Object.defineProperty(document, "hidden", { configurable: true, get: () => ${hidden} });
         document.dispatchEvent(new Event("visibilitychange"));`,
      );
    // Longer than both polling intervals: a page still polling would ask at least twice meanwhile.
    const quietWindow = async () => {
      await page.waitForTimeout(1_500); // requests already on their way
      polls.length = 0;
      await page.waitForTimeout(7_000);
      return [...polls];
    };
    page.on("request", onRequest);
    try {
      await expect.poll(() => polls.length).toBeGreaterThan(0);
      await setHidden(true);
      expect(await quietWindow(), "requests while hidden").toEqual([]);
      await setHidden(false);
      await expect.poll(() => polls.length).toBeGreaterThan(0);
      await go(page, "Overview");
      expect(await quietWindow(), "requests after leaving the Inbox").toEqual([]);
    } finally {
      page.off("request", onRequest);
    }
    await page.goBack();
    await page.getByRole("heading", { level: 2, name: externalId }).waitFor();
    await settled(page);
  });

  it("sends the admin's reply as role agent under their display name", async () => {
    const reply = "Sorry to hear that! I am sending a new one today.";
    await page.getByLabel("Reply to the visitor").fill(reply);
    await button("Send reply").click();
    const bubble = page.getByRole("log", { name: "Messages" }).locator(".bubble.agent", { hasText: reply });
    await bubble.waitFor();
    expect((await bubble.locator(".who").textContent()) ?? "").toMatch(
      new RegExp(`^${agentName} \\(person\\)`),
    );
    expect(await page.getByLabel("Reply to the visitor").inputValue()).toBe("");
    await screenshot(page, "inbox");

    const history = await api.listMessages(demo().apiKey, conversationId);
    expect(history.status).toBe(200);
    const last = history.body.messages.at(-1) as { role: string; content: string; agent_name?: string };
    expect(last).toMatchObject({ role: "agent", content: reply, agent_name: agentName });
  });

  it("lists it under the status filter's handoff, and its transcript names the person and the changes", async () => {
    await page.goto(`${demo().consoleUrl}/conversations?status=handoff&external_id=${externalId}`);
    await page.getByRole("heading", { level: 1, name: "Conversations" }).waitFor();
    await settled(page);
    expect(await page.getByRole("combobox", { name: "Status" }).inputValue()).toBe("handoff");
    expect(await page.getByRole("option", { name: "With a person" }).count()).toBe(1);
    await expect.poll(() => page.getByRole("row").count()).toBe(2);
    await page.getByRole("link", { name: /^Open/ }).click();
    await page.getByRole("heading", { level: 1, name: "Conversation" }).waitFor();
    await settled(page);
    const transcript = page.getByRole("article", { name: "Transcript" });
    await transcript.getByText(/^Handed to a person by the client application ·/).waitFor();
    expect((await transcript.locator(".bubble.agent .who").textContent()) ?? "").toMatch(
      new RegExp(`^${agentName} \\(person\\)`),
    );
    await page.getByRole("link", { name: "Answer in the Inbox" }).click();
    await page.getByRole("heading", { level: 1, name: "Inbox" }).waitFor();
    await page.getByRole("heading", { level: 2, name: externalId }).waitFor();
    await settled(page);
  });

  it("hands back, takes over and closes, each change made on the API", async () => {
    const log = page.getByRole("log", { name: "Messages" });
    await button("Hand back").click();
    await expect.poll(() => statusOverApi(conversationId)).toBe("open");
    await log.getByText(new RegExp(`^Handed back to the chatbot by ${agentName} ·`)).waitFor();
    await expect.poll(() => button("Take over").isEnabled()).toBe(true);
    expect(await button("Hand back").isDisabled()).toBe(true);

    await button("Take over").click();
    await expect.poll(() => statusOverApi(conversationId)).toBe("handoff");
    await expect.poll(() => button("Hand back").isEnabled()).toBe(true);
    expect(await button("Take over").isDisabled()).toBe(true);

    await button("Close").click();
    await page.getByRole("dialog").getByRole("button", { name: "Close conversation" }).click();
    await expect.poll(() => statusOverApi(conversationId)).toBe("closed");
    await log.getByText(new RegExp(`^Conversation closed by ${agentName} ·`)).waitFor();
    await expect.poll(() => button("Close").isDisabled()).toBe(true);
    expect(await button("Take over").isDisabled()).toBe(true);
    expect(await button("Hand back").isDisabled()).toBe(true);
    expect(await page.getByLabel("Reply to the visitor").isDisabled()).toBe(true);
    expect(await button("Send reply").isDisabled()).toBe(true);
    await checkPage(admin, "inbox, closed conversation");
  });

  it("shows a viewer the conversation and its new messages, with no write control", async () => {
    const id = await startConversation(`inbox-viewer-${stamp}`);
    await say(id, "I would like to talk to someone.");
    await handOff(id);
    const viewer = await openConsole(browser);
    await signIn(viewer.page, demo().viewerEmail, demo().viewerPassword);
    await viewer.page.goto(`${demo().consoleUrl}/inbox?conversation=${id}`);
    await viewer.page.getByRole("heading", { level: 1, name: "Inbox" }).waitFor();
    const log = viewer.page.getByRole("log", { name: "Messages" });
    await log.getByText("I would like to talk to someone.").waitFor();
    expect(await writeControls(viewer.page)).toEqual([]);
    await say(id, "Hello? Is this thing on?");
    await log.getByText("Hello? Is this thing on?").waitFor({ timeout: 30_000 });
    expect(await writeControls(viewer.page)).toEqual([]);
    await checkPage(viewer, "inbox (viewer)");
    await viewer.context.close();
  });

  it("edits a chatbot's handoff settings, which then hand a visitor to a person", async () => {
    const bot = await createChatbot(domain(), {
      organizationId: demo().organizationId,
      name: `Handoff bot ${stamp}`,
    });
    await page.goto(`${demo().consoleUrl}/chatbots/${bot.chatbotId}`);
    await page.getByRole("heading", { level: 1, name: bot.name }).waitFor();
    await settled(page);
    expect(await page.getByLabel("Visitors and the model may ask for a person").isChecked()).toBe(false);
    await page.getByLabel("Visitors and the model may ask for a person").check();
    await page.getByLabel("Handoff message").fill("A colleague will be with you in a moment.");
    await page.getByLabel("Handoff phrases").fill("speak to a human\nreal person");
    await page.getByLabel("Close after inactivity (minutes)").fill("90");
    await button("Save settings").click();
    await page.getByRole("status").getByText("Saved.").waitFor();
    await page.reload();
    await page.getByRole("heading", { level: 1, name: bot.name }).waitFor();
    await settled(page);
    expect(await page.getByLabel("Visitors and the model may ask for a person").isChecked()).toBe(true);
    expect(await page.getByLabel("Handoff phrases").inputValue()).toBe("speak to a human\nreal person");
    expect(await page.getByLabel("Close after inactivity (minutes)").inputValue()).toBe("90");
    await checkPage(admin, "chatbot settings with handoff");

    const started = await api.startConversation(demo().apiKey, { chatbot_id: bot.chatbotId });
    const id = started.body.conversation_id;
    const answer = await api.sendMessage(demo().apiKey, {
      conversation_id: id,
      message: "Can I SPEAK TO A HUMAN please?",
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      status: "handoff",
      messages: [{ role: "assistant", content: "A colleague will be with you in a moment." }],
    });
    expect(await statusOverApi(id)).toBe("handoff");
  });
});

describe.runIf(isLocal && hasChromium)("the Inbox with more than a page waiting", () => {
  it("shows 100 of 101 waiting conversations, says more are waiting and links to them all", async () => {
    const tenant = await seedManagedTenant({ rateLimit: 10_000 });
    const waiting: string[] = [];
    // 101 conversations handed to a person, over the public API, ten at a time.
    for (let batch = 0; batch < 101; batch += 10) {
      const ids = await Promise.all(
        Array.from({ length: Math.min(10, 101 - batch) }, async () => {
          // Seeding, not the subject: a 503 (the table slow on a busy machine) is retried as its
          // Retry-After says, as any client would.
          let started = await api.startConversation(tenant.apiKey, { chatbot_id: tenant.chatbotId });
          for (let retry = 0; started.status === 503 && retry < 3; retry++) {
            await new Promise((wait) =>
              setTimeout(wait, 1000 * Number(started.headers.get("retry-after") ?? 1)),
            );
            started = await api.startConversation(tenant.apiKey, { chatbot_id: tenant.chatbotId });
          }
          if (started.status !== 200) throw new Error(`not started: ${started.status} ${started.text}`);
          const id = started.body.conversation_id;
          const answer = await call("POST", `/api/conversation/${id}/handoff`, {
            key: tenant.apiKey,
            body: {},
          });
          if (answer.status !== 200) throw new Error(`handoff refused: ${answer.status} ${answer.text}`);
          return id;
        }),
      );
      waiting.push(...ids);
    }
    const ownBrowser = await launch();
    try {
      const { page: inbox } = await openConsole(ownBrowser);
      await signIn(inbox, tenant.admin.email, tenant.admin.password);
      // The Inbox's address before it had its own navigation entry still opens it.
      await inbox.goto(`${demo().consoleUrl}/conversations/inbox`);
      await inbox.getByRole("heading", { level: 2, name: "Waiting for a person (100+)" }).waitFor();
      expect(new URL(inbox.url()).pathname).toBe("/inbox");
      await expect.poll(() => inbox.title()).toBe("(100+) Inbox · Chatbot console");
      expect(
        await inbox
          .getByRole("navigation", { name: "Main" })
          .getByRole("link", { name: /^Inbox/ })
          .textContent(),
      ).toBe("Inbox100+ waiting");
      const list = inbox.getByRole("list", { name: /^Waiting for a person/ });
      expect(await list.getByRole("listitem").count()).toBe(100);
      await inbox.getByText(/More are waiting than these 100, the most recently active\./).waitFor();
      await inbox.getByRole("link", { name: "All waiting conversations" }).click();
      await inbox.getByRole("heading", { level: 1, name: "Conversations" }).waitFor();
      // The count follows the person to every page.
      expect(await inbox.title()).toBe("(100+) Conversations · Chatbot console");
      expect(new URL(inbox.url()).search).toBe("?status=handoff");
      expect(await inbox.getByRole("combobox", { name: "Status" }).inputValue()).toBe("handoff");
    } finally {
      await ownBrowser.close();
    }
    expect(waiting).toHaveLength(101);
  });
});

/**
 * What the page's alerts did, recorded in the page: every notification shown (the browser's own
 * Notification, wrapped) and every tone started (AudioContext's oscillators, wrapped). Headless
 * Chromium shows no notification and plays to no speaker; the calls are what the page controls.
 */
const recordAlerts = `(() => {
  window.alerts = [];
  const Shown = window.Notification;
  class Recorded extends Shown {
    constructor(title, options) {
      super(title, options);
      window.alerts.push({ kind: "notification", title, body: options && options.body });
    }
  }
  Object.defineProperty(Recorded, "permission", { get: () => Shown.permission });
  Recorded.requestPermission = (...args) => Shown.requestPermission(...args);
  window.Notification = Recorded;
  const Audio = window.AudioContext;
  window.AudioContext = class extends Audio {
    createOscillator() {
      const tone = super.createOscillator();
      const start = tone.start.bind(tone);
      tone.start = (...args) => {
        window.alerts.push({ kind: "tone", frequency: tone.frequency.value });
        return start(...args);
      };
      return tone;
    }
  };
})()`;

interface Alert {
  kind: "notification" | "tone";
  title?: string;
  body?: string;
}

describe.runIf(isLocal && hasChromium)("the Inbox entry's count, notification and chime", () => {
  it("counts waiting conversations on every page and alerts the person the ways they turned on", async () => {
    // An organization of its own: nobody else hands its conversations over meanwhile.
    const tenant = await seedManagedTenant();
    const handOffNew = async (external: string) => {
      const started = await api.startConversation(tenant.apiKey, {
        chatbot_id: tenant.chatbotId,
        external_id: external,
      });
      const id = started.body.conversation_id;
      const answer = await call("POST", `/api/conversation/${id}/handoff`, { key: tenant.apiKey, body: {} });
      if (answer.status !== 200) throw new Error(`handoff refused: ${answer.status} ${answer.text}`);
    };
    const ownBrowser = await launch();
    try {
      const context = await ownBrowser.newContext({ viewport: desktop, permissions: ["notifications"] });
      await context.addInitScript(recordAlerts);
      const console = await context.newPage();
      const alerts = () => console.evaluate<Alert[]>("window.alerts");
      const inboxLink = console
        .getByRole("navigation", { name: "Main" })
        .getByRole("link", { name: /^Inbox/ });
      await console.goto(demo().consoleUrl);
      await signIn(console, tenant.admin.email, tenant.admin.password);
      await inboxLink.click();
      await console.getByRole("heading", { level: 1, name: "Inbox" }).waitFor();
      const choices = console.getByRole("group", { name: "When a visitor starts waiting" });
      expect(await choices.getByLabel("Browser notification").isChecked()).toBe(false);
      await choices.getByLabel("Browser notification").check();
      await choices.getByLabel("Sound").check();
      // Turning the sound on plays it once: the person hears what it will sound like.
      await expect.poll(alerts).toEqual([
        { kind: "tone", frequency: 880 },
        { kind: "tone", frequency: 1318.5 },
      ]);
      await console.evaluate("window.alerts.length = 0");

      await console.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Members" }).click();
      await console.getByRole("heading", { level: 1, name: "Members" }).waitFor();
      expect(await inboxLink.textContent()).toBe("Inbox");
      expect(await console.title()).toBe("Members · Chatbot console");

      await handOffNew(`waiting-one-${stamp}`);
      await expect.poll(() => inboxLink.textContent()).toBe("Inbox1 waiting");
      expect(await inboxLink.getAttribute("aria-current")).toBeNull();
      expect(await console.title()).toBe("(1) Members · Chatbot console");
      await expect.poll(alerts).toEqual([
        { kind: "notification", title: "A visitor is waiting for a person", body: `waiting-one-${stamp}` },
        { kind: "tone", frequency: 880 },
        { kind: "tone", frequency: 1318.5 },
      ]);
      await checkPage({ page: console, context, problems: [] }, "members with someone waiting");

      // Turned off again (the choices are remembered): the count still follows, nothing else.
      await console.evaluate("window.alerts.length = 0");
      await inboxLink.click();
      await console.getByRole("heading", { level: 1, name: "Inbox" }).waitFor();
      expect(await choices.getByLabel("Browser notification").isChecked()).toBe(true);
      await choices.getByLabel("Browser notification").uncheck();
      await choices.getByLabel("Sound").uncheck();
      await handOffNew(`waiting-two-${stamp}`);
      await expect.poll(() => inboxLink.textContent()).toBe("Inbox2 waiting");
      await console.getByRole("heading", { level: 2, name: "Waiting for a person (2)" }).waitFor();
      expect(await alerts()).toEqual([]);
      await context.close();

      // On a phone the count is on the Menu button, which folds the navigation.
      const phoneConsole = await openConsole(ownBrowser, phone);
      await signIn(phoneConsole.page, tenant.admin.email, tenant.admin.password);
      await expect
        .poll(() => phoneConsole.page.getByRole("button", { name: /^Menu/ }).textContent())
        .toBe("Menu2 waiting");
    } finally {
      await ownBrowser.close();
    }
  });
});
