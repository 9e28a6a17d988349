/**
 * Deadline-aware retry for model calls. The SDK's and ky's own retries are switched off so that this
 * is the only retry in the path: it knows the turn's deadline, which theirs do not, and never sleeps
 * into time the visitor no longer has. Which failures are worth retrying is the caller's call
 * (`classify`): each engine knows its provider's throttling and transient errors.
 */
import { abortableSleep } from "#functions/agent/deadline";

/** How the caller judges one failed attempt. */
export interface FailureVerdict {
  /** Whether another attempt may succeed (throttling, transient server failure). */
  retryable: boolean;
  /** The provider's requested wait (`Retry-After`), in milliseconds, when it sent one. */
  retryAfterMs?: number;
}

export interface RetryPolicy {
  /** Attempts in total, the first included. */
  maxAttempts: number;
  /** Backoff before retry n is drawn from [d/2, d] with d = min(maxDelayMs, baseDelayMs · 2^(n-1)). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** An attempt that cannot get at least this much time before the deadline is not started. */
  minAttemptMs: number;
}

/**
 * Three attempts, 150–300 ms then 300–600 ms apart: enough to ride out a throttling burst, small
 * enough to leave most of a turn's deadline to the model itself.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 3,
  baseDelayMs: 300,
  maxDelayMs: 3_000,
  minAttemptMs: 1_000,
};

/** Time, sleep and randomness, injectable so tests run without real waiting. */
export interface RetryClock {
  now(): number;
  /** Resolves after `ms`, rejects with the signal's reason as soon as it aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** Uniform in [0, 1). */
  random(): number;
}

export const systemClock: RetryClock = {
  now: () => Date.now(),
  sleep: abortableSleep,
  random: () => Math.random(),
};

export interface RetryOptions {
  /** Epoch milliseconds after which no attempt starts and no sleep ends. */
  deadline: number;
  signal: AbortSignal;
  classify(error: unknown): FailureVerdict;
  policy?: Partial<RetryPolicy>;
  clock?: RetryClock;
}

/**
 * Runs `attempt` until it succeeds, fails for good, or time runs out. Rejects with the last
 * attempt's error when giving up, or with the signal's reason when the signal aborts.
 */
export async function withRetry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const policy = { ...DEFAULT_RETRY_POLICY, ...options.policy };
  const clock = options.clock ?? systemClock;
  for (let attemptNumber = 1; ; attemptNumber++) {
    options.signal.throwIfAborted();
    try {
      return await attempt(attemptNumber);
    } catch (error) {
      if (options.signal.aborted) throw error;
      const verdict = options.classify(error);
      if (!verdict.retryable || attemptNumber >= policy.maxAttempts) throw error;
      const delayMs = verdict.retryAfterMs ?? backoffDelay(attemptNumber, policy, clock.random());
      const remainingMs = options.deadline - clock.now();
      if (delayMs + policy.minAttemptMs > remainingMs) throw error;
      await clock.sleep(delayMs, options.signal);
    }
  }
}

/** Equal-jitter exponential backoff before retry `retryNumber` (1-based). */
export function backoffDelay(
  retryNumber: number,
  policy: Pick<RetryPolicy, "baseDelayMs" | "maxDelayMs">,
  random: number,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retryNumber - 1));
  return Math.round(ceiling / 2 + (random * ceiling) / 2);
}

/**
 * Reads `Retry-After` (delta-seconds or an HTTP date) and the `retry-after-ms` extension some
 * OpenAI-compatible providers send. Returns milliseconds, or undefined when absent or unreadable.
 */
export function parseRetryAfter(
  headers: { retryAfter?: string | null; retryAfterMs?: string | null },
  now: number,
): number | undefined {
  const millis = headers.retryAfterMs?.trim();
  if (millis && /^\d+(\.\d+)?$/.test(millis)) return Math.ceil(Number(millis));
  const value = headers.retryAfter?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
