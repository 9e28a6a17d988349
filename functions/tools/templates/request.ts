/** Request helpers shared by the platform templates: base URLs, endpoints, Basic auth. */
import * as z from "zod/mini";

/** An https base URL without credentials, query or fragment (credentials travel in headers only). */
export const httpsBaseUrl = z.url({ protocol: /^https$/ }).check(
  z.refine((value) => {
    const url = new URL(value);
    return url.username === "" && url.password === "" && url.search === "" && url.hash === "";
  }, "Must be a plain https URL without credentials, query or fragment"),
);

/** A DNS label (shop subdomain), lower case. */
export const subdomain = z.string().check(z.regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/));

export const secretString = z.string().check(z.minLength(1), z.maxLength(512));

/** `base` (path kept: WordPress may live in a sub-folder) + `path` + query parameters, encoded. */
export function endpoint(base: string, path: string, query: Readonly<Record<string, string>> = {}): URL {
  const url = new URL(`${base.replace(/\/+$/, "")}${path}`);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return url;
}

export function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}`;
}
