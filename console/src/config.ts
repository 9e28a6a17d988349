/**
 * Where the console finds its API and user pool: `/config.json`, written where the console is
 * hosted (at deploy time on AWS, by the local server with `npm start`), never built in.
 */
export interface ConsoleConfig {
  /** The public API's base URL, as the organization's own apps call it (shown on Settings → API). */
  apiBaseUrl: string;
  /**
   * The streaming endpoint's base URL as the console reaches it (on the console's own domain, so
   * the browser stays on one origin), when the stage has one: Try it posts `{streamUrl}api/message/stream`.
   */
  streamUrl?: string | null;
  cognito: { endpoint: string; region: string; userPoolId: string; clientId: string };
}

let loaded: ConsoleConfig | undefined;

export async function loadConfig(): Promise<ConsoleConfig> {
  const response = await fetch("/config.json", { cache: "no-store" });
  if (!response.ok) throw new Error(`The console's configuration could not be loaded (${response.status}).`);
  loaded = (await response.json()) as ConsoleConfig;
  return loaded;
}

export function config(): ConsoleConfig {
  if (!loaded) throw new Error("configuration not loaded yet");
  return loaded;
}

/**
 * The streaming endpoint's base URL, absolute and without a trailing slash, or null on a stage
 * without one. It is on the console's own domain, which an organization's apps may call too.
 */
export function streamBaseUrl(): string | null {
  const { streamUrl } = config();
  return streamUrl ? new URL(streamUrl, location.origin).href.replace(/\/$/, "") : null;
}
