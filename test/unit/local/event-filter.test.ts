/** The local event source mappings filter records as Lambda does, for the patterns the stack uses and the common matchers. */
import { describe, expect, it } from "vitest";
import { streamSources } from "#lib/event-sources";
import { matches, matchesAny } from "#lib/local/event-filter";

const record = (eventName: string, entity: string | undefined, extra: Record<string, unknown> = {}) => ({
  eventName,
  eventSource: "aws:dynamodb",
  dynamodb: {
    Keys: { PK: { S: "ORG#o#CONV#c" }, SK: { S: "CONV" } },
    ...(entity === undefined ? {} : { NewImage: { entity: { S: entity }, turns: { N: "3" }, ...extra } }),
  },
});

describe("event filter patterns", () => {
  const filters = streamSources[0]?.filters ?? [];

  it("let the fan-out see inserted or changed messages (a reply's feedback) and conversations only", () => {
    expect(matchesAny(filters, record("INSERT", "Message"))).toBe(true);
    expect(matchesAny(filters, record("MODIFY", "Message"))).toBe(true);
    expect(matchesAny(filters, record("INSERT", "Conversation"))).toBe(true);
    expect(matchesAny(filters, record("MODIFY", "Conversation"))).toBe(true);
    expect(matchesAny(filters, record("REMOVE", undefined))).toBe(false);
    expect(matchesAny(filters, record("INSERT", "ApiKey"))).toBe(false);
  });

  it("support prefix, suffix, exists, anything-but and numeric matchers", () => {
    const image = (pattern: Record<string, unknown>) => ({ dynamodb: { NewImage: pattern } });
    const r = record("INSERT", "Conversation");
    expect(matches(image({ entity: { S: [{ prefix: "Conv" }] } }), r)).toBe(true);
    expect(matches(image({ entity: { S: [{ suffix: "ation" }] } }), r)).toBe(true);
    expect(matches(image({ entity: { S: [{ "anything-but": ["Conversation"] }] } }), r)).toBe(false);
    expect(matches(image({ status: [{ exists: false }] }), r)).toBe(true);
    expect(matches(image({ status: [{ exists: true }] }), r)).toBe(false);
    expect(matches({ eventName: [{ "anything-but": "REMOVE" }] }, r)).toBe(true);
    expect(matches({ n: [{ numeric: [">", 1, "<=", 3] }] }, { n: 3 })).toBe(true);
    expect(matches({ n: [{ numeric: [">", 3] }] }, { n: 3 })).toBe(false);
    expect(matches({ tags: ["a"] }, { tags: ["b", "a"] })).toBe(true);
    expect(matches({ missing: ["x"] }, r)).toBe(false);
    expect(matchesAny([], r)).toBe(true);
  });
});
