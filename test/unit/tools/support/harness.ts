/**
 * Shared set-up for the tool tests: the five platform fakes, an http-get client routed to them,
 * configured tools from the demo settings, and a deadline helper.
 */
import { createHttpGet, type HttpGet, type HttpGetOptions } from "#functions/tools/http-get";
import { type ConfiguredTool, configureTool, type StoredTool } from "#functions/tools/registry";
import type { LookupResult } from "#functions/tools/result";
import { type PlatformFakes, type PlatformName, platformDemos } from "#test/fakes/platforms/index";

export function httpFor(fakes: PlatformFakes, options: HttpGetOptions = {}): HttpGet {
  return createHttpGet({
    allowPrivate: fakes.allowPrivate,
    originOverrides: fakes.originOverrides,
    ...options,
  });
}

export function configured(stored: StoredTool): ConfiguredTool {
  const result = configureTool(stored);
  if (!result.ok) throw new Error(`Test tool does not configure: ${result.issues.join("; ")}`);
  return result.tool;
}

export function demoTool(platform: PlatformName, config: Record<string, unknown> = {}): ConfiguredTool {
  return configured({
    id: `tool-${platform}`,
    name: `lookup_${platform}`,
    kind: platform,
    config: { ...platformDemos[platform].config, ...config },
  });
}

export const inSeconds = (seconds: number): number => Date.now() + seconds * 1000;

export interface LookupArgs {
  tool: ConfiguredTool;
  variables: Record<string, string>;
  http: HttpGet;
  secrets?: unknown;
  deadline?: number;
  signal?: AbortSignal;
}

export function lookup(args: LookupArgs): Promise<LookupResult> {
  const platform = args.tool.kind as PlatformName;
  return args.tool.lookup({
    secrets: args.secrets ?? platformDemos[platform].secrets,
    variables: args.variables,
    signal: args.signal ?? new AbortController().signal,
    deadline: args.deadline ?? inSeconds(10),
    http: args.http,
  });
}

/** Every credential of every demo platform, for "never appears in output" assertions. */
export const allDemoSecrets: string[] = Object.values(platformDemos).flatMap((demo) =>
  Object.values(demo.secrets as Record<string, string>),
);
