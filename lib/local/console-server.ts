/**
 * The console on this machine, served as CloudFront serves it on AWS (lib/console-stack.ts): the
 * built files (index.html for every page path), /config.json made from the running runtime, the
 * same security headers (the CSP included, so the browser tests run under it), and the API paths
 * passed through to the HTTP API emulator on the same origin: no CORS, as on AWS. The website
 * widget's files (widget/dist) are served beside them as CloudFront serves them: cached as
 * lib/console-hosting.ts says, compressed (brotli or gzip) as the browser accepts, readable from
 * any origin.
 */
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, resolve } from "node:path";
import { brotliCompressSync, gzipSync } from "node:zlib";
import {
  apiPathPatterns,
  type ConsoleRuntimeConfig,
  configPath,
  contentSecurityPolicy,
  immutablePrefix,
  isAppPath,
  securityHeaders,
  streamPath,
  widgetHosting,
} from "../console-hosting.ts";

export const consoleDirectory = resolve(import.meta.dirname, "../../console");
export const consoleDist = resolve(consoleDirectory, "dist");
export const widgetDirectory = resolve(import.meta.dirname, "../../widget");
export const widgetDist = resolve(widgetDirectory, "dist");

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
  /**
   * Sent as `X-Origin-Verify`, with the browser's address as `X-Viewer-Address`, on every request
   * passed to the API, as the stack's CloudFront distribution does.
   */
  originVerifySecret?: string;
  distDirectory?: string;
  /** The website widget's build (default widget/dist). */
  widgetDirectory?: string;
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

/** Headers the host sets itself: a browser's own values never pass. */
const setByHost = new Set(["x-viewer-address", "x-origin-verify"]);

function proxy(target: string, req: IncomingMessage, res: ServerResponse, originVerifySecret?: string): void {
  const upstream = new URL(req.url ?? "/", target);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !hopByHop.has(name) && name !== "host" && !setByHost.has(name))
      headers[name] = value;
  }
  if (originVerifySecret) {
    headers["x-origin-verify"] = originVerifySecret;
    headers["x-viewer-address"] = req.socket.remoteAddress ?? "";
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

  const widgetFiles = options.widgetDirectory ?? widgetDist;
  /** Compressed once per file and encoding, as CloudFront keeps them. */
  const compressed = new Map<string, Buffer>();
  const serveWidget = (req: IncomingMessage, res: ServerResponse, pathname: string): boolean => {
    const isLoader = pathname === widgetHosting.loaderPath;
    if (!isLoader && !pathname.startsWith(widgetHosting.assetsPrefix)) return false;
    const full = join(widgetFiles, normalize(pathname).replace(/^(\.\.[/\\])+/, ""));
    if (!full.startsWith(widgetFiles) || !existsSync(full) || !statSync(full).isFile()) return false;
    const accepted = String(req.headers["accept-encoding"] ?? "");
    const encoding = /\bbr\b/.test(accepted) ? "br" : /\bgzip\b/.test(accepted) ? "gzip" : undefined;
    let body: Buffer = readFileSync(full);
    if (encoding) {
      const key = `${encoding}:${full}:${statSync(full).mtimeMs}`;
      body =
        compressed.get(key) ?? (encoding === "br" ? brotliCompressSync(body) : gzipSync(body, { level: 9 }));
      compressed.set(key, body);
    }
    res.writeHead(200, {
      ...common,
      "content-type": types[extname(full)] ?? "application/octet-stream",
      "cache-control": isLoader ? widgetHosting.loaderCacheControl : widgetHosting.assetsCacheControl,
      "access-control-allow-origin": "*",
      "cross-origin-resource-policy": "cross-origin",
      vary: "Accept-Encoding",
      ...(encoding ? { "content-encoding": encoding } : {}),
    });
    res.end(req.method === "HEAD" ? undefined : body);
    return true;
  };

  const server: Server = createServer((req, res) => {
    const pathname = new URL(req.url ?? "/", "http://console").pathname;
    if (options.streamUrl && pathname === streamPath)
      return proxy(options.streamUrl, req, res, options.originVerifySecret);
    if (isApiPath(pathname)) return proxy(options.apiUrl, req, res, options.originVerifySecret);
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { ...common, allow: "GET, HEAD" }).end();
      return;
    }
    if (serveWidget(req, res, pathname)) return;
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

/** True when the built widget is missing or older than its sources. */
export function widgetNeedsBuild(): boolean {
  const built = newest(join(widgetDist, "widget.js"));
  if (built === 0) return true;
  return [join(widgetDirectory, "src"), join(widgetDirectory, "scripts")].some(
    (source) => newest(source) > built,
  );
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
