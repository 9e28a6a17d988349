/**
 * The scripted engine's look-ups, by deterministic slot filling (its `hook`).
 *
 * Main course: when the visitor's message gives a detail a tool collects (order number, e-mail,
 * tracking code, postal code: `extractValues`), or asks where an order or parcel is, pick the tool
 * that fits best, fill each of its variables from this message, else from what the visitor gave
 * earlier (kept with the conversation, or found in their earlier messages), and run the look-up
 * through the ToolBox, which enforces collect-before-call and sends nothing while a detail is
 * missing. The reply comes from the result: the order's status, "nothing matches" (the same
 * words whether the record is missing or someone else's), or a question naming exactly the
 * missing details. Anything else is left to knowledge retrieval.
 */
import { foldText } from "#functions/agent/retrieval";
import type { ScriptedHook } from "#functions/agent/scripted-engine";
import type { ConfiguredTool } from "#functions/tools/registry";
import { ASKING_FOR_DETAILS, lookupReplyText } from "#functions/tools/reply-text";
import { asLookupToolBox } from "#functions/tools/toolbox";
import { cleanValue, extractValues, isValidValue, type VariableKind } from "#functions/tools/variables";

/** Questions about an order or parcel that carry no detail yet ("where is my order?"). */
const LOOKUP_QUESTIONS = [
  /\bwhere(?:'?s| is| are)\b.{0,30}\b(?:order|parcel|package|shipment|delivery)/,
  /\b(?:order|parcel|package|shipment|delivery)\b.{0,30}\b(?:status|arrive|arriving|shipped|delivered|coming)\b/,
  /\b(?:status|track|tracking|trace)\b.{0,30}\b(?:order|parcel|package|shipment)/,
  /\btrack\s*(?:&|and)\s*trace\b/,
  /\bwaar\s+(?:is|blijft)\s+mijn\s+(?:bestelling|pakket|pakje|zending|order)/,
  /\bstatus\s+van\s+mijn\s+(?:bestelling|pakket|zending|order)/,
  /\bwanneer\s+(?:komt|wordt)\s+mijn\s+(?:bestelling|pakket|pakje|zending|order)/,
  /\bwo\s+(?:ist|bleibt)\s+meine?\s+(?:bestellung|paket|sendung|lieferung)/,
  /\bsendungsverfolgung\b/,
  /\bou\s+(?:est|en est)\s+(?:ma\s+commande|mon\s+colis)/,
  /\b(?:suivi|statut)\s+de\s+(?:ma\s+commande|mon\s+colis)/,
  /\bdonde\s+esta\s+mi\s+(?:pedido|paquete|envio)/,
  /\bestado\s+de\s+mi\s+(?:pedido|paquete|envio)/,
];
const PARCEL_WORDS =
  /\b(?:parcel|package|shipment|tracking|track|trace|pakket|pakje|zending|paket|sendung|colis|paquete|envio)\b/;
const ORDER_WORDS = /\b(?:order|bestelling|bestellung|commande|pedido|auftrag)\b/;
const ORDER_KINDS: readonly VariableKind[] = ["order_number", "order_reference"];
/** A loose order number ("it's 1001") accepted only as the answer to our own question. */
const LOOSE_ORDER_TOKEN = /(?<![\w@.])#?[A-Za-z0-9][A-Za-z0-9_/-]*\d[A-Za-z0-9_/-]*(?![\w@])/g;

export const lookupHook: ScriptedHook = async (turn) => {
  const box = asLookupToolBox(turn.tools);
  if (!box || box.tools.length === 0) return undefined;
  const text = turn.message.text;
  const folded = foldText(text);
  const lastReply = [...turn.history].reverse().find((message) => message.role === "assistant");
  const answeringUs = lastReply?.text.includes(ASKING_FOR_DETAILS) ?? false;

  const kinds = new Set(box.tools.flatMap((tool) => tool.variables.map((v) => v.kind)));
  const given = new Map<VariableKind, string[]>();
  for (const kind of kinds) {
    let values = extractValues(kind, text);
    if (values.length === 0 && answeringUs && ORDER_KINDS.includes(kind))
      values = looseOrderValues(kind, text);
    if (values.length > 0) given.set(kind, values);
  }
  const asked = LOOKUP_QUESTIONS.some((pattern) => pattern.test(folded));
  if (given.size === 0 && !asked) return undefined;

  const earlier = earlierValues(box.visitorTexts.slice(0, -1), kinds);
  const kept = box.collected();
  const kindOf = new Map(box.tools.flatMap((tool) => tool.variables.map((v) => [v.name, v.kind] as const)));
  const keptByKind = new Map<VariableKind, string>();
  for (const [name, value] of Object.entries(kept)) {
    const kind = kindOf.get(name);
    if (kind && !keptByKind.has(kind)) keptByKind.set(kind, value);
  }

  const tool = pickTool(box.tools, folded, given, (kind) => keptByKind.has(kind) || earlier.has(kind));
  const values: Record<string, string> = {};
  for (const variable of tool.variables) {
    const value =
      given.get(variable.kind)?.[0] ??
      kept[variable.name] ??
      keptByKind.get(variable.kind) ??
      earlier.get(variable.kind);
    if (value !== undefined) values[variable.name] = value;
  }
  const result = await box.lookup(tool.name, values, turn.signal);
  if (!result) return undefined;
  return {
    messages: [lookupReplyText(result, tool)],
    toolCalls: result.kind === "needs_input" ? 0 : 1,
  };
};

/** The most recent value of each kind in the visitor's earlier messages. */
function earlierValues(
  texts: readonly string[],
  kinds: ReadonlySet<VariableKind>,
): Map<VariableKind, string> {
  const found = new Map<VariableKind, string>();
  for (const text of [...texts].reverse()) {
    for (const kind of kinds) {
      if (found.has(kind)) continue;
      const [value] = extractValues(kind, text);
      if (value !== undefined) found.set(kind, value);
    }
  }
  return found;
}

function looseOrderValues(kind: VariableKind, text: string): string[] {
  return [...text.matchAll(LOOSE_ORDER_TOKEN)]
    .map((match) => cleanValue(kind, match[0]))
    .filter((value) => value.length >= 3 && isValidValue(kind, value));
}

/**
 * The tool this message is about: the one most of whose details this message gives, then the one
 * the wording points at (parcel or order), then the one with most details known, then the oldest.
 */
function pickTool(
  tools: readonly ConfiguredTool[],
  folded: string,
  given: ReadonlyMap<VariableKind, string[]>,
  known: (kind: VariableKind) => boolean,
): ConfiguredTool {
  const parcelWords = PARCEL_WORDS.test(folded);
  const orderWords = ORDER_WORDS.test(folded);
  const score = (tool: ConfiguredTool): number[] => {
    const parcelTool = tool.variables.some((v) => v.kind === "tracking_code");
    return [
      tool.variables.filter((v) => given.has(v.kind)).length,
      (parcelTool && parcelWords) || (!parcelTool && orderWords) ? 1 : 0,
      tool.variables.filter((v) => given.has(v.kind) || known(v.kind)).length,
    ];
  };
  let best = tools[0] as ConfiguredTool;
  let bestScore = score(best);
  for (const tool of tools.slice(1)) {
    const candidate = score(tool);
    const better = candidate.findIndex((value, index) => value !== bestScore[index]);
    if (better >= 0 && (candidate[better] ?? 0) > (bestScore[better] ?? 0)) {
      best = tool;
      bestScore = candidate;
    }
  }
  return best;
}
