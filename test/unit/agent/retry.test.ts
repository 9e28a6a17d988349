import { describe, expect, it } from "vitest";
import { backoffDelay, parseRetryAfter, type RetryClock, withRetry } from "#functions/agent/retry";

/** A clock that moves only when slept on, and records every sleep. */
function fakeClock(start = 1_000_000, random = 0.5): RetryClock & { sleeps: number[]; time: number } {
  const clock = {
    time: start,
    sleeps: [] as number[],
    now: () => clock.time,
    sleep: async (ms: number) => {
      clock.sleeps.push(ms);
      clock.time += ms;
    },
    random: () => random,
  };
  return clock;
}

/** An attempt that fails with the given errors, then succeeds with "done". */
function failingThen(...errors: Error[]) {
  let calls = 0;
  const attempt = async () => {
    const error = errors[calls++];
    if (error) throw error;
    return "done";
  };
  return { attempt, calls: () => calls };
}

const transient = new Error("transient");
const permanent = new Error("permanent");
const classify = (error: unknown) => ({ retryable: error === transient });
const signal = new AbortController().signal;

describe("withRetry", () => {
  it("retries a retryable failure with jittered exponential backoff, then returns the result", async () => {
    // Prepare
    const clock = fakeClock();
    const { attempt, calls } = failingThen(transient, transient);
    // Act
    const result = await withRetry(attempt, {
      deadline: clock.time + 60_000,
      signal,
      classify,
      clock,
      policy: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000 },
    });
    // Assess
    expect(result).toBe("done");
    expect(calls()).toBe(3);
    expect(clock.sleeps).toEqual([75, 150]); // random 0.5: 3/4 of 100, then of 200
  });

  it("does not retry a failure the classifier calls permanent", async () => {
    const clock = fakeClock();
    const { attempt, calls } = failingThen(permanent);
    await expect(withRetry(attempt, { deadline: clock.time + 60_000, signal, classify, clock })).rejects.toBe(
      permanent,
    );
    expect(calls()).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it("gives up with the last error after maxAttempts", async () => {
    const clock = fakeClock();
    const { attempt, calls } = failingThen(transient, transient, transient, transient);
    await expect(
      withRetry(attempt, {
        deadline: clock.time + 60_000,
        signal,
        classify,
        clock,
        policy: { maxAttempts: 3 },
      }),
    ).rejects.toBe(transient);
    expect(calls()).toBe(3);
  });

  it("waits exactly the provider's Retry-After instead of its own backoff", async () => {
    const clock = fakeClock();
    const { attempt } = failingThen(transient);
    await withRetry(attempt, {
      deadline: clock.time + 60_000,
      signal,
      classify: () => ({ retryable: true, retryAfterMs: 2_000 }),
      clock,
    });
    expect(clock.sleeps).toEqual([2_000]);
  });

  it("never sleeps into the deadline: gives up when the wait plus a minimal attempt does not fit", async () => {
    // Prepare: 1.5 s left, the provider asks for 1 s, an attempt needs at least 1 s
    const clock = fakeClock();
    const { attempt, calls } = failingThen(transient);
    // Act
    const outcome = withRetry(attempt, {
      deadline: clock.time + 1_500,
      signal,
      classify: () => ({ retryable: true, retryAfterMs: 1_000 }),
      clock,
      policy: { minAttemptMs: 1_000 },
    });
    // Assess
    await expect(outcome).rejects.toBe(transient);
    expect(calls()).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it("stops at once when the signal aborts during a backoff sleep", async () => {
    // Prepare: the real clock, a 10 s backoff, an abort after 30 ms
    const controller = new AbortController();
    const { attempt, calls } = failingThen(transient);
    setTimeout(() => controller.abort(new Error("deadline")), 30);
    const started = Date.now();
    // Act
    const outcome = withRetry(attempt, {
      deadline: Date.now() + 60_000,
      signal: controller.signal,
      classify: () => ({ retryable: true, retryAfterMs: 10_000 }),
    });
    // Assess
    await expect(outcome).rejects.toThrow("deadline");
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(calls()).toBe(1);
  });

  it("does not start an attempt when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("gone"));
    const { attempt, calls } = failingThen();
    await expect(
      withRetry(attempt, { deadline: Date.now() + 1_000, signal: controller.signal, classify }),
    ).rejects.toThrow("gone");
    expect(calls()).toBe(0);
  });
});

describe("backoffDelay", () => {
  it("draws from [d/2, d] with d doubling per retry and capped", () => {
    const policy = { baseDelayMs: 300, maxDelayMs: 1_000 };
    expect(backoffDelay(1, policy, 0)).toBe(150);
    expect(backoffDelay(1, policy, 1)).toBe(300);
    expect(backoffDelay(2, policy, 0)).toBe(300);
    expect(backoffDelay(5, policy, 1)).toBe(1_000);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");

  it("reads delta-seconds, HTTP dates and retry-after-ms", () => {
    expect(parseRetryAfter({ retryAfter: "2" }, now)).toBe(2_000);
    expect(parseRetryAfter({ retryAfter: "Wed, 01 Jan 2025 00:00:03 GMT" }, now)).toBe(3_000);
    expect(parseRetryAfter({ retryAfter: "9", retryAfterMs: "250" }, now)).toBe(250);
  });

  it("ignores absent or unreadable values", () => {
    expect(parseRetryAfter({}, now)).toBeUndefined();
    expect(parseRetryAfter({ retryAfter: "soon" }, now)).toBeUndefined();
  });
});
