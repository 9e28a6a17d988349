/**
 * The operator CLI's building blocks: a command is a group and a name (`keys create`), its options
 * (node:util parseArgs), and a function that calls one domain function and returns what to print.
 */
import type { ParseArgsOptionsConfig } from "node:util";
import type { DomainContext } from "#functions/domain/context";
import { AppError } from "#functions/errors";

export interface AdminContext extends DomainContext {
  /** Where the table lives, for messages. */
  target: string;
  /** Settings of the target environment (e.g. the tool-credentials key), as environment variables. */
  environment: Record<string, string | undefined>;
}

export interface CommandInput {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export interface Command {
  group: string;
  name: string;
  summary: string;
  /** Positional arguments, in order, e.g. ["keyId"]. */
  positionals?: readonly string[];
  options: ParseArgsOptionsConfig;
  /** Option descriptions for --help. */
  help: Record<string, string>;
  /** Returns the result: printed as JSON with --json, else as readable text. */
  run(ctx: AdminContext, input: CommandInput): Promise<unknown>;
}

export function required(input: CommandInput, name: string): string {
  const value = input.values[name];
  if (typeof value !== "string" || value.trim() === "") {
    throw new AppError("invalid_argument", { detail: `--${name} is required` });
  }
  return value;
}

export function optional(input: CommandInput, name: string): string | undefined {
  const value = input.values[name];
  return typeof value === "string" ? value : undefined;
}

/** Refuses two options that exclude each other when both are given. */
export function notBoth(input: CommandInput, first: string, second: string): void {
  const given = (name: string) => {
    const value: unknown = input.values[name];
    return value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0);
  };
  if (given(first) && given(second)) {
    throw new AppError("invalid_argument", { detail: `Give --${first} or --${second}, not both` });
  }
}

/** A repeatable option's values (`multiple: true`), in the order given. */
export function repeated(input: CommandInput, name: string): string[] {
  const raw: unknown = input.values[name];
  if (raw === undefined) return [];
  return (Array.isArray(raw) ? raw : [raw]).filter((item): item is string => typeof item === "string");
}

export function positional(input: CommandInput, index: number, name: string): string {
  const value = input.positionals[index];
  if (value === undefined || value.trim() === "") {
    throw new AppError("invalid_argument", { detail: `<${name}> is required` });
  }
  return value;
}

export function numberOption(input: CommandInput, name: string): number | undefined {
  const value = optional(input, name);
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed))
    throw new AppError("invalid_argument", { detail: `--${name} must be a number` });
  return parsed;
}
