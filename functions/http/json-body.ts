/**
 * Reads a request body as JSON, whatever its declared content type, as FastAPI does.
 *
 * Two guards come before anything recursive touches the body (JSON.parse's reviver, schema
 * validation, the idempotency fingerprint, logging):
 * - nesting is measured by one loop over the text, so a body nested 100,000 levels deep costs a
 *   scan, not a stack; deeper than MAX_JSON_DEPTH is a `json_invalid` item saying so;
 * - keys that name prototype machinery (`__proto__`, `constructor`) are dropped while parsing.
 *   They are unknown fields like any other (and ignored as such); dropping them means no later
 *   copy or merge of the body can ever reach a prototype through them.
 */
import { type ValidationItem, validationError } from "#functions/errors";

/** Deepest nesting of objects and arrays a body may have; the body itself is level 1. */
export const MAX_JSON_DEPTH = 64;

const DEPTH_ERROR = `nested deeper than ${MAX_JSON_DEPTH} levels`;
const PROTOTYPE_KEYS = new Set(["__proto__", "constructor"]);

/** The parsed body, or a 422 (thrown) with the one `missing` / `json_invalid` item that says why not. */
export function parseJsonBody(raw: string | undefined, isBase64Encoded = false): unknown {
  if (raw === undefined || raw === "") {
    throw validationError([{ type: "missing", loc: ["body"], msg: "Field required", input: null }]);
  }
  const text = isBase64Encoded ? Buffer.from(raw, "base64").toString("utf8") : raw;
  const tooDeepAt = positionPastDepth(text, MAX_JSON_DEPTH);
  if (tooDeepAt !== undefined) {
    throw validationError([jsonInvalid(tooDeepAt, DEPTH_ERROR, `JSON decode error: ${DEPTH_ERROR}`)]);
  }
  try {
    return JSON.parse(text, (key, value: unknown) => (PROTOTYPE_KEYS.has(key) ? undefined : value));
  } catch (error) {
    const reason = error instanceof Error ? error.message : "Invalid JSON";
    const position = /position (\d+)/.exec(reason)?.[1];
    throw validationError([jsonInvalid(position === undefined ? 0 : Number(position), reason)]);
  }
}

function jsonInvalid(position: number, reason: string, msg = "JSON decode error"): ValidationItem {
  return { type: "json_invalid", loc: ["body", position], msg, input: {}, ctx: { error: reason } };
}

/**
 * Where the first object or array deeper than `maxDepth` opens, or undefined when none does.
 * Brackets inside strings do not count. It does not check the JSON otherwise: JSON.parse does.
 */
export function positionPastDepth(text: string, maxDepth: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 0x5c /* \ */) index++;
      else if (char === 0x22 /* " */) inString = false;
    } else if (char === 0x22) {
      inString = true;
    } else if (char === 0x7b /* { */ || char === 0x5b /* [ */) {
      depth++;
      if (depth > maxDepth) return index;
    } else if (char === 0x7d /* } */ || char === 0x5d /* ] */) {
      depth--;
    }
  }
  return undefined;
}
