/**
 * The details a look-up tool needs from the visitor (order number, e-mail, …): how each kind is
 * cleaned, validated and compared, how it is found in free text (for the scripted engine), and the
 * server-side collect-before-call rule. Pure functions only: no I/O, no clock.
 */

export const variableKinds = [
  "order_number",
  "order_reference",
  "email",
  "tracking_code",
  "postal_code",
  "identifier",
] as const;
export type VariableKind = (typeof variableKinds)[number];

/** One detail a tool collects. All variables of a tool are required. */
export interface ToolVariable {
  /** Input property name the model fills in (`^[a-z][a-z0-9_]*$`). */
  name: string;
  /** Short human label, used when asking the visitor ("order number"). */
  label: string;
  /** Shown to the model in the input schema. */
  description: string;
  kind: VariableKind;
}

interface KindRules {
  /** Strips decoration the visitor adds ("#", "mailto:", spaces); the result is what is sent. */
  clean(raw: string): string;
  isValid(clean: string): boolean;
  /** Equality key between what the visitor typed and what a platform returns. */
  canonical(clean: string): string;
  /** Loose JSON-schema hints for the model; the server re-validates anyway. */
  pattern?: string;
  format?: "email";
}

const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const ORDER_NUMBER = /^(?=[^\d]*\d)[A-Za-z0-9](?:[A-Za-z0-9_/-]{0,38}[A-Za-z0-9])?$/;
const TRACKING_CODE = /^(?=[^\d]*\d)[A-Z0-9]{8,40}$/;
const POSTAL_CODE = /^(?=[^\d]*\d)[A-Z0-9](?:[A-Z0-9 -]{1,8}[A-Z0-9])$/;
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;

