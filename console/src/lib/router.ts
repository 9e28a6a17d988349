/**
 * A small history router: the current location as a signal, `navigate`, and path patterns with
 * parameters (`/chatbots/:id`). Where the console is hosted, every path without a file extension
 * answers with index.html, so a reload or a shared link opens the same page.
 */
import { signal } from "@preact/signals";

const current = () => ({ pathname: location.pathname, search: location.search });
export const route = signal(current());

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  route.value = current();
}

addEventListener("popstate", () => {
  route.value = current();
});

/** The pattern's parameters when `pathname` matches it, else null. */
export function match(pattern: string, pathname: string): Record<string, string> | null {
  const want = pattern.split("/").filter(Boolean);
  const have = pathname.split("/").filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (const [index, part] of want.entries()) {
    const value = have[index] ?? "";
    if (part.startsWith(":")) params[part.slice(1)] = decodeURIComponent(value);
    else if (part !== value) return null;
  }
  return params;
}

export const queryParam = (name: string): string | null => new URLSearchParams(route.value.search).get(name);
