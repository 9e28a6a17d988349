/**
 * Template kind → template, and the one place a stored tool (kind + raw settings) becomes a
 * configured look-up tool. Configuration is validated here, so a bad setting fails when a tool is
 * saved or loaded, never in the middle of a visitor's turn. Secrets are validated per call, as they
 * arrive decrypted.
 */
import type { HttpGet } from "#functions/tools/http-get";
import type { LookupResult } from "#functions/tools/result";
import type { LookupTemplate, TemplateKind } from "#functions/tools/template";
import { httpGetTemplate } from "#functions/tools/templates/http-get";
import { lightspeedTemplate } from "#functions/tools/templates/lightspeed";
import { picqerTemplate } from "#functions/tools/templates/picqer";
import { sendcloudTemplate } from "#functions/tools/templates/sendcloud";
import { shopifyTemplate } from "#functions/tools/templates/shopify";
import { woocommerceTemplate } from "#functions/tools/templates/woocommerce";
import {
  cleanValue,
  type InvalidVariable,
  isValidValue,
  type ToolVariable,
} from "#functions/tools/variables";

export const lookupTemplates = {
  woocommerce: woocommerceTemplate,
  shopify: shopifyTemplate,
  lightspeed: lightspeedTemplate,
  sendcloud: sendcloudTemplate,
  picqer: picqerTemplate,
  http_get: httpGetTemplate,
} as const satisfies Record<TemplateKind, unknown>;

export type LookupTemplates = typeof lookupTemplates;

/** A tool as an organization stored it (secrets live elsewhere, encrypted). */
export interface StoredTool {
  id: string;
  /** Model-facing name, `^[a-zA-Z][a-zA-Z0-9_]{0,63}$`. */
  name: string;
  kind: TemplateKind;
  config: unknown;
  /** Replaces the template's description when the administrator wrote their own. */
  description?: string;
}

export interface LookupCall {
  /** Decrypted credentials, validated against the template's secret schema here. */
  secrets: unknown;
  variables: Readonly<Record<string, string>>;
  signal: AbortSignal;
  deadline: number;
  http: HttpGet;
}

/** A template bound to its validated configuration; what tool specs and tool boxes work with. */
export interface ConfiguredTool {
  id: string;
  name: string;
  kind: TemplateKind;
  displayName: string;
  description: string;
  variables: readonly ToolVariable[];
  lookup(call: LookupCall): Promise<LookupResult>;
}

export type ConfigureResult = { ok: true; tool: ConfiguredTool } | { ok: false; issues: string[] };

const TOOL_NAME = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;

function bind<Config, Secrets>(
  template: LookupTemplate<Config, Secrets>,
  stored: StoredTool,
): ConfigureResult {
  const parsed = template.configSchema.safeParse(stored.config);
  if (!parsed.success) {
    return {
      ok: false,
      issues: parsed.error.issues.map((issue) => `${issue.path.join(".") || "config"}: ${issue.message}`),
    };
  }
  const config = parsed.data;
  const variables = template.variables(config);
  return {
    ok: true,
    tool: {
      id: stored.id,
      name: stored.name,
      kind: template.kind,
      displayName: template.displayName,
      description: stored.description?.trim() || template.describe(config),
      variables,
      async lookup(call) {
        // Defence in depth: whoever calls, nothing is sent with a missing or malformed value.
        const values: Record<string, string> = {};
        const invalid: InvalidVariable[] = [];
        for (const variable of variables) {
          const clean = cleanValue(variable.kind, call.variables[variable.name] ?? "");
          if (isValidValue(variable.kind, clean)) values[variable.name] = clean;
          else invalid.push({ name: variable.name, label: variable.label });
        }
        if (invalid.length > 0) return { kind: "needs_input", missing: [], invalid };
        const secrets = template.secretSchema.safeParse(call.secrets);
        if (!secrets.success) return { kind: "unavailable", reason: "misconfigured" };
        return template.lookup({ ...call, variables: values, config, secrets: secrets.data });
      },
    },
  };
}

export function configureTool(stored: StoredTool): ConfigureResult {
  if (!TOOL_NAME.test(stored.name))
    return { ok: false, issues: ["name: must match ^[a-zA-Z][a-zA-Z0-9_]{0,63}$"] };
  switch (stored.kind) {
    case "woocommerce":
      return bind(lookupTemplates.woocommerce, stored);
    case "shopify":
      return bind(lookupTemplates.shopify, stored);
    case "lightspeed":
      return bind(lookupTemplates.lightspeed, stored);
    case "sendcloud":
      return bind(lookupTemplates.sendcloud, stored);
    case "picqer":
      return bind(lookupTemplates.picqer, stored);
    case "http_get":
      return bind(lookupTemplates.http_get, stored);
    default:
      return { ok: false, issues: ["kind: unknown template kind"] };
  }
}
