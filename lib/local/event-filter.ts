/**
 * Lambda event filtering, as event source mappings apply it to records before invoking: a record
 * passes when any of the mapping's patterns matches it. A pattern is a JSON object mirroring the
 * record; every key it names must match:
 *  - an array lists accepted values for that field: exact values (string, number, boolean, null)
 *    or matchers `{"prefix": s}`, `{"suffix": s}`, `{"exists": bool}`, `{"anything-but": v | [v…]}`,
 *    `{"numeric": [op, n, (op, n)]}`; a field holding an array matches if any element does;
 *  - an object descends into the field of the same name.
 * Unknown matcher objects never match (a pattern Lambda would refuse at creation is a mistake here too).
 */

type Json = unknown;

export function matchesAny(patterns: readonly Record<string, unknown>[], record: Json): boolean {
  return patterns.length === 0 || patterns.some((pattern) => matches(pattern, record));
}

export function matches(pattern: Record<string, unknown>, record: Json): boolean {
  const object = isObject(record) ? record : {};
  return Object.entries(pattern).every(([key, rule]) => {
    const present = Object.hasOwn(object, key);
    const value = present ? object[key] : undefined;
    if (Array.isArray(rule)) return matchesField(rule, present, value);
    if (isObject(rule)) return present && matches(rule, value);
    return false;
  });
}

function matchesField(accepted: readonly unknown[], present: boolean, value: unknown): boolean {
  const candidates = Array.isArray(value) ? value : [value];
  return accepted.some((rule) => {
    if (isObject(rule)) {
      if ("exists" in rule) return rule.exists === present;
      return present && candidates.some((candidate) => matchesOperator(rule, candidate));
    }
    return present && candidates.some((candidate) => candidate === rule);
  });
}

function matchesOperator(rule: Record<string, unknown>, value: unknown): boolean {
  const [operator, operand] = Object.entries(rule)[0] ?? [];
  switch (operator) {
    case "prefix":
      return typeof value === "string" && typeof operand === "string" && value.startsWith(operand);
    case "suffix":
      return typeof value === "string" && typeof operand === "string" && value.endsWith(operand);
    case "anything-but": {
      const excluded = Array.isArray(operand) ? operand : [operand];
      return !excluded.includes(value);
    }
    case "numeric":
      return typeof value === "number" && Array.isArray(operand) && numericMatches(operand, value);
    default:
      return false;
  }
}

function numericMatches(conditions: readonly unknown[], value: number): boolean {
  for (let index = 0; index < conditions.length; index += 2) {
    const operator = conditions[index];
    const bound = conditions[index + 1];
    if (typeof bound !== "number") return false;
    const ok =
      operator === "="
        ? value === bound
        : operator === "<"
          ? value < bound
          : operator === "<="
            ? value <= bound
            : operator === ">"
              ? value > bound
              : operator === ">="
                ? value >= bound
                : false;
    if (!ok) return false;
  }
  return true;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
