/**
 * When webhook attempts happen, in one place. The defaults are the production schedule; every
 * value can be set through the environment so tests can compress a day into seconds:
 *
 *   WEBHOOK_RETRY_SCHEDULE           seconds between attempts, comma-separated: attempt 2 comes the
 *                                    first value after attempt 1, and so on; after the last, the
 *                                    delivery has failed (default 5,300,1800,7200,18000,36000,36000)
 *   WEBHOOK_TIMEOUT_MS               one attempt's whole time, connection to answer (default 15000)
 *   WEBHOOK_DISABLE_AFTER_SECONDS    an endpoint failing for this long is disabled (default 5 days)
 *   WEBHOOK_SECRET_OVERLAP_SECONDS   a rotated secret keeps signing this long (default 24 h)
 *   WEBHOOK_MAX_QUEUE_DELAY_SECONDS  the longest single queue delay (SQS allows 900 s; longer waits
 *                                    are chained hops)
 *   WEBHOOK_SLOW_ATTEMPT_MS          an attempt this long (or timed out) marks its endpoint slow (5000)
 *   WEBHOOK_SLOW_PENALTY_SECONDS     how long a slow endpoint stays limited (default 600)
 *   WEBHOOK_MAX_IN_FLIGHT            attempts in flight per slow endpoint (default 4)
 *   WEBHOOK_DEFER_SECONDS            how long an attempt over that cap waits before trying again
 */

export interface WebhookTimings {
  /** Seconds to wait before attempt n + 2 after attempt n + 1 failed (index n). */
  retryScheduleSeconds: readonly number[];
  /** Each wait is multiplied by a factor drawn from [1 - jitter, 1 + jitter]. */
  jitter: number;
  requestTimeoutMs: number;
  disableAfterSeconds: number;
  secretOverlapSeconds: number;
  maxQueueDelaySeconds: number;
  slowAttemptMs: number;
  slowPenaltySeconds: number;
  maxInFlightPerEndpoint: number;
  deferSeconds: number;
}

export const defaultTimings: WebhookTimings = {
  // 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 27 h 35 min in all, so even with every wait shortened
  // by the full jitter (-10 %) the last attempt comes more than 24 h after the first.
  retryScheduleSeconds: [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000],
  jitter: 0.1,
  requestTimeoutMs: 15_000,
  disableAfterSeconds: 5 * 24 * 3_600,
  secretOverlapSeconds: 24 * 3_600,
  maxQueueDelaySeconds: 900,
  slowAttemptMs: 5_000,
  slowPenaltySeconds: 600,
  maxInFlightPerEndpoint: 4,
  deferSeconds: 5,
};

function positive(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`${name} must be a positive number`);
  return parsed;
}

export function timingsFromEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): WebhookTimings {
  const schedule = env.WEBHOOK_RETRY_SCHEDULE?.trim();
  const retryScheduleSeconds = schedule
    ? schedule.split(",").map((part) => positive("WEBHOOK_RETRY_SCHEDULE", part) ?? 0)
    : defaultTimings.retryScheduleSeconds;
  const maxQueueDelaySeconds = Math.min(
    900,
    Math.floor(
      positive("WEBHOOK_MAX_QUEUE_DELAY_SECONDS", env.WEBHOOK_MAX_QUEUE_DELAY_SECONDS) ??
        defaultTimings.maxQueueDelaySeconds,
    ),
  );
  return {
    retryScheduleSeconds,
    jitter: defaultTimings.jitter,
    requestTimeoutMs:
      positive("WEBHOOK_TIMEOUT_MS", env.WEBHOOK_TIMEOUT_MS) ?? defaultTimings.requestTimeoutMs,
    disableAfterSeconds:
      positive("WEBHOOK_DISABLE_AFTER_SECONDS", env.WEBHOOK_DISABLE_AFTER_SECONDS) ??
      defaultTimings.disableAfterSeconds,
    secretOverlapSeconds:
      positive("WEBHOOK_SECRET_OVERLAP_SECONDS", env.WEBHOOK_SECRET_OVERLAP_SECONDS) ??
      defaultTimings.secretOverlapSeconds,
    maxQueueDelaySeconds: Math.max(1, maxQueueDelaySeconds),
    slowAttemptMs:
      positive("WEBHOOK_SLOW_ATTEMPT_MS", env.WEBHOOK_SLOW_ATTEMPT_MS) ?? defaultTimings.slowAttemptMs,
    slowPenaltySeconds:
      positive("WEBHOOK_SLOW_PENALTY_SECONDS", env.WEBHOOK_SLOW_PENALTY_SECONDS) ??
      defaultTimings.slowPenaltySeconds,
    maxInFlightPerEndpoint: Math.floor(
      positive("WEBHOOK_MAX_IN_FLIGHT", env.WEBHOOK_MAX_IN_FLIGHT) ?? defaultTimings.maxInFlightPerEndpoint,
    ),
    deferSeconds: positive("WEBHOOK_DEFER_SECONDS", env.WEBHOOK_DEFER_SECONDS) ?? defaultTimings.deferSeconds,
  };
}

/**
 * Milliseconds to wait after attempt `attempt` (1-based) failed, or undefined when it was the last.
 * `random` is in [0, 1).
 */
export function retryDelayMs(
  timings: WebhookTimings,
  attempt: number,
  random: () => number = Math.random,
): number | undefined {
  const base = timings.retryScheduleSeconds[attempt - 1];
  if (base === undefined) return undefined;
  const factor = 1 + timings.jitter * (2 * random() - 1);
  return Math.round(base * 1000 * factor);
}

/** The queue delay (whole seconds, at most the queue's maximum) to reach `notBefore` from `now`. */
export function queueDelaySeconds(timings: WebhookTimings, notBefore: number, now: number): number {
  const seconds = Math.ceil(Math.max(0, notBefore - now) / 1000);
  return Math.min(seconds, timings.maxQueueDelaySeconds);
}
