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
import { peopleCommands } from "./people.ts";
import { toolCommands } from "./tools.ts";

export const commands: Command[] = [
  ...organizationCommands,
  ...chatbotCommands,
  ...toolCommands,
  ...peopleCommands,
];

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

const isHelp = (arg: string | undefined) => arg === "--help" || arg === "-h" || arg === "help";

/**
 * Returns the process exit code: 0 done (and every `--help`), 1 the command failed, 2 usage error:
 * an unknown group, command or option, or a missing or invalid value (`invalid_argument`).
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const json = argv.includes("--json");
  /** A usage error: the message and the help that shows the right usage (Format A with --json). */
  const usage = (message: string, rightUsage: string): number => {
    if (json)
      io.out(JSON.stringify(toFormatA(new AppError("invalid_argument", { detail: message })).body, null, 2));
    else io.err(`${message}\n\n${rightUsage}`);
    return 2;
  };
  const [group, name, ...rest] = argv;
  if (group === undefined) {
    io.err(overview());
    return 2;
  }
  if (isHelp(group)) {
    // `help`, `help <group>`, `help <group> <command>` (and the same with --help)
    const [helpGroup, helpName] = argv.slice(1).filter((arg) => !isHelp(arg));
    if (helpGroup === undefined) return help(io, overview());
    if (!groupNames().includes(helpGroup)) return usage(`Unknown command group: ${helpGroup}`, overview());
    if (helpName === undefined) return help(io, groupHelp(helpGroup));
    const command = findCommand(helpGroup, helpName);
    if (!command) return usage(`Unknown command: ${helpGroup} ${helpName}`, groupHelp(helpGroup));
    return help(io, commandHelp(command));
  }
  if (!groupNames().includes(group)) return usage(`Unknown command group: ${group}`, overview());
  if (isHelp(name)) return help(io, groupHelp(group));
  if (name === undefined || name.startsWith("-")) {
    return usage(`Missing command: npm run admin -- ${group} <command>`, groupHelp(group));
  }
  const command = findCommand(group, name);
  if (!command) return usage(`Unknown command: ${group} ${name}`, groupHelp(group));
  if (rest.some((arg) => arg === "--help" || arg === "-h")) return help(io, commandHelp(command));

  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...globalOptions, ...command.options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    return usage(error instanceof Error ? error.message : String(error), commandHelp(command));
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const expected = command.positionals ?? [];
  if (parsed.positionals.length > expected.length) {
    const extra = parsed.positionals.slice(expected.length).join(" ");
    return usage(`Unexpected argument: ${extra}`, commandHelp(command));
  }
  try {
    const ctx = adminContext(values, io);
    const result = await command.run(ctx, { values, positionals: parsed.positionals });
    io.out(json ? JSON.stringify(result, null, 2) : readable(result));
    return 0;
  } catch (error) {
    const invalidArgument = error instanceof AppError && error.code === "invalid_argument";
    if (json) {
      io.out(JSON.stringify(toFormatA(error).body, null, 2));
    } else if (invalidArgument) {
      io.err(`Error (${error.code}): ${error.message}\n\nSee: npm run admin -- ${group} ${name} --help`);
    } else if (error instanceof AppError) {
      io.err(`Error (${error.code}): ${error.message}`);
    } else {
      io.err(`Error: ${error instanceof Error ? error.message : String(error)}`);
    }
    return invalidArgument ? 2 : 1;
  }
}

function help(io: CliIo, text: string): number {
  io.out(text);
  return 0;
}

function groupNames(): string[] {
  return [...new Set(commands.map((command) => command.group))];
}

function findCommand(group: string, name: string): Command | undefined {
  return commands.find((candidate) => candidate.group === group && candidate.name === name);
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
    cognito?: { endpoint: string; userPoolId: string };
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
    environment: {
      ...local.environment,
      ...(local.cognito
        ? {
            COGNITO_USER_POOL_ID: local.cognito.userPoolId,
            AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: local.cognito.endpoint,
          }
        : {}),
      ...io.env,
    },
  };
}

function commandList(group?: string): string[] {
  return commands
    .filter((command) => group === undefined || command.group === group)
    .map((command) => `  ${`${command.group} ${command.name}`.padEnd(24)} ${command.summary}`);
}

const globalHelp = [
  "Every command takes:",
  '  --json            print JSON (errors as {"error":{code,message,details}})',
  "  --table <name>    a deployed stage's table (needs AWS credentials; also TABLE_NAME); default: the local runtime",
  "  --region <name>   AWS region of that table (default: AWS_REGION)",
  "  --help, -h        help for a group or a command",
  "",
  "Exit codes: 0 done, 1 the command failed, 2 usage error (unknown command or option, missing or invalid value).",
];

function overview(): string {
  return [
    "Usage: npm run admin -- <group> <command> [options]",
    "       npm run admin -- <group> --help",
    "       npm run admin -- <group> <command> --help",
    "",
    "Commands:",
    ...commandList(),
    "",
    ...globalHelp,
  ].join("\n");
}

function groupHelp(group: string): string {
  return [
    `Usage: npm run admin -- ${group} <command> [options]`,
    "",
    "Commands:",
    ...commandList(group),
    "",
    `Help for one command: npm run admin -- ${group} <command> --help`,
  ].join("\n");
}

function commandHelp(command: Command): string {
  const positionals = (command.positionals ?? []).map((name) => ` <${name}>`).join("");
  const options = Object.entries(command.options).map(([option, config]) => {
    const flag = config.type === "string" ? `--${option} <value>` : `--${option}`;
    return `  ${flag.padEnd(30)} ${command.help[option] ?? ""}`;
  });
  return [
    `Usage: npm run admin -- ${command.group} ${command.name}${positionals} [options]`,
    "",
    command.summary,
    ...(options.length > 0 ? ["", "Options:", ...options] : []),
    "",
    ...globalHelp,
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
