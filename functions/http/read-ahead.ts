/**
 * A read a route begins alongside its Idempotency-Key's claim (http/idempotency.ts
 * `alongsideClaim`), so that claim and read cost one round trip together; the route's handler then
 * takes the read begun for its request instead of reading again. Requests are told apart by their
 * validated body (one object per request, handed to the handler as is).
 */
import type { Caller, RouteState } from "#functions/http/api-handler";

export interface ReadAhead<B extends object, T> {
  /** For the idempotency middleware: begins the read for this request. */
  begin(state: RouteState): void;
  /** The read begun for this request, or a new one (no Idempotency-Key: nothing was begun). */
  take(caller: Caller, body: B): Promise<T>;
}

export function readAhead<B extends object, T>(
  read: (caller: Caller, body: B) => Promise<T>,
): ReadAhead<B, T> {
  const begun = new WeakMap<B, Promise<T>>();
  return {
    begin(state) {
      const body = state.input.body as B;
      const reading = read(state.caller as Caller, body);
      // A request the claim answers itself never takes its read: its failure is nobody's to report.
      reading.catch(() => undefined);
      begun.set(body, reading);
    },
    take(caller, body) {
      const reading = begun.get(body);
      begun.delete(body);
      return reading ?? read(caller, body);
    },
  };
}
