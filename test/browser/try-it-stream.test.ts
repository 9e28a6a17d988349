/**
 * Try it streams: the console posts the turn to the stream path on its own origin (passed on to
 * the function URL, as CloudFront does), reads the Server-Sent Events from fetch's body and shows
 * the reply while the model is still writing it. The Bedrock fake sends two words, then holds the
 * rest until the test has seen them in the page.
 */
import { randomUUID } from "node:crypto";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChatbot } from "#functions/domain/chatbots";
import { converseStream } from "#test/fakes/bedrock-server";
import { bedrockControl } from "#test/fakes/keyed-bedrock";
import { checkPage, demo, hasChromium, launch, openConsole, settled, signIn } from "#test/support/browser";
import { domain, environment, isLocal } from "#test/support/harness";

let browser: Browser;

describe.runIf(isLocal && hasChromium)("Try it through the stream", () => {
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("shows the reply as the model writes it, then the stored reply", async () => {
    // Prepare: a chatbot on the Bedrock fake, whose reply holds after two words.
    const modelId = `test.console-${randomUUID()}`;
    const bot = await createChatbot(domain(), {
      organizationId: demo().organizationId,
      name: `Streaming helper ${modelId.slice(-6)}`,
      engine: { kind: "bedrock", modelId },
    });
    const bedrock = bedrockControl(environment.bedrockControlUrl ?? "");
    const text = "Your parcel left our warehouse in Utrecht this morning.";
    await bedrock.script(modelId, converseStream(text, { holdAfter: 2 }));
    const admin = await openConsole(browser);
    const page = admin.page;
    await signIn(page, demo().consoleEmail, demo().consolePassword);
    await page.goto(`${demo().consoleUrl}/chatbots/${bot.chatbotId}/try`);
    await page.getByRole("heading", { level: 2, name: "Try it" }).waitFor();
    await settled(page);

    // Act: send; the page shows the first words while the model holds the rest.
    const streamed = page.waitForResponse(
      (response) => new URL(response.url()).pathname === "/api/message/stream",
    );
    await page.getByRole("textbox", { name: "Message" }).fill("Where is my parcel?");
    await page.getByRole("button", { name: "Send" }).click();
    const response = await streamed;
    expect(new URL(response.url()).origin).toBe(new URL(demo().consoleUrl).origin);
    expect(response.headers()["content-type"]).toMatch(/^text\/event-stream/);
    const writing = page.getByRole("log").locator(".bubble.assistant[aria-busy=true]");
    await expect.poll(() => writing.textContent()).toMatch(/Your parcel$/);
    expect(await page.getByRole("log").textContent()).not.toContain("Utrecht");

    // The model finishes: the whole reply, no longer being written.
    await bedrock.release(modelId);
    await expect.poll(() => page.getByRole("log").textContent()).toContain(text);
    await settled(page);
    expect(await writing.count()).toBe(0);
    expect(await page.getByRole("log").locator(".bubble.assistant").count()).toBe(1);
    await checkPage(admin, "Try it (streamed)");
    await admin.context.close();
  });
});
