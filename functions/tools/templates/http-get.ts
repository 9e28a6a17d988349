/**
 * The generic read-only tool: an https URL template whose path takes the visitor's variables
 * (`https://api.example.com/orders/{order_number}`), a query mapping (`{"email": "{email}"}`), an
 * optional secret header for auth, and two field maps over the JSON answer: `match` (variable →
 * field that must equal it, the ownership check) and `expose` (label → field shown to the model).
 * Only exposed scalar fields ever reach the model. The host is fixed by the administrator; visitor
 * values are only ever encoded into the path or the query.
 */
import * as z from "zod/mini";
import type { FieldsSummary, LookupResult } from "#functions/tools/result";
import { asObjects, type JsonObject, text } from "#functions/tools/summary";
import { collectFirstSentence, type LookupTemplate } from "#functions/tools/template";
import { secretString } from "#functions/tools/templates/request";
import { sameValue, type ToolVariable, variableKinds } from "#functions/tools/variables";

const PLACEHOLDER = /\{([a-z][a-z0-9_]{0,31})\}/g;
const FIELD_PATH = z.string().check(z.regex(/^[A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+)*$/), z.maxLength(200));
const FORBIDDEN_HEADERS = new Set([
  "host",
  "cookie",
  "content-length",
  "transfer-encoding",
  "connection",
  "user-agent",
]);

const variableSchema = z.object({
  name: z.string().check(z.regex(/^[a-z][a-z0-9_]{0,31}$/)),
  label: z.string().check(z.minLength(1), z.maxLength(60)),
  description: z.string().check(z.minLength(1), z.maxLength(300)),
  kind: z.enum(variableKinds),
});

const placeholders = (template: string): string[] =>
  [...template.matchAll(PLACEHOLDER)].map((m) => m[1] ?? "");

const configSchema = z
  .object({
    /** What the tool reads and when to use it, for the model. */
    purpose: z.string().check(z.minLength(1), z.maxLength(500)),
    urlTemplate: z.string().check(z.maxLength(2000)),
    query: z._default(
      z.record(z.string().check(z.regex(/^[A-Za-z0-9_.[\]-]{1,64}$/)), z.string().check(z.maxLength(200))),
      {},
    ),
    variables: z.array(variableSchema).check(z.minLength(1), z.maxLength(5)),
    auth: z.optional(
      z.object({
        headerName: z.string().check(z.regex(/^[A-Za-z0-9-]{1,64}$/)),
        /** Prefix before the secret, e.g. "Bearer". */
        scheme: z.optional(z.string().check(z.regex(/^[A-Za-z0-9-]{1,32}$/))),
      }),
    ),
    /** Where the record (object) or list of records sits in the answer; empty = the whole body. */
    recordPath: z._default(z.union([z.literal(""), FIELD_PATH]), ""),
    match: z.record(z.string(), FIELD_PATH),
    expose: z.record(z.string().check(z.regex(/^[A-Za-z][A-Za-z0-9_]{0,39}$/)), FIELD_PATH),
  })
  .check(
    z.refine((config) => {
      let url: URL;
      try {
        url = new URL(config.urlTemplate.replace(PLACEHOLDER, "x"));
      } catch {
        return false;
      }
      const authority = config.urlTemplate.replace(/^https:\/\//i, "").split("/")[0] ?? "";
      const fixedHost = !authority.includes("{") && !authority.includes("@");
      return url.protocol === "https:" && fixedHost && url.search === "" && url.hash === "";
    }, "urlTemplate must be an https URL with a fixed host and no query (use `query`)"),
    z.refine((config) => {
      const names = new Set(config.variables.map((v) => v.name));
      const used = [
        ...placeholders(config.urlTemplate),
        ...Object.values(config.query).flatMap(placeholders),
        ...Object.keys(config.match),
      ];
      return (
        used.every((name) => names.has(name)) &&
        [...names].every((name) => used.includes(name)) &&
        names.size === config.variables.length
      );
    }, "Every placeholder and match key must name a declared variable, and every variable must be used"),
    z.refine((config) => Object.keys(config.match).length > 0, "At least one response field must be matched"),
    z.refine((config) => {
      const count = Object.keys(config.expose).length;
      return count > 0 && count <= 20;
    }, "Expose between 1 and 20 fields"),
    z.refine(
      (config) => !config.auth || !FORBIDDEN_HEADERS.has(config.auth.headerName.toLowerCase()),
      "This header cannot carry credentials",
    ),
  );
const secretSchema = z.object({ headerValue: z.optional(secretString) });

export type HttpGetToolConfig = z.infer<typeof configSchema>;
export type HttpGetToolSecrets = z.infer<typeof secretSchema>;

/** Reads `a.b.0.c` from parsed JSON. */
export function readPath(value: unknown, path: string): unknown {
  if (path === "") return value;
  let current: unknown = value;
  for (const key of path.split(".")) {
    if (Array.isArray(current) && /^\d+$/.test(key)) current = current[Number(key)];
    else if (typeof current === "object" && current !== null && !Array.isArray(current))
      current = (current as JsonObject)[key];
    else return undefined;
  }
  return current;
}

function scalar(value: unknown): string | number | boolean | null | undefined {
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  return text(value);
}

export const httpGetTemplate: LookupTemplate<HttpGetToolConfig, HttpGetToolSecrets> = {
  kind: "http_get",
  displayName: "Generic read-only API",
  configSchema,
  secretSchema,
  variables: (config): readonly ToolVariable[] => config.variables,
  describe: (config) => `${config.purpose.trim()} ${collectFirstSentence(config.variables)}`,
  async lookup({ config, secrets, variables: values, signal, deadline, http }): Promise<LookupResult> {
    const kindOf = new Map(config.variables.map((v) => [v.name, v.kind]));
    const url = new URL(
      config.urlTemplate.replace(PLACEHOLDER, (_, name: string) => encodeURIComponent(values[name] ?? "")),
    );
    for (const [param, template] of Object.entries(config.query)) {
      url.searchParams.set(
        param,
        template.replace(PLACEHOLDER, (_, name: string) => values[name] ?? ""),
      );
    }
    const headers: Record<string, string> = {};
    if (config.auth) {
      if (!secrets.headerValue) return { kind: "unavailable", reason: "misconfigured" };
      headers[config.auth.headerName] = config.auth.scheme
        ? `${config.auth.scheme} ${secrets.headerValue}`
        : secrets.headerValue;
    }
    const response = await http({ url, headers, signal, deadline, notFoundOn404: true });
    if (response.kind !== "ok") return response;
    const located = readPath(response.body, config.recordPath);
    const candidates = Array.isArray(located) ? asObjects(located) : asObjects([located]);
    const record = candidates.find((candidate) =>
      Object.entries(config.match).every(([name, path]) =>
        sameValue(kindOf.get(name) ?? "identifier", readPath(candidate, path), values[name] ?? ""),
      ),
    );
    if (!record) return { kind: "not_found" };
    const fields: FieldsSummary["fields"] = {};
    for (const [label, path] of Object.entries(config.expose)) {
      const value = scalar(readPath(record, path));
      if (value !== undefined) fields[label] = value;
    }
    return { kind: "found", record: { type: "record", fields } };
  },
};
