/**
 * A look-up template: one kind of external platform, what an administrator configures for it
 * (public settings and secrets, as zod/mini schemas), which details the visitor must give, how the
 * model is told about it, and the read-only look-up itself.
 *
 * `lookup` only ever runs with variables that passed collect-before-call (cleaned, valid, typed by
 * the visitor), and only talks to the platform through `http` (GET only). It must decide ownership
 * itself: a record is "found" only when every second factor (e-mail, postal code) matches.
 */
import type * as z from "zod/mini";
import type { HttpGet } from "#functions/tools/http-get";
import type { LookupResult } from "#functions/tools/result";
import type { ToolVariable } from "#functions/tools/variables";

export const templateKinds = [
  "woocommerce",
  "shopify",
  "lightspeed",
  "sendcloud",
  "picqer",
  "http_get",
] as const;
export type TemplateKind = (typeof templateKinds)[number];

export interface LookupRequest<Config, Secrets> {
  config: Config;
  secrets: Secrets;
  /** Cleaned values keyed by variable name, every variable of `variables(config)` present. */
  variables: Readonly<Record<string, string>>;
  signal: AbortSignal;
  /** Epoch ms by which the turn must answer. */
  deadline: number;
  http: HttpGet;
}

export interface LookupTemplate<Config, Secrets> {
  readonly kind: TemplateKind;
  readonly displayName: string;
  /** Settings that may be shown back to administrators. */
  readonly configSchema: z.ZodMiniType<Config>;
  /** Credentials: stored encrypted, never shown, logged or given to the model. */
  readonly secretSchema: z.ZodMiniType<Secrets>;
  /** What the visitor must give before a look-up (fixed per platform; configured for http_get). */
  variables(config: Config): readonly ToolVariable[];
  /** Tells the model when to use the tool and which details to collect first. */
  describe(config: Config): string;
  lookup(request: LookupRequest<Config, Secrets>): Promise<LookupResult>;
}

/** The sentence every description ends with, naming the details to collect. */
export function collectFirstSentence(variables: readonly ToolVariable[]): string {
  const labels = variables.map((v) => v.label);
  const list =
    labels.length <= 1 ? (labels[0] ?? "") : `${labels.slice(0, -1).join(", ")} and ${labels.at(-1)}`;
  return (
    `Before calling, ask the visitor for their ${list} and wait until they have typed ${labels.length > 1 ? "all of them" : "it"} ` +
    "in the conversation; never guess, never reuse example values. If nothing is found, ask them to check the details; " +
    "do not say whether a record with one of the details exists."
  );
}
