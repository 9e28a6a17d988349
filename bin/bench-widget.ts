/**
 * The website widget's part of `npm run bench` (bin/bench.ts runs it; `npm run bench -- --widget`
 * runs it alone): figures, not assertions.
 *
 * 1. Sizes, from the widget's own build: what a page loads before the visitor opens the chat
 *    (widget.js) and everything (with the panel), raw, gzip and brotli.
 * 2. In Chromium, on a page of another origin under a strict CSP, the widget served by the local
 *    console server as CloudFront serves it: the time from the script tag (its request starting) to
 *    the launcher painted, on a first visit (a session is started) and a returning one (the stored
 *    session); and from pressing send to the first streamed words on the page, the model (a local
 *    Bedrock fake) answering at once. Medians of several runs.
 *
 * The session route's table calls per request are counted with every other route's (bin/bench.ts,
 * section 2).
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";
import { build as buildConsole } from "vite";
import { createApiKey } from "#functions/domain/api-keys";
import { createChatbot } from "#functions/domain/chatbots";
import { systemClock } from "#functions/domain/context";
import { createOrganization } from "#functions/domain/organizations";
import { updateWidgetSettings } from "#functions/domain/widget-settings";
import { createDb } from "#functions/store/dynamodb";
import {
  consoleDirectory,
  consoleNeedsBuild,
  startConsoleServer,
  widgetDirectory,
  widgetDist,
} from "#lib/local/console-server";
import { startLocalRuntime } from "#lib/local/runtime";
import { converseStream } from "#test/fakes/bedrock-server";
import { bedrockControl, startKeyedBedrock } from "#test/fakes/keyed-bedrock";
import { startWidgetPages } from "#test/support/widget-page";

const RUNS = 7;

interface Size {
  raw: number;
  gzip: number;
  brotli: number;
}

export interface WidgetFigures {
  beforeOpen: Size;
  total: Size;
  budget: { beforeOpenGzip: number; totalGzip: number };
  launcherFirstVisitMs: number;
  launcherReturningMs: number;
  firstTokenMs: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

export async function measureWidget(work: string): Promise<WidgetFigures> {
  // The widget's own build prints its sizes and fails above its budget.
  execFileSync(process.execPath, [resolve(widgetDirectory, "scripts/build.mjs")], { stdio: "inherit" });
  const sizes = JSON.parse(readFileSync(join(widgetDist, "sizes.json"), "utf8")) as {
    beforeOpen: Size;
    total: Size;
    budget: WidgetFigures["budget"];
  };
  if (consoleNeedsBuild()) {
    await buildConsole({ configFile: resolve(consoleDirectory, "vite.config.ts"), logLevel: "warn" });
  }

  const bedrock = await startKeyedBedrock();
  const runtime = await startLocalRuntime({
    port: 0,
    buildDirectory: join(work, "widget-build"),
    environment: { AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url, LOG_LEVEL: "warn" },
  });
  const consoleServer = await startConsoleServer({
    port: 0,
    apiUrl: runtime.baseUrl,
    streamUrl: runtime.streamUrl,
    originVerifySecret: runtime.originVerifySecret,
    config: (consoleUrl) => ({
      apiBaseUrl: runtime.baseUrl,
      streamUrl: `${consoleUrl}/`,
      cognito: {
        endpoint: runtime.cognito.endpoint,
        region: "us-east-1",
        userPoolId: runtime.cognito.userPoolId,
        clientId: runtime.cognito.clientId,
      },
    }),
  });
  const pages = await startWidgetPages(`${consoleServer.url}/widget.js`);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
  try {
    const ctx = { db: createDb(runtime.tableName, runtime.dynamoDb), clock: systemClock };
    const organization = await createOrganization(ctx, { name: "Widget bench", rateLimit: 100_000 });
    await createApiKey(ctx, { organizationId: organization.organizationId, name: "bench" });
    const modelId = `bench.widget-${randomUUID()}`;
    const chatbot = await createChatbot(ctx, {
      organizationId: organization.organizationId,
      name: "Widget bench bot",
      engine: { kind: "bedrock", modelId },
    });
    await updateWidgetSettings(ctx, {
      organizationId: organization.organizationId,
      chatbotId: chatbot.chatbotId,
      changes: { enabled: true, allowedOrigins: [pages.origin] },
    });
    const control = bedrockControl(bedrock.controlUrl);
    const launcherMs = `(() => {
      const painted = performance.getEntriesByName("chatbot-widget:launcher")[0];
      const script = performance.getEntriesByType("resource").find((entry) => entry.name.endsWith("/widget.js"));
      return painted && script ? painted.startTime - script.startTime : null;
    })()`;
    const waitForLauncher = `new Promise((resolve) => {
      const check = () => performance.getEntriesByName("chatbot-widget:launcher").length > 0 ? resolve(true) : setTimeout(check, 10);
      check();
    })`;

    const firstVisit: number[] = [];
    const returning: number[] = [];
    const firstToken: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      // A new browser profile each run: a first visit (a session), then a reload (the stored one).
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(pages.url(chatbot.chatbotId));
      await page.evaluate(waitForLauncher);
      firstVisit.push(Number(await page.evaluate(launcherMs)));
      await page.reload();
      await page.evaluate(waitForLauncher);
      returning.push(Number(await page.evaluate(launcherMs)));

      await control.script(modelId, converseStream("Your order left our warehouse this morning."));
      await page.locator("#chatbot-widget .launcher").click();
      await page.getByRole("textbox", { name: "Message" }).fill("Where is my order?");
      await page.getByRole("button", { name: "Send" }).click();
      await page.locator("#chatbot-widget .msg.assistant").nth(1).waitFor();
      await page.evaluate(`new Promise((resolve) => {
        const check = () => performance.getEntriesByName("chatbot-widget:first-token").length > 0 ? resolve(true) : setTimeout(check, 10);
        check();
      })`);
      firstToken.push(
        Number(
          await page.evaluate(
            `performance.getEntriesByName("chatbot-widget:first-token")[0].startTime - performance.getEntriesByName("chatbot-widget:send").at(-1).startTime`,
          ),
        ),
      );
      await context.close();
    }
    return {
      beforeOpen: sizes.beforeOpen,
      total: sizes.total,
      budget: sizes.budget,
      launcherFirstVisitMs: median(firstVisit),
      launcherReturningMs: median(returning),
      firstTokenMs: median(firstToken),
    };
  } finally {
    await browser.close();
    await pages.close();
    await consoleServer.close();
    await runtime.stop();
    await bedrock.close();
  }
}

export function printWidgetFigures(figures: WidgetFigures): void {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  const size = (value: Size) => `${kb(value.raw)} raw, ${kb(value.gzip)} gzip, ${kb(value.brotli)} brotli`;
  console.log("\n10. The website widget\n");
  console.log(
    `  before the chat opens (widget.js): ${size(figures.beforeOpen)} (budget ${kb(figures.budget.beforeOpenGzip)} gzip)`,
  );
  console.log(
    `  everything (with the panel):       ${size(figures.total)} (budget ${kb(figures.budget.totalGzip)} gzip)`,
  );
  console.log(
    `  script tag → launcher painted, in Chromium (median of ${RUNS}): first visit ${figures.launcherFirstVisitMs.toFixed(0)} ms (a session started), returning ${figures.launcherReturningMs.toFixed(0)} ms (the stored session)`,
  );
  console.log(
    `  send → first streamed words on the page (median of ${RUNS}, the model answering at once): ${figures.firstTokenMs.toFixed(0)} ms`,
  );
  console.log("  (the session route's table calls: section 2)");
}
