/**
 * The look-up ToolBox across turns: details kept with the conversation, the per-conversation cache,
 * and the per-tool request cap with the platforms' "slow down" signals. The cache and the bucket
 * are in-memory stand-ins for the table (tools/table-state.ts), so each rule is tested on its own.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { HttpGetResult } from "#functions/tools/http-get";
import type { ConfiguredTool } from "#functions/tools/registry";
import type { LookupResult } from "#functions/tools/result";
import { lookupHash } from "#functions/tools/table-state";
import {
  createLookupToolBox,
  DEFAULT_PAUSE_SECONDS,
  type LookupCache,
  type LookupObservation,
  type LookupToolBoxOptions,
  pauseAfter,
  type RequestLimiter,
} from "#functions/tools/toolbox";
import {
  type PlatformFakes,
  type PlatformName,
  platformDemos,
  startPlatformFakes,
} from "#test/fakes/platforms/index";
import { demoTool, httpFor, inSeconds } from "#test/unit/tools/support/harness";

let fakes: PlatformFakes;
beforeAll(async () => {
  fakes = await startPlatformFakes();
});
afterAll(() => fakes.stop());
beforeEach(() => fakes.reset());

const signal = () => new AbortController().signal;
const JAN = { order_number: "1001", email: "jan.jansen@example.nl" };

function box(options: Partial<LookupToolBoxOptions> & { visitorTexts: string[] }) {
  return createLookupToolBox({
    tools: [demoTool("woocommerce")],
    loadSecrets: async (tool) => platformDemos[tool.kind as PlatformName].secrets,
    http: httpFor(fakes),
    deadline: inSeconds(10),
    ...options,
  });
}

function memoryCache(): LookupCache & { entries: Map<string, LookupResult> } {
  const entries = new Map<string, LookupResult>();
  const key = (tool: ConfiguredTool, values: Readonly<Record<string, string>>) =>
    lookupHash(tool, "v1", values);
  return {
    entries,
    read: async (tool, values) => entries.get(key(tool, values)),
    write: async (tool, values, result) => {
      entries.set(key(tool, values), result);
    },
  };
}

function memoryLimiter(tokens: number): RequestLimiter & { pauses: number[] } {
  let left = tokens;
  const pauses: number[] = [];
  return {
    pauses,
    take: async () => {
      if (left <= 0) return { admitted: false, retryAfterSeconds: 17 };
      left -= 1;
      return { admitted: true };
    },
    pause: async (_tool, seconds) => {
      pauses.push(seconds);
    },
  };
}

describe("details kept with the conversation", () => {
  it("complete a look-up once the visitor gives the rest, even when the model leaves them out", async () => {
    const lookups = box({ visitorTexts: ["jan.jansen@example.nl"], collected: { order_number: "1001" } });
    const outcome = await lookups.call("lookup_woocommerce", { email: "jan.jansen@example.nl" }, signal());
    expect(outcome.content.result).toBe("found");
    expect(fakes.woocommerce.requests).toHaveLength(1);
  });

  it("do not let a model slip in a detail the visitor never gave", async () => {
    const lookups = box({ visitorTexts: ["thanks"], collected: { order_number: "1001" } });
    const outcome = await lookups.call(
      "lookup_woocommerce",
      { ...JAN, email: "made.up@example.com" },
      signal(),
    );
    expect(outcome.content).toMatchObject({
      result: "needs_input",
      missing: [{ name: "email", reason: "not_given_by_visitor" }],
    });
    expect(fakes.woocommerce.requests).toHaveLength(0);
  });

  it("gather each detail the visitor gave, while others are still missing, and no invented one", async () => {
    const lookups = box({ visitorTexts: ["my order is 1001"] });
    await lookups.call(
      "lookup_woocommerce",
      { order_number: "#1001", email: "made.up@example.com" },
      signal(),
    );
    expect(lookups.collected()).toEqual({ order_number: "1001" });
  });
});

describe("per-conversation cache", () => {
  it("answers the same look-up in a later turn without a request", async () => {
    // Prepare
    const cache = memoryCache();
    const observed: LookupObservation[] = [];
    const texts = ["order 1001, jan.jansen@example.nl"];
    await box({ visitorTexts: texts, cache }).call("lookup_woocommerce", JAN, signal());
    // Act
    const again = await box({ visitorTexts: texts, cache, observe: (o) => observed.push(o) }).call(
      "lookup_woocommerce",
      { order_number: "#1001", email: "JAN.JANSEN@example.nl" },
      signal(),
    );
    // Assess
    expect(again.content.result).toBe("found");
    expect(fakes.woocommerce.requests).toHaveLength(1);
    expect(observed).toEqual([expect.objectContaining({ kind: "found", cached: true })]);
  });

  it("keeps no failure: the next turn asks the platform again", async () => {
    const cache = memoryCache();
    fakes.woocommerce.script({ kind: "server_error" });
    const outcome = await box({ visitorTexts: ["1001 jan.jansen@example.nl"], cache }).call(
      "lookup_woocommerce",
      JAN,
      signal(),
    );
    expect(outcome.content.result).toBe("unavailable");
    expect(cache.entries.size).toBe(0);
  });
});

describe("per-tool request cap and platform limits", () => {
  it("sends nothing when the tool's bucket is empty, and tells when to retry", async () => {
    const outcome = await box({
      visitorTexts: ["1001 jan.jansen@example.nl"],
      limiter: memoryLimiter(0),
    }).call("lookup_woocommerce", JAN, signal());
    expect(outcome.content).toMatchObject({ result: "rate_limited", retryAfterSeconds: 17 });
    expect(fakes.woocommerce.requests).toHaveLength(0);
  });

  it("pauses the tool for the platform's Retry-After", async () => {
    // Prepare
    const limiter = memoryLimiter(10);
    fakes.shopify.script({ kind: "rate_limited", retryAfter: "30" });
    // Act
    const outcome = await box({
      tools: [demoTool("shopify")],
      visitorTexts: ["#1001 bob.norman@mail.example.com"],
      limiter,
    }).call("lookup_shopify", { order_number: "1001", email: "bob.norman@mail.example.com" }, signal());
    // Assess
    expect(outcome.content.result).toBe("rate_limited");
    expect(limiter.pauses).toEqual([30]);
  });

  it("pauses the tool until Lightspeed's exhausted window resets", async () => {
    const limiter = memoryLimiter(10);
    fakes.lightspeed.script({ kind: "rate_limited" });
    await box({ tools: [demoTool("lightspeed")], visitorTexts: ["order ORD00002"], limiter }).call(
      "lookup_lightspeed",
      { order_number: "ORD00002" },
      signal(),
    );
    expect(limiter.pauses).toEqual([42]);
  });

  it.each<[string, HttpGetResult, number | undefined]>([
    ["429 with Retry-After", { kind: "rate_limited", retryAfterSeconds: 2.5 }, 2.5],
    ["429 without a wait", { kind: "rate_limited" }, DEFAULT_PAUSE_SECONDS],
    [
      "a window at zero with its reset",
      {
        kind: "ok",
        status: 200,
        body: null,
        rate: { windows: [{ limit: 300, remaining: 0, resetSeconds: 42 }] },
      },
      42,
    ],
    [
      "Shopify's bucket full (no reset given)",
      { kind: "ok", status: 200, body: null, rate: { windows: [{ limit: 40, remaining: 0 }] } },
      DEFAULT_PAUSE_SECONDS,
    ],
    [
      "room left",
      { kind: "ok", status: 200, body: null, rate: { windows: [{ limit: 40, remaining: 8 }] } },
      undefined,
    ],
    ["another failure", { kind: "timeout" }, undefined],
  ])("reads a pause from %s", (_case, result, pause) => {
    expect(pauseAfter(result)).toBe(pause);
  });
});

describe("cache key", () => {
  it("is the same however the visitor wrote the values, and changes with the tool's version", () => {
    const tool = demoTool("woocommerce");
    const a = lookupHash(tool, "v1", { order_number: "#1001", email: "Jan.Jansen@example.nl" });
    expect(lookupHash(tool, "v1", { order_number: "1001", email: "jan.jansen@example.nl" })).toBe(a);
    expect(lookupHash(tool, "v2", { order_number: "1001", email: "jan.jansen@example.nl" })).not.toBe(a);
    expect(a).not.toContain("1001");
  });
});
