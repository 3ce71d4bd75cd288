// Token buckets (contract §8): capacity = the per-minute figure, refilled evenly; headers of §7; bounded memory.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { Buckets } from "../../../src/limits/buckets.ts";

const T0 = Date.parse("2026-11-10T12:00:00.000Z"); // a whole second, so Reset values are easy to state
const MINUTE = 60_000;
/** per-minute figures of the built-in plans and the IP default: each gives a whole number of ms per token */
const RATES = [30, 60, 100, 120, 200, 300, 1000, 6000];

/** drain spends every token of name's bucket at time t and returns how many it held. */
function drain(b: Buckets, name: string, perMinute: number, t: number): number {
  let n = 0;
  while (b.take(name, perMinute, t).allowed) n++;
  return n;
}

describe("admission bound", () => {
  test("accepted requests in any time window never exceed capacity + rate·window, for any arrival pattern", () => {
    const pattern = fc.record({
      perMinute: fc.integer({ min: 1, max: 2000 }),
      // arrival offsets in ms, bursts included (many arrivals at one instant); peek attempts interleaved
      arrivals: fc.array(fc.record({ at: fc.integer({ min: 0, max: 5 * MINUTE }), peek: fc.boolean() }), { minLength: 1, maxLength: 400 }),
    });
    fc.assert(
      fc.property(pattern, ({ perMinute, arrivals }) => {
        const b = new Buckets();
        const sorted = [...arrivals].sort((x, y) => x.at - y.at);
        const accepted = sorted.map(({ at, peek }) => !peek && b.take("k", perMinute, T0 + at).allowed);
        // every window [t_i, t_j] of the arrivals
        for (let i = 0; i < sorted.length; i++) {
          let count = 0;
          for (let j = i; j < sorted.length; j++) {
            if (accepted[j]) count++;
            const bound = perMinute + (perMinute * (sorted[j].at - sorted[i].at)) / MINUTE;
            if (count > bound + 1e-9) return false;
          }
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });

  test("a clock that jumps backwards never adds tokens: accepted ≤ capacity + rate·(latest − earliest)", () => {
    const pattern = fc.record({
      perMinute: fc.integer({ min: 1, max: 2000 }),
      times: fc.array(fc.integer({ min: 0, max: 3 * MINUTE }), { minLength: 1, maxLength: 400 }),
    });
    fc.assert(
      fc.property(pattern, ({ perMinute, times }) => {
        const b = new Buckets();
        const accepted = times.filter((t) => b.take("k", perMinute, T0 + t).allowed).length;
        const span = Math.max(...times) - Math.min(...times);
        return accepted <= perMinute + (perMinute * span) / MINUTE + 1e-9;
      }),
      { numRuns: 300 },
    );
  });

  test("a caller who never exceeds the rate is never refused: capacity at once, then one per 60,000/rpm ms", () => {
    const pattern = fc.record({
      perMinute: fc.constantFrom(...RATES),
      extraGaps: fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 200 }),
    });
    fc.assert(
      fc.property(pattern, ({ perMinute, extraGaps }) => {
        const b = new Buckets();
        if (drain(b, "k", perMinute, T0) !== perMinute) return false;
        let t = T0;
        return extraGaps.every((gap) => b.take("k", perMinute, (t += MINUTE / perMinute + gap)).allowed);
      }),
      { numRuns: 200 },
    );
  });

  test("refill is even: after draining, the n-th token is back at exactly n·60,000/rpm ms, however often the caller polls", () => {
    const pattern = fc.record({
      perMinute: fc.constantFrom(...RATES),
      // refused polls between two tokens, as fractions of the interval
      polls: fc.array(fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { maxLength: 6 }), { minLength: 1, maxLength: 30 }),
    });
    fc.assert(
      fc.property(pattern, ({ perMinute, polls }) => {
        const b = new Buckets();
        drain(b, "k", perMinute, T0);
        const interval = MINUTE / perMinute;
        return polls.every((fractions, i) => {
          const due = T0 + (i + 1) * interval;
          const early = [...fractions].sort().map((f) => Math.min(due - 1, T0 + i * interval + Math.floor(f * interval)));
          const refusedEarly = early.every((at) => !b.take("k", perMinute, at).allowed);
          return refusedEarly && !b.take("k", perMinute, due - 1).allowed && b.take("k", perMinute, due).allowed && !b.take("k", perMinute, due).allowed;
        });
      }),
      { numRuns: 200 },
    );
  });

  // [perMinute, ms after draining at which the caller polls once in vain]
  const polled: [number, number][] = [
    [30, 1],
    [30, 1999],
    [120, 1],
    [120, 250],
    [200, 7],
    [6000, 3],
  ];
  test.each(polled)("refill is even: at %i/min, a refused poll %i ms after draining does not delay the token due at 60,000/rpm ms", (perMinute, pollAt) => {
    const b = new Buckets();
    drain(b, "k", perMinute, T0);
    const due = MINUTE / perMinute;
    const seen = {
      poll: b.take("k", perMinute, T0 + pollAt).allowed,
      justBefore: b.take("k", perMinute, T0 + due - 1).allowed,
      due: b.take("k", perMinute, T0 + due).allowed,
    };
    expect(seen).toEqual({ poll: pollAt >= due, justBefore: false, due: true });
  });
});

describe("what one attempt reports", () => {
  // [perMinute, spends at T0] → remaining, and Reset = ceil((T0 + spends·60000/rpm) / 1000)
  const rows: [number, number][] = [
    [120, 1],
    [120, 60],
    [120, 120],
    [30, 1],
    [30, 30],
    [100, 7],
    [6000, 1],
    [6000, 6000],
  ];
  test.each(rows)("at %i/min after %i spends: remaining and X-RateLimit-Reset (second the bucket is full again)", (perMinute, spends) => {
    const b = new Buckets();
    let last = b.take("k", perMinute, T0);
    for (let i = 1; i < spends; i++) last = b.take("k", perMinute, T0);
    expect({ allowed: last.allowed, limit: last.limit, remaining: last.remaining, resetAt: last.resetAt }).toEqual({
      allowed: true,
      limit: perMinute,
      remaining: perMinute - spends,
      resetAt: Math.ceil((T0 + (spends * MINUTE) / perMinute) / 1000),
    });
  });

  // [perMinute, Retry-After seconds once empty: the time until one token is back, at least 1]
  const retry: [number, number][] = [
    [30, 2],
    [60, 1],
    [120, 1],
    [7, 9],
    [1, 60],
    [6000, 1],
  ];
  test.each(retry)("an empty %i/min bucket refuses with Retry-After %i s (≥ 1) and Reset a full minute away", (perMinute, seconds) => {
    const b = new Buckets();
    drain(b, "k", perMinute, T0);
    const s = b.take("k", perMinute, T0);
    expect({ allowed: s.allowed, remaining: s.remaining, retryAfter: s.retryAfter, resetAt: s.resetAt }).toEqual({
      allowed: false,
      remaining: 0,
      retryAfter: seconds,
      resetAt: T0 / 1000 + 60,
    });
  });

  test("a look with spend=false takes no token, even many times over", () => {
    const b = new Buckets();
    for (let i = 0; i < 50; i++) expect(b.take("k", 10, T0, false).remaining).toBe(10);
    expect(drain(b, "k", 10, T0)).toBe(10);
  });

  test("names have separate buckets", () => {
    const b = new Buckets();
    expect(drain(b, "a", 5, T0)).toBe(5);
    expect(b.take("b", 5, T0).remaining).toBe(4);
  });

  test("a bucket left idle for a minute is full again, whether or not it was evicted", () => {
    const b = new Buckets();
    drain(b, "k", 120, T0);
    for (let i = 0; i < 5000; i++) b.take(`other-${i}`, 120, T0 + MINUTE + i); // sweeps run meanwhile
    expect(drain(b, "k", 120, T0 + MINUTE + 5000)).toBe(120);
  });
});

describe("memory bound", () => {
  test("a million distinct names over an advancing clock never hold more than the cap of 100,000 buckets", () => {
    const b = new Buckets();
    let most = 0;
    for (let i = 0; i < 1_000_000; i++) {
      b.take(`10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`, 6000, T0 + i); // one new name per ms
      if (b.size > most) most = b.size;
    }
    expect(most).toBeLessThanOrEqual(100_000);
  });

  test("the cap holds even when every name is new within one minute", () => {
    const b = new Buckets(1_000);
    let most = 0;
    for (let i = 0; i < 20_000; i++) {
      b.take(`n${i}`, 6000, T0);
      most = Math.max(most, b.size);
    }
    expect(most).toBeLessThanOrEqual(1_000);
  });

  test("at the cap, each new name still costs constant time: 500,000 new names within one minute take under 4 s", () => {
    const b = new Buckets(); // default cap 100,000: reached after 10 s at this pace
    const started = performance.now();
    let done = 0;
    for (; done < 500_000; done++) {
      b.take(`n${done}`, 6000, T0 + Math.floor(done / 10)); // 10 new client addresses per ms
      if ((done & 1023) === 0 && performance.now() - started > 4_000) break; // stop a quadratic run early
    }
    expect({ done, underCap: b.size <= 100_000 }).toEqual({ done: 500_000, underCap: true });
  }, 10_000);
});
