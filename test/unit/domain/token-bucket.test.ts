/** The GCRA decision (domain/token-bucket.ts) as a token bucket: capacity L, refilled at L per period. */
import { describe, expect, it } from "vitest";
import { decide, retryAfterSeconds, stateAfter } from "#functions/domain/token-bucket";

const minute = 60_000;
const t0 = 1_800_000_000_000;

/** Runs `count` requests at the given times against one bucket; returns which were admitted. */
function simulate(limit: number, times: number[]): boolean[] {
  let tat: number | undefined;
  return times.map((now) => {
    const decision = decide({ limit, periodMs: minute }, tat, now);
    if (decision.admitted) tat = decision.tat;
    return decision.admitted;
  });
}

describe("decide", () => {
  it("admits exactly L requests at one instant against a full bucket", () => {
    for (const limit of [1, 3, 7, 100, 997]) {
      const admitted = simulate(
        limit,
        Array.from({ length: limit + 5 }, () => t0),
      );
      expect(admitted.filter(Boolean)).toHaveLength(limit);
      expect(admitted.slice(0, limit).every(Boolean)).toBe(true);
    }
  });

  it("refills one token per period / L", () => {
    // L = 3: a token every 20 s.
    const admitted = simulate(3, [t0, t0, t0, t0, t0 + 19_999, t0 + 20_000, t0 + 20_001]);
    expect(admitted).toEqual([true, true, true, false, false, true, false]);
  });

  it("never holds more than L tokens, however long it was idle", () => {
    const admitted = simulate(2, [t0, t0 + 10 * minute, t0 + 10 * minute, t0 + 10 * minute]);
    expect(admitted).toEqual([true, true, true, false]);
  });

  it("sustains exactly L per period under steady load", () => {
    const limit = 6;
    const times = Array.from({ length: 600 }, (_, i) => t0 + i * 1_000); // one request per second for 10 minutes
    const admitted = simulate(limit, times).filter(Boolean).length;
    // 6 at once, then one every 10 s: 6 + 59 over 10 minutes.
    expect(admitted).toBe(limit + 59);
  });

  it("says how long until one request is allowed again", () => {
    const refused = decide({ limit: 3, periodMs: minute }, t0 + minute, t0);
    expect(refused).toEqual({ admitted: false, retryAfterMs: 20_000 });
    expect(retryAfterSeconds(20_000)).toBe(20);
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(1_000.4)).toBe(2);
  });
});

describe("stateAfter", () => {
  it("reports whole tokens left and when the bucket is full again", () => {
    expect(stateAfter({ limit: 100, periodMs: minute }, t0 + 600, t0)).toEqual({
      limit: 100,
      remaining: 99,
      resetAt: Math.ceil((t0 + 600) / 1000),
    });
    expect(stateAfter({ limit: 4, periodMs: minute }, t0 + minute, t0).remaining).toBe(0);
    expect(stateAfter({ limit: 4, periodMs: minute }, t0 - 5, t0)).toEqual({
      limit: 4,
      remaining: 4,
      resetAt: t0 / 1000,
    });
  });

  it("stays exact with fractional intervals (60 s / 7)", () => {
    const limit = 7;
    const admitted = simulate(
      limit,
      Array.from({ length: 20 }, () => t0),
    );
    expect(admitted.filter(Boolean)).toHaveLength(7);
  });
});
