/**
 * Turns zod issues into Pydantic v2 / FastAPI validation items, so clients written
 * for the reference API parse our 422s unchanged: same `type`, `loc`, `msg` and `input` conventions.
 */

import type { $ZodIssue } from "zod/v4/core";
import type { ValidationItem } from "#functions/errors";

export type Location = "body" | "query" | "path" | "header";

/**
 * Custom rules (refinements) attach the exact Pydantic item they stand for through `params.pydantic`.
 * Build them with `pydanticIssue()`.
 */
export interface PydanticParams {
  pydantic: { type: string; msg: string; ctx?: Record<string, unknown> };
}

export function pydanticIssue(type: string, msg: string, ctx?: Record<string, unknown>): PydanticParams {
  return { pydantic: ctx ? { type, msg, ctx } : { type, msg } };
}

/** Maps every issue; `source` is the validated value, used to report the parent object of a missing field. */
export function toValidationItems(
  location: Location,
  issues: readonly $ZodIssue[],
  source: unknown,
): ValidationItem[] {
  return issues.map((issue) => toItem(location, issue, source));
}

function toItem(location: Location, issue: $ZodIssue, source: unknown): ValidationItem {
  const path = issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment)));
  const loc: (string | number)[] = [location, ...path];
  // A query or path value is reported as it was sent (text), even when validated as a number.
  const input =
    location === "query" || location === "path" ? sentParameter(source, path, issue.input) : issue.input;
  const item = (type: string, msg: string, ctx?: Record<string, unknown>): ValidationItem =>
    ctx ? { type, loc, msg, input: input ?? null, ctx } : { type, loc, msg, input: input ?? null };
  // A field that is absent fails whatever rule it has (a literal, an enum) as Pydantic says it:
  // missing, with the object it is missing from as the input.
  if (input === undefined && path.length > 0 && issue.code !== "custom") {
    return { type: "missing", loc, msg: "Field required", input: parentOf(source, path) };
  }

  switch (issue.code) {
    case "invalid_type": {
      if (input === undefined || (input === null && path.length === 0)) {
        return { type: "missing", loc, msg: "Field required", input: parentOf(source, path) };
      }
      if (typeof input === "string" && (issue.expected === "number" || issue.expected === "int")) {
        return item("int_parsing", "Input should be a valid integer, unable to parse string as an integer");
      }
      // Query and path text that is no boolean word (body JSON keeps Pydantic's strict bool_type).
      if (typeof input === "string" && issue.expected === "boolean" && location !== "body") {
        return item("bool_parsing", "Input should be a valid boolean, unable to interpret input");
      }
      return invalidTypeItem(issue.expected, path.length === 0, item);
    }
    case "invalid_format":
      return invalidFormatItem(issue.format, input, item);
    case "invalid_value": {
      const expected = issue.values.map((value) => pythonRepr(value));
      return item("literal_error", `Input should be ${joinAlternatives(expected)}`, {
        expected: joinAlternatives(expected),
      });
    }
    case "too_big":
      return boundItem("max", issue.origin, Number(issue.maximum), input, item);
    case "too_small":
      return boundItem("min", issue.origin, Number(issue.minimum), input, item);
    case "custom": {
      const custom = (issue.params as Partial<PydanticParams> | undefined)?.pydantic;
      if (custom) return item(custom.type, custom.msg, custom.ctx);
      return item("value_error", `Value error, ${issue.message}`);
    }
    default:
      return item("value_error", `Value error, ${issue.message}`);
  }
}

type ItemFactory = (type: string, msg: string, ctx?: Record<string, unknown>) => ValidationItem;

function invalidTypeItem(expected: string, atRoot: boolean, item: ItemFactory): ValidationItem {
  switch (expected) {
    case "string":
      return item("string_type", "Input should be a valid string");
    case "number":
    case "int":
      return item("int_type", "Input should be a valid integer");
    case "boolean":
      return item("bool_type", "Input should be a valid boolean");
    case "array":
      return item("list_type", "Input should be a valid list");
    case "object":
      return atRoot
        ? item("model_attributes_type", "Input should be a valid dictionary or object to extract fields from")
        : item("model_type", "Input should be a valid dictionary or instance of Model");
    default:
      return item("value_error", `Value error, expected ${expected}`);
  }
}

function invalidFormatItem(format: string, input: unknown, item: ItemFactory): ValidationItem {
  switch (format) {
    case "uuid":
    case "guid":
      return item("uuid_parsing", `Input should be a valid UUID, ${describeUuidProblem(String(input))}`, {
        error: describeUuidProblem(String(input)),
      });
    case "url":
      return item("url_parsing", "Input should be a valid URL");
    case "base64":
      return item("base64_decode", "Base64 decoding error: 'Invalid base64 string'", {
        error: "Invalid base64 string",
      });
    default:
      return item("string_pattern_mismatch", `String should match pattern '${format}'`, { pattern: format });
  }
}

