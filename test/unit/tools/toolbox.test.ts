/**
 * Collect-before-call, enforced server side: whatever the engine asks, no request leaves unless
 * every variable is present, valid and was typed by the visitor.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ToolBox } from "#functions/agent/engine";
import type { ConfiguredTool } from "#functions/tools/registry";
import { createLookupToolBox, type LookupObservation, MAX_LOOKUPS_PER_TURN } from "#functions/tools/toolbox";
import {
  type PlatformFakes,
  type PlatformName,
  platformDemos,
  startPlatformFakes,
} from "#test/fakes/platforms/index";
import { allDemoSecrets, demoTool, httpFor, inSeconds } from "#test/unit/tools/support/harness";

let fakes: PlatformFakes;
beforeAll(async () => {
  fakes = await startPlatformFakes();
});
afterAll(() => fakes.stop());
beforeEach(() => fakes.reset());

const signal = () => new AbortController().signal;
const totalRequests = () =>
  fakes.woocommerce.requests.length +
  fakes.shopify.requests.length +
  fakes.lightspeed.requests.length +
  fakes.sendcloud.requests.length +
  fakes.picqer.requests.length;

function toolbox(
  visitorTexts: string[],
  tools: ConfiguredTool[] = [demoTool("woocommerce")],
  observed: LookupObservation[] = [],
): ToolBox {
  return createLookupToolBox({
    tools,
    visitorTexts,
    loadSecrets: async (tool) => platformDemos[tool.kind as PlatformName].secrets,
    http: httpFor(fakes),
    deadline: inSeconds(10),
    observe: (o) => observed.push(o),
  });
}

describe("collect-before-call", () => {
  const cases: [string, PlatformName, Record<string, string>, string[], string[]][] = [
    ["nothing collected", "woocommerce", {}, ["where is my order?"], ["order_number", "email"]],
    ["e-mail missing", "shopify", { order_number: "1001" }, ["order #1001"], ["email"]],
    [
      "e-mail invented by the model",
      "woocommerce",
      { order_number: "1001", email: "jan.jansen@example.nl" },
      ["my order is 1001, e-mail to follow"],
      ["email"],
    ],
    [
      "order number only in an earlier assistant message",
      "lightspeed",
      { order_number: "ORD00002" },
      ["what is the status of my order?"],
      ["order_number"],
    ],
    [
      "postal code not given",
      "sendcloud",
      { tracking_code: "3SYZXG192847563", postal_code: "5611 EM" },
      ["3SYZXG192847563"],
      ["postal_code"],
    ],
    [
      "invalid e-mail",
      "picqer",
      { order_reference: "1001", email: "jan@example" },
      ["order 1001, jan@example"],
      ["email"],
    ],
  ];

  it.each(cases)(
    "%s → needs_input, no request made (%s)",
    async (_title, platform, input, visitor, asked) => {
      // Prepare
      const box = toolbox(visitor, [demoTool(platform)]);
      // Act
      const outcome = await box.call(`lookup_${platform}`, input, signal());
      // Assess
      expect(outcome.status).toBe("error");
      expect(outcome.content.result).toBe("needs_input");
      const named = [
        ...(outcome.content.missing as { name: string }[]),
        ...(outcome.content.invalid as { name: string }[]),
      ].map((v) => v.name);
      expect(named.sort()).toEqual([...asked].sort());
      expect(totalRequests()).toBe(0);
    },
  );

  it("asks for exactly what is missing, by label", async () => {
    const outcome = await toolbox(["order 1001"]).call(
      "lookup_woocommerce",
      { order_number: "1001" },
      signal(),
    );
    expect(outcome.content.instructions).toContain("e-mail address");
    expect(outcome.content.instructions).not.toContain("order number");
  });

  it("runs the look-up once everything was typed by the visitor, in any earlier message and form", async () => {
    // Prepare
    const box = toolbox(["Hallo! Waar blijft bestelling #1001?", "Mijn e-mail: Jan.Jansen@example.nl"]);
    // Act
    const outcome = await box.call(
      "lookup_woocommerce",
      { order_number: "1001", email: "jan.jansen@example.nl" },
      signal(),
    );
    // Assess
    expect(outcome).toMatchObject({
      status: "success",
      content: { result: "found", record: { reference: "1001" } },
    });
    expect(fakes.woocommerce.requests).toHaveLength(1);
  });

  it("a configured tool refuses malformed values even when called directly", async () => {
    const result = await demoTool("shopify").lookup({
      secrets: platformDemos.shopify.secrets,
      variables: { order_number: "1001", email: "not-an-email" },
      signal: signal(),
      deadline: inSeconds(5),
      http: httpFor(fakes),
    });
    expect(result).toEqual({
      kind: "needs_input",
      missing: [],
      invalid: [{ name: "email", label: "e-mail address" }],
    });
    expect(totalRequests()).toBe(0);
  });
});

describe("tool box", () => {
  it("offers one spec per tool and refuses unknown tools", async () => {
    const box = toolbox([], [demoTool("woocommerce"), demoTool("sendcloud")]);
    expect(box.specs.map((s) => s.name)).toEqual(["lookup_woocommerce", "lookup_sendcloud"]);
    expect(await box.call("delete_everything", {}, signal())).toMatchObject({ status: "error" });
  });

  it("shares one request between identical calls in a turn", async () => {
    // Prepare
    const box = toolbox(["order #1001, jan.jansen@example.nl"]);
    const input = { order_number: "#1001", email: "jan.jansen@example.nl" };
    // Act
    const [first, second] = await Promise.all([
      box.call("lookup_woocommerce", input, signal()),
      box.call("lookup_woocommerce", { ...input, order_number: "1001" }, signal()),
    ]);
    // Assess
    expect(first).toEqual(second);
    expect(fakes.woocommerce.requests).toHaveLength(1);
  });

  it(`allows at most ${MAX_LOOKUPS_PER_TURN} different look-ups per turn (no e-mail guessing)`, async () => {
    // Prepare
    const emails = ["a@example.com", "b@example.com", "c@example.com", "d@example.com"];
    const box = toolbox([`order 1001 ${emails.join(" ")}`]);
    // Act
    const outcomes = [];
    for (const email of emails)
      outcomes.push(await box.call("lookup_woocommerce", { order_number: "1001", email }, signal()));
    // Assess
    expect(outcomes.map((o) => o.content.result)).toEqual([
      "not_found",
      "not_found",
      "not_found",
      "unavailable",
    ]);
    expect(fakes.woocommerce.requests).toHaveLength(MAX_LOOKUPS_PER_TURN);
  });

  it("turns a failing secret store into 'unavailable' without its message", async () => {
    // Prepare
    const box = createLookupToolBox({
      tools: [demoTool("woocommerce")],
      visitorTexts: ["order 1001 jan.jansen@example.nl"],
      loadSecrets: async () => {
        throw new Error(`decrypt failed for ${platformDemos.woocommerce.secrets.consumerSecret}`);
      },
      http: httpFor(fakes),
      deadline: inSeconds(5),
    });
    // Act
    const outcome = await box.call(
      "lookup_woocommerce",
      { order_number: "1001", email: "jan.jansen@example.nl" },
      signal(),
    );
    // Assess
    expect(outcome.content.result).toBe("unavailable");
    expect(JSON.stringify(outcome)).not.toContain(platformDemos.woocommerce.secrets.consumerSecret);
    expect(totalRequests()).toBe(0);
  });

  it("reports each look-up to the metrics hook without values or credentials", async () => {
    // Prepare
    const observed: LookupObservation[] = [];
    const box = toolbox(["order 1001 jan.jansen@example.nl"], [demoTool("woocommerce")], observed);
    // Act
    await box.call("lookup_woocommerce", { order_number: "1001", email: "jan.jansen@example.nl" }, signal());
    // Assess
    expect(observed).toEqual([{ toolId: "tool-woocommerce", kind: "found", durationMs: expect.any(Number) }]);
    const serialized = JSON.stringify(observed);
    for (const secret of allDemoSecrets) expect(serialized).not.toContain(secret);
    expect(serialized).not.toContain("jan.jansen");
  });
});
