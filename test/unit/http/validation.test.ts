/** zod issues → Pydantic v2 / FastAPI items (docs/api.md "Validation errors"). */
import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { uuid } from "#functions/http/schemas";
import { describeUuidProblem, pydanticIssue, toValidationItems } from "#functions/http/validation";

const schema = z.object({
  id: uuid("id"),
  name: z.string().check(z.maxLength(3)),
  tags: z.optional(z.array(z.string()).check(z.maxLength(2))),
  kind: z.optional(z.enum(["a", "b", "c"])),
  count: z.optional(z.number().check(z.minimum(1), z.maximum(10))),
  nested: z.optional(z.object({ flag: z.boolean() })),
});

const itemsFor = (input: unknown) => {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) throw new Error("expected failure");
  return toValidationItems("body", result.error.issues, input);
};

describe("toValidationItems", () => {
  it("reports a missing field with the parent object as input", () => {
    const input = { name: "ab" };
    expect(itemsFor(input)).toEqual([{ type: "missing", loc: ["body", "id"], msg: "Field required", input }]);
  });

  it("reports an absent literal field as missing, with the object it is missing from", () => {
    const literal = z.object({ items: z.array(z.object({ type: z.literal("image"), url: z.string() })) });
    const input = { items: [{ url: "https://example.com/a.png" }] };
    const result = literal.safeParse(input, { reportInput: true });
    if (result.success) throw new Error("expected failure");
    expect(toValidationItems("body", result.error.issues, input)).toEqual([
      {
        type: "missing",
        loc: ["body", "items", 0, "type"],
        msg: "Field required",
        input: { url: "https://example.com/a.png" },
      },
    ]);
  });

  it("maps each kind of failure to Pydantic's type, message and context", () => {
    const items = itemsFor({
      id: "123",
      name: 5,
      tags: ["x", "y", "z"],
      kind: "d",
      count: 11,
      nested: { flag: "yes" },
    });
    expect(items).toEqual([
      {
        type: "uuid_parsing",
        loc: ["body", "id"],
        msg: "Input should be a valid UUID, invalid length: expected length 32 for simple format, found 3",
        input: "123",
        ctx: { error: "invalid length: expected length 32 for simple format, found 3" },
      },
      { type: "string_type", loc: ["body", "name"], msg: "Input should be a valid string", input: 5 },
      {
        type: "too_long",
        loc: ["body", "tags"],
        msg: "List should have at most 2 items after validation, not 3",
        input: ["x", "y", "z"],
        ctx: { field_type: "List", max_length: 2, actual_length: 3 },
      },
      {
        type: "literal_error",
        loc: ["body", "kind"],
        msg: "Input should be 'a', 'b' or 'c'",
        input: "d",
        ctx: { expected: "'a', 'b' or 'c'" },
      },
      {
        type: "less_than_equal",
        loc: ["body", "count"],
        msg: "Input should be less than or equal to 10",
        input: 11,
        ctx: { le: 10 },
      },
      {
        type: "bool_type",
        loc: ["body", "nested", "flag"],
        msg: "Input should be a valid boolean",
        input: "yes",
      },
    ]);
  });

  it("reports a body that is not an object, and a null body as missing", () => {
    expect(itemsFor([1])).toEqual([
      {
        type: "model_attributes_type",
        loc: ["body"],
        msg: "Input should be a valid dictionary or object to extract fields from",
        input: [1],
      },
    ]);
    expect(itemsFor(null)).toEqual([{ type: "missing", loc: ["body"], msg: "Field required", input: null }]);
  });

  it("uses the item a refinement attaches", () => {
    const refined = z.string().check(
      z.superRefine((value, ctx) => {
        ctx.issues.push({
          code: "custom",
          input: value,
          message: "x",
          params: pydanticIssue("url_scheme", "URL scheme should be 'https'"),
        });
      }),
    );
    const result = refined.safeParse("http://a", { reportInput: true });
    expect(result.success ? [] : toValidationItems("query", result.error.issues, "http://a")).toEqual([
      { type: "url_scheme", loc: ["query"], msg: "URL scheme should be 'https'", input: "http://a" },
    ]);
  });

  it("normalises accepted UUIDs to lower case", () => {
    expect(uuid("x").parse("ABCDEF01-2345-6789-ABCD-EF0123456789")).toBe(
      "abcdef01-2345-6789-abcd-ef0123456789",
    );
  });

  it.each([
    ["hyphenated", "abcdef01-2345-6789-abcd-ef0123456789"],
    ["upper case", "ABCDEF01-2345-6789-ABCD-EF0123456789"],
    ["mixed case", "AbCdEf01-2345-6789-aBcD-eF0123456789"],
    ["32 hex digits", "abcdef0123456789abcdef0123456789"],
    ["32 hex digits, upper case", "ABCDEF0123456789ABCDEF0123456789"],
    ["braces", "{abcdef01-2345-6789-abcd-ef0123456789}"],
    ["braces, upper case", "{ABCDEF01-2345-6789-ABCD-EF0123456789}"],
    ["urn:uuid:", "urn:uuid:abcdef01-2345-6789-abcd-ef0123456789"],
    ["urn:uuid:, upper-case digits", "urn:uuid:ABCDEF01-2345-6789-ABCD-EF0123456789"],
  ])("accepts the %s form and gives the canonical one", (_form, input) => {
    expect(uuid("x").parse(input)).toBe("abcdef01-2345-6789-abcd-ef0123456789");
  });

  it.each([
    ["URN:UUID:abcdef01-2345-6789-abcd-ef0123456789", "found `U` at 1"],
    ["{abcdef0123456789abcdef0123456789}", "invalid group count: expected 5, found 1"],
    ["urn:uuid:abcdef0123456789abcdef0123456789", "invalid group count: expected 5, found 1"],
    ["urn:uuid:{abcdef01-2345-6789-abcd-ef0123456789}", "found `{` at 10"],
    [" abcdef01-2345-6789-abcd-ef0123456789", "found ` ` at 1"],
  ])("refuses %s as Pydantic does", (input, reason) => {
    const result = uuid("x").safeParse(input, { reportInput: true });
    expect(result.success).toBe(false);
    const [item] = result.success ? [] : toValidationItems("body", result.error.issues, input);
    expect(item).toMatchObject({ type: "uuid_parsing", loc: ["body"], input });
    expect(item?.msg).toContain(reason);
    expect(item?.msg).toBe(`Input should be a valid UUID, ${String(item?.ctx?.error)}`);
  });

  it("says the input should be a string when it is not one", () => {
    const result = uuid("x").safeParse(42, { reportInput: true });
    expect(result.success ? [] : toValidationItems("body", result.error.issues, 42)).toEqual([
      { type: "string_type", loc: ["body"], msg: "Input should be a valid string", input: 42 },
    ]);
  });
});

