/**
 * Polling while the page is in view: `poll` runs every `intervalMs` after the previous run ended
 * (never two at once), not at all while the tab is hidden (and once at once when it shows again),
 * and stops when the component goes.
 */
import { useEffect, useRef } from "preact/hooks";

export function usePolling(poll: () => Promise<void>, intervalMs: number, deps: unknown[]): void {
  const latest = useRef(poll);
  latest.current = poll;
  useEffect(() => {
    let stopped = false;
    let running = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const schedule = () => {
      clearTimeout(timer);
      if (!stopped && !document.hidden) timer = setTimeout(tick, intervalMs);
    };
    const tick = async () => {
      if (stopped || running || document.hidden) return;
      running = true;
      try {
        await latest.current();
      } finally {
        running = false;
        schedule();
      }
    };
    const onVisibility = () => {
      if (document.hidden) clearTimeout(timer);
      else void tick();
    };
    document.addEventListener("visibilitychange", onVisibility);
    schedule();
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisibility);
    };
  }, deps);
}
