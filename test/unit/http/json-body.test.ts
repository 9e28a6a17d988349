/** Request bodies as JSON: the nesting limit comes before any recursion, and prototype keys are inert. */
import { describe, expect, it } from "vitest";
import { AppError } from "#functions/errors";
import { MAX_JSON_DEPTH, parseJsonBody, positionPastDepth } from "#functions/http/json-body";

function refusal(raw: string): unknown {
  try {
    parseJsonBody(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return (error as AppError).detail;
  }
  throw new Error("expected a 422");
}

describe("positionPastDepth", () => {
  it.each([
    ["{}", 1, undefined],
    ["[[]]", 1, 1],
    ['{"a":[1,{"b":2}]}', 3, undefined],
    ['{"a":[1,{"b":2}]}', 2, 8],
    ['"[[[["', 1, undefined],
    ['["\\"[[", ["x"]]', 1, 9],
    ['["\\\\", [1]]', 1, 7],
    ["]]]][", 1, undefined],
  ])("%s with at most %i levels → %s", (text, max, expected) => {
    expect(positionPastDepth(text, max)).toBe(expected);
  });

  it("scans a body nested 1,000,000 levels without a stack", () => {
    const text = `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`;
    expect(positionPastDepth(text, MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH);
  });
});

describe("parseJsonBody", () => {
  it("parses JSON up to the limit", () => {
    const text = `${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}`;
    expect(parseJsonBody(text)).toBeInstanceOf(Array);
  });

  it("refuses one level more with a json_invalid item that says so", () => {
    const text = `${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`;
    expect(refusal(text)).toEqual([
      {
        type: "json_invalid",
        loc: ["body", MAX_JSON_DEPTH],
        msg: "JSON decode error: nested deeper than 64 levels",
        input: {},
        ctx: { error: "nested deeper than 64 levels" },
      },
    ]);
  });

  it("reports malformed JSON, and an empty body as missing", () => {
    expect(refusal('{"a":')).toEqual([
      expect.objectContaining({
        type: "json_invalid",
        loc: ["body", expect.any(Number)],
        msg: "JSON decode error",
      }),
    ]);
    expect(refusal("")).toEqual([{ type: "missing", loc: ["body"], msg: "Field required", input: null }]);
  });

  it("decodes a base64 body first", () => {
    expect(parseJsonBody(Buffer.from('{"a":1}').toString("base64"), true)).toEqual({ a: 1 });
  });

  it("drops __proto__ and constructor keys at every level, and no prototype changes", () => {
    const parsed = parseJsonBody(
      '{"a":1,"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"b":{"__proto__":{"x":1},"c":2}}',
    ) as Record<string, unknown>;

    expect(parsed).toEqual({ a: 1, b: { c: 2 } });
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.hasOwn(parsed, "__proto__")).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Even a careless copy of the result cannot reach a prototype now.
    const copy = Object.assign({}, parsed) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  });
});