describe("describeUuidProblem (Pydantic's wording)", () => {
  it.each([
    [
      "xyz",
      "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `x` at 1",
    ],
    ["abc", "invalid length: expected length 32 for simple format, found 3"],
    ["aaaa-bbbb", "invalid group count: expected 5, found 2"],
    ["aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeee", "invalid group length in group 4: expected 12, found 11"],
    ["abcdef0123456789abcdef01234567890", "invalid length: expected length 32 for simple format, found 33"],
    [
      "{xyz}",
      "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `x` at 2",
    ],
    [
      "urn:uuid:abc-g",
      "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `g` at 14",
    ],
    [
      "abcdef01-2345-6789-abcd-ef0123456789}",
      "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `}` at 37",
    ],
    ["abcdef012-345-6789-abcd-ef0123456789", "invalid group length in group 0: expected 8, found 9"],
    ["abcdef01-2345-6789-abcdef-0123456789", "invalid group length in group 3: expected 4, found 6"],
    ["1234567-123-123-123-12345678901", "invalid group length in group 0: expected 8, found 7"],
    // The crate would count the braces or the prefix into the last group (13, 22); it has 11 and 13.
    ["{abcdef01-2345-6789-abcd-ef012345678}", "invalid group length in group 4: expected 12, found 11"],
    [
      "urn:uuid:abcdef01-2345-6789-abcd-ef01234567890",
      "invalid group length in group 4: expected 12, found 13",
    ],
    ["a-b-c-d-e-f", "invalid group count: expected 5, found 6"],
    ["", "invalid length: expected length 32 for simple format, found 0"],
    [
      "é",
      "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `é` at 1",
    ],
  ])("%s", (input, expected) => {
    expect(describeUuidProblem(input)).toBe(expected);
  });
});
