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
  if (signal.aborted) {
    // The losing promise's own failure must not surface as an unhandled rejection.
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
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

/**
 * The items of `source`, each of which must come within `idleMs` of the previous one (or of the
 * start); otherwise `stalled()` is called, and the error it returns is thrown (it should also end
 * the request behind `source`, e.g. by aborting its signal).
 */
export async function* withIdleLimit<T>(
  source: AsyncIterable<T>,
  idleMs: number,
  stalled: () => Error,
): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let finished = false;
  try {
    while (true) {
      const next = iterator.next();
      // Once the idle limit gave up on it, this read's own failure (the aborted request) is expected.
      next.catch(() => undefined);
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(stalled()), idleMs);
      });
      let result: IteratorResult<T>;
      try {
        result = await Promise.race([next, idle]);
      } finally {
        clearTimeout(timer);
      }
      if (result.done) {
        finished = true;
        return;
      }
      yield result.value;
    }
  } finally {
    // Ends the source's request if the reader stopped early; not awaited, it may be stuck.
    if (!finished) iterator.return?.()?.catch(() => undefined);
  }
}
