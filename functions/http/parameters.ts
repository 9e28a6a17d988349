/**
 * Query and path parameters arrive as text, but a route declares them with their real types (an
 * integer with its bounds and default, say), so the OpenAPI document publishes them as clients must
 * send them. Before validation, text is turned into the number its schema expects, as FastAPI does;
 * text that is no integer stays text, so validation reports it (`int_parsing`, with the text as input).
 */
import type { $ZodType, $ZodTypes } from "zod/v4/core";

type Expected = "integer" | "number" | "boolean" | "text";

const INTEGER_FORMATS = new Set(["safeint", "int32", "uint32"]);
const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;
const NUMBER_TEXT = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;
/** The words Pydantic reads as booleans (any case). */
const TRUE_TEXT = new Set(["1", "on", "t", "true", "y", "yes"]);
const FALSE_TEXT = new Set(["0", "off", "f", "false", "n", "no"]);

function formatOf(definition: object): unknown {
  return "format" in definition ? definition.format : undefined;
}

/** What a parameter's schema expects once wrappers (optional, default, pipe input…) are looked through. */
function expectedOf(schema: $ZodType): Expected {
  const def = (schema as $ZodTypes)._zod.def;
  switch (def.type) {
    case "optional":
    case "default":
    case "prefault":
    case "nullable":
    case "nonoptional":
    case "readonly":
    case "catch":
      return expectedOf(def.innerType);
    case "pipe":
      return expectedOf(def.in);
    case "number": {
      const formats = [formatOf(def), ...(def.checks ?? []).map((check) => formatOf(check._zod.def))];
      return formats.some((format) => INTEGER_FORMATS.has(String(format))) ? "integer" : "number";
    }
    case "boolean":
      return "boolean";
    default:
      return "text";
  }
}

const expectations = new WeakMap<$ZodType, Map<string, Expected>>();

function expectationsOf(schema: $ZodType): Map<string, Expected> {
  let known = expectations.get(schema);
  if (!known) {
    const def = (schema as $ZodTypes)._zod.def;
    const shape: Record<string, $ZodType> = def.type === "object" ? def.shape : {};
    known = new Map(Object.entries(shape).map(([name, field]) => [name, expectedOf(field)]));
    expectations.set(schema, known);
  }
  return known;
}

/** The parameters with numeric text turned into numbers where the schema expects numbers. */
export function coerceParameters(schema: $ZodType, values: Record<string, string | undefined>): unknown {
  const known = expectationsOf(schema);
  const out: Record<string, unknown> = { ...values };
  for (const [name, value] of Object.entries(values)) {
    const expected = known.get(name);
    if (value === undefined || expected === undefined || expected === "text") continue;
    if (expected === "boolean") {
      const word = value.trim().toLowerCase();
      if (TRUE_TEXT.has(word)) out[name] = true;
      else if (FALSE_TEXT.has(word)) out[name] = false;
      continue;
    }
    if (INTEGER_TEXT.test(value) || (expected === "number" && NUMBER_TEXT.test(value))) {
      out[name] = Number(value);
    }
  }
  return out;
}
