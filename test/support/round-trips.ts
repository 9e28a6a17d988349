/**
 * Sequential table round trips, read off the calls a request made: the longest chain of calls in
 * which each was sent only after the one before it was answered. Calls a function sends together
 * (Promise.all) overlap and count once; a call that needs an earlier one's answer starts after it
 * ended. It needs no clock precision: a chain link exists only when a call started after another
 * one was completely answered, so waits that stretch both (a slow table, a loaded machine) do not
 * change the count. A tap that holds every answer for a while widens the gaps further.
 */

export interface TimedCall {
  /** When the call reached the table's endpoint (ms, any monotonic clock). */
  startedAt: number;
  /** When its answer was given back (same clock). */
  endedAt: number;
}

export function sequentialRoundTrips(calls: readonly TimedCall[]): number {
  const ordered = [...calls].sort((a, b) => a.startedAt - b.startedAt);
  // chain[i]: the longest chain that ends with call i.
  const chain: number[] = [];
  for (const [index, call] of ordered.entries()) {
    let longest = 0;
    for (let before = 0; before < index; before++) {
      const earlier = ordered[before] as TimedCall;
      if (earlier.endedAt <= call.startedAt) longest = Math.max(longest, chain[before] ?? 0);
    }
    chain.push(longest + 1);
  }
  return Math.max(0, ...chain);
}
