/** Query and path values arrive as text and are validated as the types their schemas declare. */
import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { coerceParameters } from "#functions/http/parameters";
import { uuid } from "#functions/http/schemas";
import { toValidationItems } from "#functions/http/validation";

const query = z.object({
  limit: z._default(z.int().check(z.gte(1), z.lte(100)), 20),
  ratio: z.optional(z.number()),
  page: z.optional(z.number().check(z.int())),
  cursor: z.optional(z.string()),
  id: z.optional(uuid("id")),
  all: z._default(z.boolean(), false),
});

function parse(values: Record<string, string>) {
  const result = query.safeParse(coerceParameters(query, values), { reportInput: true });
  return result.success
    ? { data: result.data }
    : { items: toValidationItems("query", result.error.issues, values) };
}

describe("query and path parameters", () => {
  it("turns the words Pydantic reads as booleans into booleans, any case, and applies the default", () => {
    for (const word of ["true", "TRUE", "1", "yes", "on", "t", "y"])
      expect(parse({ all: word }).data?.all).toBe(true);
    for (const word of ["false", "False", "0", "no", "off", "f", "n"])
      expect(parse({ all: word }).data?.all).toBe(false);
    expect(parse({}).data?.all).toBe(false);
  });

  it("reports text that is no boolean as Pydantic does, with the text as sent", () => {
    expect(parse({ all: "maybe" }).items).toEqual([
      {
        type: "bool_parsing",
        loc: ["query", "all"],
        msg: "Input should be a valid boolean, unable to interpret input",
        input: "maybe",
      },
    ]);
  });

  it("turns integer text into the integer its schema declares, and applies the default", () => {
    expect(parse({ limit: " 7 ", page: "-2", ratio: "0.5", cursor: "12" })).toEqual({
      data: { limit: 7, page: -2, ratio: 0.5, cursor: "12", all: false },
    });
    expect(parse({})).toEqual({ data: { limit: 20, all: false } });
  });

  it("reports what is no integer, or out of bounds, as Pydantic does, with the text as sent", () => {
    for (const [limit, type] of [
      ["abc", "int_parsing"],
      ["1.5", "int_parsing"],
      ["", "int_parsing"],
      ["0", "greater_than_equal"],
      ["101", "less_than_equal"],
    ] as const) {
      expect(parse({ limit }).items).toEqual([
        expect.objectContaining({ type, loc: ["query", "limit"], input: limit }),
      ]);
    }
    expect(parse({ limit: "abc" }).items?.[0]?.msg).toBe(
      "Input should be a valid integer, unable to parse string as an integer",
    );
  });

  it("leaves text parameters as text", () => {
    expect(parse({ id: "not-a-uuid" }).items).toEqual([
      expect.objectContaining({ type: "uuid_parsing", loc: ["query", "id"], input: "not-a-uuid" }),
    ]);
  });
});
