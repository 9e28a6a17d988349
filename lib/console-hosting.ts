/**
 * How the console is served, defined once: the nested stack (lib/console-stack.ts) gives
 * CloudFront these behaviours and headers, and the local console server (lib/local/console-server.ts)
 * does the same on this machine. Pure data, no CDK imports.
 *
 * One origin for everything: the console's files, and the API behind the same host (the paths
 * below), so the browser never makes a cross-origin request to the API and no CORS is configured.
 */
import { streamEndpoint } from "./stream-endpoint.ts";

/** Paths answered by the HTTP API (everything else is the console's files). */
export const apiPathPatterns = ["/api/*", "/manage/*", "/openapi.json", "/ping"] as const;

/** The streaming endpoint's path: a function URL origin of its own, before /api/*. */
export const streamPath = streamEndpoint.path;

/** Where the console's runtime configuration lives; written at deploy time, never cached. */
export const configPath = "/config.json";

/** What /config.json holds. */
export interface ConsoleRuntimeConfig {
  apiBaseUrl: string;
  streamUrl: string | null;
  cognito: { endpoint: string; region: string; userPoolId: string; clientId: string };
}

/**
 * The Content-Security-Policy: scripts, styles and fonts only from the console's own origin (no
 * inline script), connections to the same origin (API) and Cognito only, images also from https
 * (pictures visitors sent by URL), no framing, no plugins, forms and base URL pinned.
 */
export function contentSecurityPolicy(cognitoOrigin: string, options: { upgradeInsecure: boolean }): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: https:",
    "font-src 'self'",
    `connect-src 'self' ${cognitoOrigin}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(options.upgradeInsecure ? ["upgrade-insecure-requests"] : []),
  ].join("; ");
}

/** The other security headers, as CloudFront's response headers policy and the local server send them. */
export const securityHeaders = {
  strictTransportSecurity: { maxAgeSeconds: 63_072_000, includeSubdomains: true, preload: false },
  contentTypeOptions: "nosniff",
  frameOptions: "DENY",
  referrerPolicy: "strict-origin-when-cross-origin",
  permissionsPolicy: "camera=(), microphone=(), geolocation=(), payment=()",
} as const;

/** A path the single-page app answers (no file extension): served index.html. */
export const isAppPath = (pathname: string): boolean => !/\.[a-z0-9]+$/i.test(pathname);

/** Hashed build files never change: cached for a year; index.html and config.json always revalidated. */
export const immutablePrefix = "/assets/";

/**
 * The website widget (widget/, its own build) on the console's domain: `/widget.js`, the one URL
 * businesses put in their pages, kept for an hour (and served stale for a day while it is
 * refreshed), and the panel it loads, under `/widget/` with its content's hash in its name, kept
 * for a year. Both compressed (gzip or brotli, as the browser accepts), and readable from any origin
 * (the panel is a module script, which browsers fetch with CORS).
 */
export const widgetHosting = {
  loaderPath: "/widget.js",
  assetsPrefix: "/widget/",
  loaderCacheControl: "public, max-age=3600, stale-while-revalidate=86400",
  assetsCacheControl: "public, max-age=31536000, immutable",
} as const;
