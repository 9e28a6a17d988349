/**
 * The console on this machine, served as CloudFront serves it on AWS (lib/console-stack.ts): the
 * built files (index.html for every page path), /config.json made from the running runtime, the
 * same security headers (the CSP included, so the browser tests run under it), and the API paths
 * passed through to the HTTP API emulator on the same origin: no CORS, as on AWS.
 */
import { createReadStream, existsSync, readdirSync, statSync } from "node:fs";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, resolve } from "node:path";
import {
  apiPathPatterns,
  type ConsoleRuntimeConfig,
  configPath,
  contentSecurityPolicy,
  immutablePrefix,
  isAppPath,
  securityHeaders,
  streamPath,
} from "../console-hosting.ts";

export const consoleDirectory = resolve(import.meta.dirname, "../../console");
export const consoleDist = resolve(consoleDirectory, "dist");

const types: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
};

export interface ConsoleServerOptions {
  port: number;
  host?: string;
  /** The HTTP API emulator the API paths go to. */
  apiUrl: string;
  /** The local function URL of the streaming endpoint, when there is one. */
  streamUrl?: string;
  /** /config.json, or made from the server's own URL once it listens. */
  config: ConsoleRuntimeConfig | ((consoleUrl: string) => ConsoleRuntimeConfig);
  distDirectory?: string;
}

export interface RunningConsoleServer {
  url: string;
  close(): Promise<void>;
}

const isApiPath = (pathname: string) =>
  apiPathPatterns.some((pattern) =>
    pattern.endsWith("/*") ? pathname.startsWith(pattern.slice(0, -1)) : pathname === pattern,
  );

/** Hop-by-hop headers a proxy does not pass on. */
const hopByHop = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "proxy-connection",
  "te",
  "trailer",
]);

function proxy(target: string, req: IncomingMessage, res: ServerResponse): void {
  const upstream = new URL(req.url ?? "/", target);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !hopByHop.has(name) && name !== "host") headers[name] = value;
  }
  const forward = httpRequest(upstream, { method: req.method, headers }, (answer) => {
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !hopByHop.has(name)) out[name] = value;
    }
    res.writeHead(answer.statusCode ?? 502, out);
    answer.pipe(res);
  });
  forward.on("error", () => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
    res.end(JSON.stringify({ message: "Bad Gateway" }));
  });
  req.pipe(forward);
}

export async function startConsoleServer(options: ConsoleServerOptions): Promise<RunningConsoleServer> {
  const dist = options.distDirectory ?? consoleDist;
  if (!existsSync(join(dist, "index.html"))) throw new Error(`the console is not built (${dist})`);
  let configBody = "";
  const headersFor = (config: ConsoleRuntimeConfig): Record<string, string> => ({
    "content-security-policy": contentSecurityPolicy(new URL(config.cognito.endpoint).origin, {
      upgradeInsecure: false,
    }),
    "x-content-type-options": securityHeaders.contentTypeOptions,
    "x-frame-options": securityHeaders.frameOptions,
    "referrer-policy": securityHeaders.referrerPolicy,
    "permissions-policy": securityHeaders.permissionsPolicy,
  });
  let common: Record<string, string> = {};

  const server: Server = createServer((req, res) => {
    const pathname = new URL(req.url ?? "/", "http://console").pathname;
    if (options.streamUrl && pathname === streamPath) return proxy(options.streamUrl, req, res);
    if (isApiPath(pathname)) return proxy(options.apiUrl, req, res);
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { ...common, allow: "GET, HEAD" }).end();
      return;
    }
    if (pathname === configPath) {
      res.writeHead(200, { ...common, "content-type": "application/json", "cache-control": "no-cache" });
      res.end(req.method === "HEAD" ? undefined : configBody);
      return;
    }
    const file = isAppPath(pathname)
      ? "index.html"
      : normalize(pathname)
          .replace(/^(\.\.[/\\])+/, "")
          .slice(1);
    const full = join(dist, file);
    if (!full.startsWith(dist) || !existsSync(full) || !statSync(full).isFile()) {
      res.writeHead(404, { ...common, "content-type": "text/plain; charset=utf-8" }).end("Not found");
      return;
    }
    res.writeHead(200, {
      ...common,
      "content-type": types[extname(full)] ?? "application/octet-stream",
      "cache-control": pathname.startsWith(immutablePrefix)
        ? "public, max-age=31536000, immutable"
        : "no-cache",
    });
    if (req.method === "HEAD") res.end();
    else createReadStream(full).pipe(res);
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host ?? "127.0.0.1"}:${port}`;
  const config = typeof options.config === "function" ? options.config(url) : options.config;
  configBody = JSON.stringify(config);
  common = headersFor(config);
  return {
    url,
    close: () =>
      new Promise((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}

/** The newest modification time under `path` (files only). */
function newest(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/** True when the built console is missing or older than its sources. */
export function consoleNeedsBuild(): boolean {
  const built = newest(join(consoleDist, "index.html"));
  if (built === 0) return true;
  const sources = [
    join(consoleDirectory, "src"),
    join(consoleDirectory, "index.html"),
    join(consoleDirectory, "public"),
    join(consoleDirectory, "vite.config.ts"),
    resolve(consoleDirectory, "../lib/sign-in.ts"),
  ];
  return sources.some((source) => newest(source) > built);
}
