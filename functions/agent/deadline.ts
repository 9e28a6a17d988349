/**
 * Small helpers that keep every wait of a turn inside its deadline, so that a slow model, tool or
 * retry pause can never hold the Lambda past the time the visitor is promised an answer.
 */

/** A signal that aborts when `signal` does or when `deadline` (epoch ms) passes, whichever is first. */
export function signalWithDeadline(signal: AbortSignal, deadline: number): AbortSignal {
  return AbortSignal.any([signal, AbortSignal.timeout(Math.max(0, deadline - Date.now()))]);
}

/** Settles like `promise`, or rejects with the signal's reason as soon as it aborts. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** Resolves after `ms`; rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
