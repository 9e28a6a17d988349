/**
 * Console → Analytics: the totals, the outcome chart's table for today and the handoff reasons read
 * off the page equal what `GET /manage/analytics` answers for the demo organization; the CSV export
 * holds the same day; a transcript shows a reply's thumb and the conversation's outcome and rating.
 * At 1280 and 375 px.
 */
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
import { manage, seedKey } from "#test/support/management";
import { eventually } from "#test/support/webhooks";

interface Figures {
  conversations: number;
  resolved: number;
  handed_off: number;
  unresolved: number;
  abandoned: number;
  handoff_reasons: Record<string, number>;
  feedback_up: number;
  ratings: number;
}
interface Analytics {
  series: (Figures & { date: string })[];
  totals: Figures;
}

let browser: Browser;
let admin: ConsolePage;
let page: Page;
let manageKey: string;
let answeredId: string;
const today = () => new Date().toISOString().slice(0, 10);
const analytics = async () =>
  (
    await manage<Analytics>("GET", `/manage/analytics?from=${today()}&to=${today()}`, {
      as: manageKey,
      organization: demo().organizationId,
    })
  ).body;

describe.runIf(isLocal && hasChromium)("analytics in the console", () => {
  beforeAll(async () => {
    manageKey = (await seedKey(demo().organizationId, "manage")).key;
    const before = (await analytics()).totals;
    const key = demo().apiKey;
    const start = async () =>
      (await api.startConversation(key, { chatbot_id: demo().chatbotId })).body.conversation_id;
    // One answered and thumbed up, one rated 2, one handed off by the API client.
    answeredId = await start();
    const turn = await api.sendMessage(key, { conversation_id: answeredId, message: "Hello!" });
    const replyId = turn.body.messages.at(-1)?.message_id ?? "";
    await call("POST", `/api/message/${replyId}/feedback`, { key, body: { rating: "up", comment: "Nice" } });
    const rated = await start();
    await api.sendMessage(key, { conversation_id: rated, message: "Hello again" });
    await call("POST", `/api/conversation/${rated}/rating`, { key, body: { score: 2 } });
    const handed = await start();
    await call("POST", `/api/conversation/${handed}/handoff`, { key, body: {} });
    // The counters follow the table's stream: wait until they hold all three.
    await eventually(
      async () => {
        const totals = (await analytics()).totals;
        return [
          totals.conversations - before.conversations,
          totals.feedback_up - before.feedback_up,
          totals.ratings - before.ratings,
          totals.handed_off - before.handed_off,
        ];
      },
      (moved) => moved.join() === "3,1,1,1",
    );
    browser = await launch();
    admin = await openConsole(browser);
    page = admin.page;
    await signIn(page, demo().consoleEmail, demo().consolePassword);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("shows the API's figures: totals, today's outcomes as a table, handoff reasons, and exports them as CSV", async () => {
    await go(page, "Analytics");
    const expected = await analytics();
    const day = expected.series.find((entry) => entry.date === today());
    const stats = page.getByRole("region", { name: "Totals" });
    await expect
      .poll(() => stats.locator("article:has-text('Conversations') .stat-value").first().textContent())
      .toBe(String(expected.totals.conversations));

    const outcomes = page.locator("figure", { hasText: "Conversations per day by outcome as a table" });
    await outcomes.getByText("Conversations per day by outcome as a table").click();
    const row = outcomes.getByRole("row", { name: new RegExp(`^${today()}`) });
    const cells = await row.getByRole("cell").allTextContents();
    expect(cells).toEqual([day?.resolved, day?.handed_off, day?.unresolved, day?.abandoned].map(String));

    const reasons = page.locator("figure", { hasText: "Handoffs by reason as a table" });
    await reasons.getByText("Handoffs by reason as a table").click();
    expect(
      await reasons
        .getByRole("row", { name: /^API client/ })
        .getByRole("cell")
        .textContent(),
    ).toBe(String(expected.totals.handoff_reasons.client));
    await checkPage(admin, "analytics");
    await screenshot(page, "analytics");

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export CSV" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^analytics-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
    const lines = (await readFile((await download.path()) ?? "", "utf8"))
      .replace(/^\uFEFF/, "")
      .trimEnd()
      .split("\r\n");
    expect(lines[0]?.startsWith("date,scope,conversations,visitor_messages,resolved,handed_off")).toBe(true);
    // 30 days and the totals.
    expect(lines).toHaveLength(32);
    const todays = lines.find((line) => line.startsWith(`${today()},`))?.split(",");
    // date, scope, conversations, visitor_messages, resolved, handed_off, unresolved, abandoned, …
    expect([todays?.[2], ...(todays?.slice(4, 8) ?? [])]).toEqual(
      [day?.conversations, day?.resolved, day?.handed_off, day?.unresolved, day?.abandoned].map(String),
    );
  });

  it("shows a reply's thumb and the conversation's outcome in its transcript", async () => {
    await page.goto(`${demo().consoleUrl}/conversations/${answeredId}`);
    await page.getByRole("heading", { level: 1, name: "Conversation" }).waitFor();
    await settled(page);
    const facts = page.locator("dl.facts");
    await expect.poll(() => facts.locator("dt:has-text('Outcome') + dd").textContent()).toMatch(/^Resolved/);
    await page.getByText("Visitor: thumbs up (“Nice”)").waitFor();
    await checkPage(admin, "transcript with feedback");
  });

  it("fits a phone", async () => {
    const small = await openConsole(browser, phone);
    await signIn(small.page, demo().consoleEmail, demo().consolePassword);
    await small.page.goto(`${demo().consoleUrl}/analytics`);
    await small.page.getByRole("heading", { level: 1, name: "Analytics" }).waitFor();
    await settled(small.page);
    expect(await horizontalOverflow(small.page)).toBe(0);
    await checkPage(small, "analytics (phone)");
    await screenshot(small.page, "analytics-phone");
    await small.context.close();
  });
});