const trimPunctuation = (raw: string): string =>
  raw
    .normalize("NFKC")
    .trim()
    .replace(/^["'“”‘’<([]+|["'“”‘’>)\].,;:!?]+$/gu, "")
    .trim();

const orderRules: KindRules = {
  clean: (raw) => trimPunctuation(raw).replace(/^#\s*/, ""),
  isValid: (clean) => ORDER_NUMBER.test(clean),
  canonical: (clean) => clean.replace(/^#\s*/, "").toUpperCase(),
  pattern: "^#?[A-Za-z0-9][A-Za-z0-9_/-]{0,39}$",
};

const rules: Record<VariableKind, KindRules> = {
  order_number: orderRules,
  order_reference: orderRules,
  email: {
    clean: (raw) => trimPunctuation(raw.trim().replace(/^mailto:/i, "")),
    isValid: (clean) => clean.length <= 254 && EMAIL.test(clean),
    canonical: (clean) => clean.toLowerCase(),
    format: "email",
  },
  tracking_code: {
    clean: (raw) =>
      trimPunctuation(raw)
        .replace(/[\s-]+/g, "")
        .toUpperCase(),
    isValid: (clean) => TRACKING_CODE.test(clean),
    canonical: (clean) => clean.replace(/[\s-]+/g, "").toUpperCase(),
    pattern: "^[A-Za-z0-9 -]{8,48}$",
  },
  postal_code: {
    clean: (raw) => trimPunctuation(raw).toUpperCase().replace(/\s+/g, " "),
    isValid: (clean) => POSTAL_CODE.test(clean),
    canonical: (clean) => clean.toUpperCase().replace(/[\s-]+/g, ""),
    pattern: "^[A-Za-z0-9][A-Za-z0-9 -]{1,8}[A-Za-z0-9]$",
  },
  identifier: {
    clean: (raw) => trimPunctuation(raw),
    isValid: (clean) => IDENTIFIER.test(clean),
    canonical: (clean) => clean.toUpperCase(),
  },
};

export function cleanValue(kind: VariableKind, raw: string): string {
  return rules[kind].clean(raw);
}

export function isValidValue(kind: VariableKind, clean: string): boolean {
  return rules[kind].isValid(clean);
}

/** The equality key of a value ("#1001" → "1001", e-mails lower case): what caches are keyed by. */
export function canonicalValue(kind: VariableKind, raw: string): string {
  return rules[kind].canonical(rules[kind].clean(raw));
}

/** True when two values of one kind denote the same thing (e-mail case-insensitive, "#1001" ≡ "1001", …). */
export function sameValue(kind: VariableKind, a: unknown, b: unknown): boolean {
  if (typeof a !== "string" && typeof a !== "number") return false;
  if (typeof b !== "string" && typeof b !== "number") return false;
  const left = rules[kind].canonical(rules[kind].clean(String(a)));
  return left !== "" && left === rules[kind].canonical(rules[kind].clean(String(b)));
}

export function schemaHints(kind: VariableKind): { pattern?: string; format?: "email" } {
  const { pattern, format } = rules[kind];
  return { ...(pattern ? { pattern } : {}), ...(format ? { format } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Free-text extractors (scripted engine). Candidates come back cleaned, valid, best first.

const ORDER_KEYWORDS = [
  "ordernummer",
  "ordernumber",
  "ordernr",
  "order",
  "bestellingnummer",
  "bestelnummer",
  "bestelling",
  "bestellnummer",
  "bestellnr",
  "bestellung",
  "auftragsnummer",
  "auftrag",
  "commande",
  "pedido",
  "encomenda",
  "ordine",
  "referentie",
  "reference",
  "referenz",
  "référence",
  "referencia",
  "ref",
].join("|");
const NUMBER_WORDS = "number|nummer|numéro|numero|número|num|nr|no|n°|nº|id";
// Must hold a digit, so filler words ("is", "lautet") are skipped rather than taken as the number.
const ORDER_TOKEN = "(?=[A-Za-z_/-]*\\d)[A-Za-z0-9][A-Za-z0-9_/-]*(?![A-Za-z0-9])";
const ORDER_AFTER_KEYWORD = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:${ORDER_KEYWORDS})(?!\\p{L})(?:\\s*(?:${NUMBER_WORDS})(?!\\p{L})\\.?)?` +
    `(?:\\s+[^\\s\\d#:]+){0,3}?\\s*[:=]?\\s*#?\\s*(${ORDER_TOKEN})`,
  "giu",
);
const HASH_ORDER = new RegExp(`(?<![\\p{L}\\p{N}&/])#\\s?(${ORDER_TOKEN})`, "gu");
const DATE_LIKE = /^\d{1,4}[-/]\d{1,2}[-/]\d{1,4}$/;

function orderCandidates(text: string): string[] {
  const found: string[] = [];
  const accept = (token: string, next: string) => {
    if (next === "@" || DATE_LIKE.test(token)) return;
    const clean = orderRules.clean(token);
    if (clean.length >= 3 && orderRules.isValid(clean)) found.push(clean);
  };
  for (const m of text.matchAll(HASH_ORDER)) accept(m[1] ?? "", text[(m.index ?? 0) + m[0].length] ?? "");
  for (const m of text.matchAll(ORDER_AFTER_KEYWORD))
    accept(m[1] ?? "", text[(m.index ?? 0) + m[0].length] ?? "");
  // A bare reply ("1001", "#1001.") to "what is your order number?".
  const whole = orderRules.clean(text);
  if (/^[A-Za-z0-9_/-]+$/.test(whole) && whole.length >= 3 && orderRules.isValid(whole)) found.push(whole);
  return found;
}

const EMAIL_IN_TEXT = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;

function emailCandidates(text: string): string[] {
  return [...text.matchAll(EMAIL_IN_TEXT)]
    .map((m) => rules.email.clean(m[0]))
    .filter((clean) => rules.email.isValid(clean));
}

const TRACKING_KEYWORDS = [
  "track\\s*(?:&|and|en|und)\\s*trace(?:\\s*code)?",
  "track-and-trace(?:\\s*code)?",
  "tracking\\s*(?:code|number|nummer|nr|id|no)",
  "trackingcode",
  "tracking-code",
  "trackingnummer",
  "tracking",
  "barcode",
  "zendingnummer",
  "zendingscode",
  "pakketnummer",
  "sendungsnummer",
  "paketnummer",
  "numéro de suivi",
  "suivi",
  "código de seguimiento",
  "seguimiento",
  "codice di tracciamento",
].join("|");
const TRACKING_AFTER_KEYWORD = new RegExp(
  `(?<!\\p{L})(?:${TRACKING_KEYWORDS})(?!\\p{L})(?:\\s+[^\\s\\d:]+){0,3}?\\s*[:=]?\\s*([A-Za-z0-9]{8,40})(?![A-Za-z0-9@])`,
  "giu",
);
// Without a keyword only shapes unlike order numbers and phone numbers: letters and digits mixed
// (3SYZXG…, 1Z…, JVGL…) or 14+ digits (DHL, DPD).
const TRACKING_SHAPE =
  /(?<![A-Za-z0-9@.])(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{10,40}(?![A-Za-z0-9@])|(?<![\d+])\d{14,40}(?!\d)/g;

function trackingCandidates(text: string): string[] {
  const withoutEmails = text.replace(EMAIL_IN_TEXT, " ").replace(/https?:\/\/\S+/g, " ");
  const keyed = [...withoutEmails.matchAll(TRACKING_AFTER_KEYWORD)].map((m) => m[1] ?? "");
  const shaped = [...withoutEmails.matchAll(TRACKING_SHAPE)]
    .map((m) => m[0])
    .filter((token) => (token.match(/\d/g) ?? []).length >= 4);
  return [...keyed, ...shaped].map((t) => rules.tracking_code.clean(t)).filter(rules.tracking_code.isValid);
}

const POSTAL_KEYWORDS = [
  "postcode",
  "post code",
  "postal code",
  "postalcode",
  "zip\\s*code",
  "zipcode",
  "zip",
  "plz",
  "postleitzahl",
  "code postal",
  "código postal",
  "codice postale",
  "cap",
  "postnummer",
].join("|");
const POSTAL_SHAPES =
  "[1-9]\\d{3}\\s?[A-Za-z]{2}|[A-Za-z]{1,2}\\d[A-Za-z\\d]?\\s?\\d[A-Za-z]{2}|[A-Za-z]\\d[A-Za-z]\\s?\\d[A-Za-z]\\d|\\d{5}-\\d{4}|\\d{3}\\s?\\d{2}|\\d{4,5}";
const POSTAL_AFTER_KEYWORD = new RegExp(
  `(?<!\\p{L})(?:${POSTAL_KEYWORDS})(?!\\p{L})(?:\\s+[^\\s\\d:]+){0,3}?\\s*[:=]?\\s*(${POSTAL_SHAPES})(?![A-Za-z0-9])`,
  "giu",
);
// Without a keyword: Dutch "5611 EM" / "5611EM" (upper case when spaced, so "1234 is" is not one)
// and British "SW1A 1AA".
const DUTCH_POSTCODE =
  /(?<![A-Za-z0-9])[1-9]\d{3}(?: ?(?!SA|SD|SS)[A-Z]{2}|(?!sa|sd|ss)[a-z]{2})(?![A-Za-z0-9])/g;
const UK_POSTCODE = /(?<![A-Za-z0-9])[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}(?![A-Za-z0-9])/g;

function postalCandidates(text: string): string[] {
  const withoutEmails = text.replace(EMAIL_IN_TEXT, " ");
  const keyed = [...withoutEmails.matchAll(POSTAL_AFTER_KEYWORD)].map((m) => m[1] ?? "");
  const dutch = [...withoutEmails.matchAll(DUTCH_POSTCODE)].map((m) => m[0]);
  const uk = [...withoutEmails.matchAll(UK_POSTCODE)].map((m) => m[0]);
  return [...keyed, ...dutch, ...uk].map((t) => rules.postal_code.clean(t)).filter(rules.postal_code.isValid);
}

const extractors: Record<VariableKind, (text: string) => string[]> = {
  order_number: orderCandidates,
  order_reference: orderCandidates,
  email: emailCandidates,
  tracking_code: trackingCandidates,
  postal_code: postalCandidates,
  identifier: () => [],
};

/** Values of `kind` found in free visitor text, cleaned and valid, most likely first, no duplicates. */
export function extractValues(kind: VariableKind, text: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const value of extractors[kind](text.normalize("NFKC"))) {
    const key = rules[kind].canonical(value);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Collect-before-call.

export interface MissingVariable {
  name: string;
  label: string;
  /** `not_given_by_visitor`: the model proposed a value the visitor never typed. */
  reason: "absent" | "not_given_by_visitor";
}

export interface InvalidVariable {
  name: string;
  label: string;
}

export type CollectedCheck =
  | { ready: true; values: Record<string, string> }
  | { ready: false; missing: MissingVariable[]; invalid: InvalidVariable[] };

const ALNUM_RUN = /[\p{L}\p{N}]+/gu;
const JOINABLE_GAP = /^[\s\-/._]{1,2}$/;

/**
 * True when the visitor typed `clean` in one of their messages. E-mails compare whole addresses;
 * other kinds compare letters and digits only, so "5611 em" gives "5611EM" and "#1001" gives "1001".
 */
function givenByVisitor(kind: VariableKind, clean: string, visitorTexts: readonly string[]): boolean {
  if (kind === "email") {
    const wanted = rules.email.canonical(clean);
    return visitorTexts.some((text) =>
      emailCandidates(text.normalize("NFKC")).some((e) => e.toLowerCase() === wanted),
    );
  }
  const wanted = clean.toUpperCase().replace(/[^\p{L}\p{N}]/gu, "");
  if (wanted === "") return false;
  return visitorTexts.some((raw) => {
    const text = raw.normalize("NFKC");
    const runs = [...text.matchAll(ALNUM_RUN)];
    for (let start = 0; start < runs.length; start++) {
      let joined = "";
      for (let end = start; end < runs.length && end < start + 4; end++) {
        const run = runs[end];
        const previous = runs[end - 1];
        if (!run) break;
        if (end > start && previous) {
          const gap = text.slice((previous.index ?? 0) + previous[0].length, run.index ?? 0);
          if (!JOINABLE_GAP.test(gap)) break;
        }
        joined += run[0].toUpperCase();
        if (joined === wanted) return true;
        if (joined.length >= wanted.length) break;
      }
    }
    return false;
  });
}

/**
 * Decides whether a look-up may run: every required variable present in `proposed`, valid, and typed
 * by the visitor in this conversation (`visitorTexts`: the visitor's own messages only). Values come
 * back cleaned, ready to send.
 */
export function checkCollected(
  required: readonly ToolVariable[],
  proposed: unknown,
  visitorTexts: readonly string[],
): CollectedCheck {
  const input: Record<string, unknown> =
    typeof proposed === "object" && proposed !== null ? (proposed as Record<string, unknown>) : {};
  const values: Record<string, string> = {};
  const missing: MissingVariable[] = [];
  const invalid: InvalidVariable[] = [];
  for (const variable of required) {
    const raw = input[variable.name];
    const text = typeof raw === "number" ? String(raw) : raw;
    if (typeof text !== "string" || text.trim() === "") {
      missing.push({ name: variable.name, label: variable.label, reason: "absent" });
      continue;
    }
    const clean = rules[variable.kind].clean(text);
    if (!rules[variable.kind].isValid(clean)) {
      invalid.push({ name: variable.name, label: variable.label });
    } else if (!givenByVisitor(variable.kind, clean, visitorTexts)) {
      missing.push({ name: variable.name, label: variable.label, reason: "not_given_by_visitor" });
    } else {
      values[variable.name] = clean;
    }
  }
  return missing.length === 0 && invalid.length === 0
    ? { ready: true, values }
    : { ready: false, missing, invalid };
}
