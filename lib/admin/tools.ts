/**
 * `tools …`: a chatbot's look-up tools. Credentials are given once, at `add` (or replaced at
 * `update`), from a JSON file (`--credentials-file`, `-` for stdin) or `--credential field=value`;
 * they are sealed with the tool-credentials key and only ever shown masked. `tools test` calls the
 * real platform with sample values and prints what the chatbot would see.
 *
 * The key comes from the environment: TOOL_CREDENTIALS_KEY_ID (the stack's ToolCredentialsKeyArn
 * output) for a deployed stage; the local runtime's key file otherwise (its runtime.json says where).
 */
import { readFileSync } from "node:fs";
import {
  addTool,
  listTools,
  removeTool,
  type TestToolInput,
  type ToolsContext,
  testTool,
  updateTool,
} from "#functions/domain/tools";
import { AppError } from "#functions/errors";
import { envelopeCipherFor } from "#functions/secrets/envelope";
import { toolEnvironment } from "#functions/tools/environment";
import { createHttpGet } from "#functions/tools/http-get";
import { templateKinds } from "#functions/tools/template";
import {
  type AdminContext,
  type Command,
  type CommandInput,
  notBoth,
  numberOption,
  optional,
  positional,
  repeated,
  required,
} from "./command.ts";

function toolsContext(ctx: AdminContext): ToolsContext {
  const cipher = envelopeCipherFor(toolEnvironment(ctx.environment).credentialKey);
  return { db: ctx.db, clock: ctx.clock, ...(cipher ? { credentials: cipher } : {}) };
}

/** `field=value` pairs (repeatable option) as an object. */
function pairs(input: CommandInput, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of repeated(input, name)) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new AppError("invalid_argument", { detail: `--${name} takes field=value` });
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

function jsonObject(text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Never echo the text: it may hold credentials.
    throw new AppError("invalid_argument", { detail: `${what} is not valid JSON` });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new AppError("invalid_argument", { detail: `${what} must be a JSON object` });
  }
  return parsed as Record<string, unknown>;
}

function configFrom(input: CommandInput): Record<string, unknown> | undefined {
  const inline = optional(input, "config");
  const file = optional(input, "config-file");
  notBoth(input, "config", "config-file");
  if (inline !== undefined) return jsonObject(inline, "--config");
  if (file !== undefined) return jsonObject(readFileSync(file === "-" ? 0 : file, "utf8"), "--config-file");
  return undefined;
}

function credentialsFrom(input: CommandInput): Record<string, string> | undefined {
  const file = optional(input, "credentials-file");
  const given = pairs(input, "credential");
  if (file === undefined) return Object.keys(given).length > 0 ? given : undefined;
  const fromFile = jsonObject(readFileSync(file === "-" ? 0 : file, "utf8"), "--credentials-file");
  const out: Record<string, string> = { ...given };
  for (const [field, value] of Object.entries(fromFile)) {
    if (typeof value !== "string") {
      throw new AppError("invalid_argument", { detail: `Credential ${field} must be a string` });
    }
    out[field] = value;
  }
  return out;
}

const where = { org: { type: "string" }, chatbot: { type: "string" } } as const;
const whereHelp = { org: "Organization id (required)", chatbot: "Chatbot id (required)" };

const settings = {
  name: { type: "string" },
  config: { type: "string" },
  "config-file": { type: "string" },
  "credentials-file": { type: "string" },
  credential: { type: "string", multiple: true },
  description: { type: "string" },
  "requests-per-minute": { type: "string" },
} as const;

const settingsHelp = {
  name: "Model-facing name, [a-zA-Z][a-zA-Z0-9_]* (default lookup_<kind>)",
  config: 'Template settings as JSON, e.g. \'{"shopUrl":"https://shop.example"}\' (see docs/lookup-tools.md)',
  "config-file": "Template settings from a JSON file",
  "credentials-file":
    "Credentials from a JSON file ({field: value}; - reads stdin); preferred over --credential",
  credential: "One credential as field=value (repeatable; lands in shell history)",
  description: "Replaces the template's description for the model",
  "requests-per-minute": "Cap on requests to the platform (token bucket; default per platform)",
};

export const toolCommands: Command[] = [
  {
    group: "tools",
    name: "add",
    summary: `Add a look-up tool to a chatbot from a template (${templateKinds.join(", ")}).`,
    options: { ...where, kind: { type: "string" }, ...settings },
    help: { ...whereHelp, kind: `Template: ${templateKinds.join(" | ")} (required)`, ...settingsHelp },
    run: (ctx, input) => {
      const name = optional(input, "name");
      const description = optional(input, "description");
      const requestsPerMinute = numberOption(input, "requests-per-minute");
      return addTool(toolsContext(ctx), {
        organizationId: required(input, "org"),
        chatbotId: required(input, "chatbot"),
        kind: required(input, "kind"),
        config: configFrom(input) ?? {},
        credentials: credentialsFrom(input) ?? {},
        ...(name === undefined ? {} : { name }),
        ...(description === undefined ? {} : { description }),
        ...(requestsPerMinute === undefined ? {} : { requestsPerMinute }),
      });
    },
  },
  {
    group: "tools",
    name: "list",
    summary: "List a chatbot's look-up tools (credentials masked).",
    options: { ...where },
    help: { ...whereHelp },
    run: (ctx, input) => listTools(ctx, required(input, "org"), required(input, "chatbot")),
  },
  {
    group: "tools",
    name: "update",
    summary: "Change a tool's settings (merged), name, description, cap, or replace its credentials.",
    positionals: ["toolId"],
    options: { ...where, ...settings },
    help: {
      ...whereHelp,
      ...settingsHelp,
      config: "Settings to change, as JSON (merged into the current ones)",
    },
    run: (ctx, input) => {
      const name = optional(input, "name");
      const description = optional(input, "description");
      const requestsPerMinute = numberOption(input, "requests-per-minute");
      const config = configFrom(input);
      const credentials = credentialsFrom(input);
      return updateTool(toolsContext(ctx), {
        organizationId: required(input, "org"),
        chatbotId: required(input, "chatbot"),
        toolId: positional(input, 0, "toolId"),
        ...(name === undefined ? {} : { name }),
        ...(description === undefined ? {} : { description }),
        ...(requestsPerMinute === undefined ? {} : { requestsPerMinute }),
        ...(config === undefined ? {} : { config }),
        ...(credentials === undefined ? {} : { credentials }),
      });
    },
  },
  {
    group: "tools",
    name: "remove",
    summary: "Remove a look-up tool (its credentials go with it).",
    positionals: ["toolId"],
    options: { ...where },
    help: { ...whereHelp },
    run: async (ctx, input) => {
      const toolId = positional(input, 0, "toolId");
      await removeTool(ctx, {
        organizationId: required(input, "org"),
        chatbotId: required(input, "chatbot"),
        toolId,
      });
      return { removed: toolId };
    },
  },
  {
    group: "tools",
    name: "test",
    summary: "Call the real platform with sample values and show what the chatbot would see.",
    positionals: ["toolId"],
    options: { ...where, value: { type: "string", multiple: true } },
    help: { ...whereHelp, value: "A sample value as name=value, e.g. order_number=1001 (repeatable)" },
    run: (ctx, input) => {
      const request: TestToolInput = {
        organizationId: required(input, "org"),
        chatbotId: required(input, "chatbot"),
        toolId: positional(input, 0, "toolId"),
        values: pairs(input, "value"),
      };
      const http = createHttpGet(toolEnvironment(ctx.environment).http);
      return testTool(toolsContext(ctx), request, { http });
    },
  },
];
