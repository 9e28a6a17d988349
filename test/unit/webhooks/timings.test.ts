/** The retry schedule: exponential waits with jitter, at least 24 hours of trying, configurable. */
import { describe, expect, it } from "vitest";
import {
  defaultTimings,
  queueDelaySeconds,
  retryDelayMs,
  timingsFromEnvironment,
} from "#functions/webhooks/timings";

const lowest = () => 0;
const highest = () => 0.999999;

describe("the retry schedule", () => {
  it("keeps trying for more than 24 hours even when every wait is shortened by the jitter", () => {
    let total = 0;
    for (let attempt = 1; ; attempt++) {
      const wait = retryDelayMs(defaultTimings, attempt, lowest);
      if (wait === undefined) break;
      total += wait;
    }
    expect(total).toBeGreaterThan(24 * 3_600_000);
  });

  it("waits longer after each failure, and stops after the last wait", () => {
    const waits = defaultTimings.retryScheduleSeconds.map((_, index) =>
      retryDelayMs(defaultTimings, index + 1, () => 0.5),
    );
    expect(waits).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(retryDelayMs(defaultTimings, waits.length + 1)).toBeUndefined();
  });

  it("spreads each wait by at most ±10 %", () => {
    expect(retryDelayMs(defaultTimings, 2, lowest)).toBe(270_000);
    expect(retryDelayMs(defaultTimings, 2, highest)).toBe(330_000);
  });

  it("reads compressed timings from the environment, for tests", () => {
    const timings = timingsFromEnvironment({
      WEBHOOK_RETRY_SCHEDULE: "0.5, 1,2",
      WEBHOOK_TIMEOUT_MS: "1500",
      WEBHOOK_DISABLE_AFTER_SECONDS: "6",
      WEBHOOK_SECRET_OVERLAP_SECONDS: "30",
      WEBHOOK_MAX_QUEUE_DELAY_SECONDS: "1",
      WEBHOOK_MAX_IN_FLIGHT: "2",
    });
    expect(timings).toMatchObject({
      retryScheduleSeconds: [0.5, 1, 2],
      requestTimeoutMs: 1_500,
      disableAfterSeconds: 6,
      secretOverlapSeconds: 30,
      maxQueueDelaySeconds: 1,
      maxInFlightPerEndpoint: 2,
    });
    expect(timingsFromEnvironment({})).toEqual(defaultTimings);
    expect(() => timingsFromEnvironment({ WEBHOOK_RETRY_SCHEDULE: "5,x" })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
  });

  it("never asks the queue for more than its maximum delay: longer waits are chained", () => {
    const now = 1_000_000;
    expect(queueDelaySeconds(defaultTimings, now + 4_200, now)).toBe(5);
    expect(queueDelaySeconds(defaultTimings, now + 36_000_000, now)).toBe(900);
    expect(queueDelaySeconds(defaultTimings, now - 5, now)).toBe(0);
    expect(
      queueDelaySeconds({ ...defaultTimings, maxQueueDelaySeconds: 900 }, now + 2 * 3_600_000, now),
    ).toBe(900);
  });
});
