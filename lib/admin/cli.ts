/**
 * The operator CLI (`npm run admin -- <group> <command> [options]`): parses arguments, finds the
 * table (the running local runtime, or a deployed stage's table given AWS credentials), runs one
 * command, and prints its result, or its error in the management format (Format A) with --json.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { systemClock } from "#functions/domain/context";
import { AppError, toFormatA } from "#functions/errors";
import { createDb } from "#functions/store/dynamodb";
import { chatbotCommands } from "./chatbots.ts";
import type { AdminContext, Command } from "./command.ts";
import { organizationCommands } from "./organizations.ts";
import { toolCommands } from "./tools.ts";

export const commands: Command[] = [...organizationCommands, ...chatbotCommands, ...toolCommands];

const globalOptions = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  table: { type: "string" },
  region: { type: "string" },
  endpoint: { type: "string" },
} as const;

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
  /** Folder holding the local runtime's runtime.json. */
  localDirectory: string;
}

/** Returns the process exit code: 0 done, 1 the command failed, 2 usage error. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [group, name, ...rest] = argv;
  if (!group || group === "--help" || group === "-h" || group === "help") {
    io.out(overview());
    return group ? 0 : 2;
  }
  const command = commands.find((candidate) => candidate.group === group && candidate.name === name);
  if (!command) {
    io.err(`Unknown command: ${[group, name].filter(Boolean).join(" ")}\n\n${overview()}`);
    return 2;
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...globalOptions, ...command.options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    io.err(`${error instanceof Error ? error.message : String(error)}\n\n${commandHelp(command)}`);
    return 2;
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) {
    io.out(commandHelp(command));
    return 0;
  }
  const json = values.json === true;
  try {
    const ctx = adminContext(values, io);
    const result = await command.run(ctx, { values, positionals: parsed.positionals });
    io.out(json ? JSON.stringify(result, null, 2) : readable(result));
    return 0;
  } catch (error) {
    if (json) {
      io.out(JSON.stringify(toFormatA(error).body, null, 2));
    } else if (error instanceof AppError) {
      io.err(`Error (${error.code}): ${error.message}`);
    } else {
      io.err(`Error: ${error instanceof Error ? error.message : String(error)}`);
    }
    return 1;
  }
}

function adminContext(values: Record<string, string | boolean | undefined>, io: CliIo): AdminContext {
  const table = typeof values.table === "string" ? values.table : io.env.TABLE_NAME;
  if (table) {
    const region = typeof values.region === "string" ? values.region : io.env.AWS_REGION;
    const endpoint = typeof values.endpoint === "string" ? values.endpoint : undefined;
    const client = new DynamoDBClient({ ...(region ? { region } : {}), ...(endpoint ? { endpoint } : {}) });
    return { db: createDb(table, client), clock: systemClock, target: `table ${table}`, environment: io.env };
  }
  const runtimeFile = resolve(io.localDirectory, "runtime.json");
  if (!existsSync(runtimeFile)) {
    throw new AppError("invalid_argument", {
      detail:
        "No table given and no local runtime found: start it with `npm start`, or pass --table <name> (and AWS credentials) for a deployed stage.",
    });
  }
  const local = JSON.parse(readFileSync(runtimeFile, "utf8")) as {
    tableName: string;
    dynamoDbEndpoint: string;
    environment?: Record<string, string>;
  };
  const client = new DynamoDBClient({
    endpoint: local.dynamoDbEndpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  return {
    db: createDb(local.tableName, client),
    clock: systemClock,
    target: `local table ${local.tableName}`,
    environment: { ...local.environment, ...io.env },
  };
}

function overview(): string {
  const lines = commands.map(
    (command) => `  ${`${command.group} ${command.name}`.padEnd(24)} ${command.summary}`,
  );
  return [
    "Usage: npm run admin -- <group> <command> [options]",
    "",
    "Commands:",
    ...lines,
    "",
    "Every command takes:",
    '  --json            print JSON (errors as {"error":{code,message,details}})',
    "  --table <name>    a deployed stage's table (needs AWS credentials; also TABLE_NAME); default: the local runtime",
    "  --region <name>   AWS region of that table (default: AWS_REGION)",
    "  --help            help for one command",
  ].join("\n");
}

function commandHelp(command: Command): string {
  const positionals = (command.positionals ?? []).map((name) => ` <${name}>`).join("");
  const options = Object.keys(command.options).map(
    (option) => `  --${option.padEnd(20)} ${command.help[option] ?? ""}`,
  );
  return [
    `Usage: npm run admin -- ${command.group} ${command.name}${positionals} [options]`,
    "",
    command.summary,
    "",
    ...options,
  ].join("\n");
}

/** Plain text for people: `key: value` lines, a blank line between list items. */
function readable(value: unknown, indent = ""): string {
  if (Array.isArray(value)) {
    return value.length === 0 ? `${indent}(none)` : value.map((item) => readable(item, indent)).join("\n\n");
  }
  if (value !== null && typeof value === "object") {
    return Object.entries(value as Record<string, unknown>)
      .map(([key, item]) =>
        item !== null && typeof item === "object"
          ? `${indent}${key}:\n${readable(item, `${indent}  `)}`
          : `${indent}${key}: ${String(item)}`,
      )
      .join("\n");
  }
  return `${indent}${String(value)}`;
}
