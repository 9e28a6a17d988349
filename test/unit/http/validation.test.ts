/** zod issues → Pydantic v2 / FastAPI items (CONTRACT.md §3). */
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
  ])("%s", (input, expected) => {
    expect(describeUuidProblem(input)).toBe(expected);
  });
});
