/**
 * What the console's browser tests share: Chromium driven by Playwright's library (Debian's
 * /usr/bin/chromium: no browser is downloaded), the console the local runtime serves (its address
 * in the demo file), the demo people, signing in as a person does, accessibility checks with
 * axe-core run inside the page, a narrow-screen check, and screenshots.
 *
 * Screenshots go to .local/screenshots, or to SCREENSHOT_DIR (`npm run console:screenshots`
 * writes the committed ones in docs/screenshots).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { environment } from "#test/support/harness";

const root = resolve(import.meta.dirname, "../..");

export interface Demo {
  baseUrl: string;
  consoleUrl: string;
  /** The widget's demo page `npm start` prints (a shop page on another origin). */
  demoPageUrl?: string;
  apiKey: string;
  chatbotId: string;
  organizationId: string;
  operatorEmail: string;
  operatorPassword: string;
  consoleEmail: string;
  consolePassword: string;
  viewerEmail: string;
  viewerPassword: string;
}

export function demo(): Demo {
  if (!environment.demoFile) throw new Error("the browser tests run against the local runtime only");
  const found = JSON.parse(readFileSync(environment.demoFile, "utf8")) as Demo;
  if (!found.consoleUrl)
    throw new Error("the local runtime serves no console (no consoleUrl in the demo file)");
  return found;
}

/** Debian's Chromium, or CHROMIUM_PATH. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const hasChromium = existsSync(chromiumPath);

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    // Root in a container has no user namespaces for Chromium's sandbox.
    // The test image host has a certificate of its own making.
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--ignore-certificate-errors"],
  });
}

export const desktop = { width: 1280, height: 860 } as const;
export const phone = { width: 375, height: 740 } as const;

/** A phone is touched, not hovered: its context emulates a touch screen at the phone's width. */
const isPhone = (viewport: { width: number }) => viewport.width <= phone.width;

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Content-Security-Policy violations and uncaught errors the page reported. */
  problems: string[];
}

/** A fresh browser context (its own storage: nobody signed in) on the console. */
export async function openConsole(
  browser: Browser,
  viewport: { width: number; height: number } = desktop,
): Promise<ConsolePage> {
  const context = await browser.newContext({
    viewport,
    permissions: ["clipboard-read", "clipboard-write"],
    ...(isPhone(viewport) ? { hasTouch: true, isMobile: true } : {}),
  });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    const text = message.text();
    if (/Content Security Policy|Refused to/i.test(text)) problems.push(`CSP: ${text}`);
  });
  await page.goto(demo().consoleUrl);
  return { page, context, problems };
}

/** The text of the element that has the keyboard focus. */
export const focusedText = (page: Page): Promise<string | null> =>
  page.evaluate<string | null>("document.activeElement && document.activeElement.textContent");

/**
 * Signs in through the sign-in page, as a person does, and waits for the page they land on (the
 * overview; a person of no organization lands on "No organization yet").
 */
export async function signIn(
  page: Page,
  email: string,
  password: string,
  landing = "Overview",
): Promise<void> {
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  await page.getByLabel("E-mail address").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: landing }).waitFor();
}

/** Follows a link of the main navigation. */
export async function go(page: Page, name: string | RegExp, heading: string | RegExp = name): Promise<void> {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name }).click();
  await page.getByRole("heading", { level: 1, name: heading }).waitFor();
  await settled(page);
}

/** No page part is still loading. */
export async function settled(page: Page): Promise<void> {
  await expect.poll(() => page.locator("[aria-busy=true]").count(), { timeout: 20_000 }).toBe(0);
}

const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's WCAG 2.1 A and AA rules on the page as it stands: the violations, each with its
 * elements. (Evaluated through the DevTools protocol, which the page's CSP does not govern.)
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  // A string, evaluated in the page (this file is compiled without the DOM's types).
  const violations = await page.evaluate(
    `axe.run({ runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } }).then((result) => result.violations)`,
  );
  return (violations as AxeViolation[]).map(
    (violation) =>
      `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
  );
}

/** The page is no wider than the window (nothing to scroll sideways at 375 px). */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
}

export const screenshotDirectory = resolve(root, process.env.SCREENSHOT_DIR ?? ".local/screenshots");

/** Saves the whole page as `<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDirectory, { recursive: true });
  const path = resolve(screenshotDirectory, `${name}.png`);
  await settled(page);
  await page.screenshot({ path, fullPage: true, animations: "disabled" });
  return path;
}

/**
 * The controls on the page, outside the navigation and the conversation filters, that could change
 * something: enabled buttons (and links shown as buttons) and editable fields, by accessible name.
 * Evaluated in the page as a string (this file is compiled without the DOM's types).
 */
export async function writeControls(page: Page): Promise<string[]> {
  await settled(page);
  return page.evaluate<string[]>(`(() => {
    const readOnlyButtons = /^(Sign out|Filter|Load more|Try again|Retry|Copy( .*)?|Cancel|Export CSV)$/;
    // Choosing which chatbot's tools to read changes nothing.
    const readOnlyFields = /^Chatbot/;
    const found = [];
    for (const element of document.querySelectorAll(
      "main button, main [role=button], main input, main select, main textarea",
    )) {
      if (element.closest("form[aria-label=Filters]") || element.closest("dialog:not([open])")) continue;
      // Choices about this person's own browser (the Inbox's alerts) change nothing of the organization.
      if (element.closest("[data-personal]")) continue;
      // Forms that only read (testing a question against the knowledge) store nothing.
      if (element.closest("form[data-reads-only]")) continue;
      if (element.matches(":disabled") || element.readOnly) continue;
      if (element.type === "hidden") continue;
      const name = (
        element.getAttribute("aria-label") ||
        (element.labels && element.labels[0] && element.labels[0].textContent) ||
        element.textContent ||
        element.getAttribute("name") ||
        element.tagName
      ).trim().replace(/\\s+/g, " ");
      const isButton = element.tagName === "BUTTON" || element.getAttribute("role") === "button";
      if (isButton && readOnlyButtons.test(name)) continue;
      if (element.tagName === "SELECT" && readOnlyFields.test(name)) continue;
      found.push(element.tagName.toLowerCase() + ": " + name);
    }
    return found;
  })()`);
}

/** Checks a page as every page must be: no CSP violation or script error, no axe violation. */
export async function checkPage(console: ConsolePage, name: string): Promise<void> {
  await settled(console.page);
  expect(await accessibilityViolations(console.page), `${name}: accessibility`).toEqual([]);
  expect(console.problems, `${name}: CSP violations or script errors`).toEqual([]);
}