function boundItem(
  side: "max" | "min",
  origin: string,
  bound: number,
  input: unknown,
  item: ItemFactory,
): ValidationItem {
  if (origin === "string") {
    const unit = bound === 1 ? "character" : "characters";
    return side === "max"
      ? item("string_too_long", `String should have at most ${bound} ${unit}`, { max_length: bound })
      : item("string_too_short", `String should have at least ${bound} ${unit}`, { min_length: bound });
  }
  if (origin === "array") {
    const length = Array.isArray(input) ? input.length : 0;
    const unit = bound === 1 ? "item" : "items";
    return side === "max"
      ? item("too_long", `List should have at most ${bound} ${unit} after validation, not ${length}`, {
          field_type: "List",
          max_length: bound,
          actual_length: length,
        })
      : item("too_short", `List should have at least ${bound} ${unit} after validation, not ${length}`, {
          field_type: "List",
          min_length: bound,
          actual_length: length,
        });
  }
  return side === "max"
    ? item("less_than_equal", `Input should be less than or equal to ${bound}`, { le: bound })
    : item("greater_than_equal", `Input should be greater than or equal to ${bound}`, { ge: bound });
}

function sentParameter(source: unknown, path: (string | number)[], parsed: unknown): unknown {
  const [name] = path;
  if (path.length !== 1 || name === undefined || source === null || typeof source !== "object") return parsed;
  const sent = (source as Record<string | number, unknown>)[name];
  return typeof sent === "string" ? sent : parsed;
}

/** The parent object of a missing field: what Pydantic reports as `input` for `missing`. */
function parentOf(source: unknown, path: (string | number)[]): unknown {
  let value: unknown = source;
  for (const segment of path.slice(0, -1)) {
    if (value === null || typeof value !== "object") return null;
    value = (value as Record<string | number, unknown>)[segment];
  }
  return value ?? null;
}

/** Python's repr of a literal, as Pydantic prints it in `literal_error` (`'image'`, `1`, `True`). */
function pythonRepr(value: unknown): string {
  if (typeof value === "string") return `'${value}'`;
  if (typeof value === "boolean") return value ? "True" : "False";
  if (value === null || value === undefined) return "None";
  return String(value);
}

/** `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`: Pydantic's wording for alternatives. */
function joinAlternatives(values: string[]): string {
  if (values.length <= 1) return values[0] ?? "";
  return `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`;
}

/**
 * The canonical form (lower-case, hyphenated) of a UUID written in any form Pydantic v2 accepts, or
 * undefined. Pydantic parses with the Rust `uuid` crate: 32 hex digits, or the hyphenated form bare,
 * in braces or after `urn:uuid:`; hex digits in any case.
 */
export function canonicalUuid(text: string): string | undefined {
  const hyphenated = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  let digits: string | undefined;
  if (/^[0-9a-f]{32}$/i.test(text)) digits = text;
  else {
    const inner =
      text.length === 38 && text.startsWith("{") && text.endsWith("}")
        ? text.slice(1, -1)
        : text.startsWith("urn:uuid:")
          ? text.slice("urn:uuid:".length)
          : text;
    if (hyphenated.test(inner)) digits = inner.replaceAll("-", "");
  }
  if (!digits) return undefined;
  const hex = digits.toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The reason text of Pydantic's `uuid_parsing` for a string `canonicalUuid` refuses, as the `uuid`
 * crate words it, with one correction: for a last group of the wrong length the crate counts the
 * braces or the `urn:uuid:` prefix into the group; here the group is measured, so the text is true.
 */
export function describeUuidProblem(text: string): string {
  const braced = text.length >= 2 && text.startsWith("{") && text.endsWith("}");
  const urn = !braced && text.startsWith("urn:uuid:");
  const body = braced ? text.slice(1, -1) : urn ? text.slice("urn:uuid:".length) : text;
  const offset = braced ? 1 : urn ? "urn:uuid:".length : 0;
  const bounds: number[] = [];
  let index = 0;
  for (const char of body) {
    if (char === "-") bounds.push(index);
    else if (!/^[0-9a-fA-F]$/.test(char)) {
      return `invalid character: expected an optional prefix of \`urn:uuid:\` followed by [0-9a-fA-F-], found \`${char}\` at ${index + offset + 1}`;
    }
    index += char.length;
  }
  if (bounds.length === 0 && !braced && !urn) {
    return `invalid length: expected length 32 for simple format, found ${text.length}`;
  }
  if (bounds.length !== 4) return `invalid group count: expected 5, found ${bounds.length + 1}`;
  const starts = [0, 9, 14, 19, 24];
  const expected = [8, 4, 4, 4, 12];
  for (let group = 0; group < 4; group++) {
    const start = starts[group] ?? 0;
    if (bounds[group] !== (starts[group + 1] ?? 0) - 1) {
      return `invalid group length in group ${group}: expected ${expected[group]}, found ${(bounds[group] ?? 0) - start}`;
    }
  }
  return `invalid group length in group 4: expected 12, found ${body.length - 24}`;
}
