import type { ComponentChildren } from "preact";
import { navigate, route } from "../lib/router.ts";

/** A link the router follows without reloading; marked as the current page when it is. */
export function Link({
  href,
  children,
  prefix = false,
  class: className,
  role,
}: {
  href: string;
  children: ComponentChildren;
  /** Also current for the pages under it. */
  prefix?: boolean;
  class?: string;
  /** `button` for a link that looks like one (a primary action). */
  role?: "button";
}) {
  const { pathname } = route.value;
  const base = href.split("?")[0] ?? href;
  const current = pathname === base || (prefix && pathname.startsWith(`${base}/`));
  return (
    <a
      href={href}
      class={className}
      role={role}
      aria-current={current ? "page" : undefined}
      onClick={(event) => {
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
          return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

export function Logo() {
  return (
    <svg viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="7" fill="#1d4ed8" />
      <path
        d="M8 10h16a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2h-9l-5 4v-4H8a2 2 0 0 1-2-2v-8a2 2 0 0 1 2-2z"
        fill="#fff"
      />
    </svg>
  );
}
