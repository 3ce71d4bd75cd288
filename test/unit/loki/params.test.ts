// Loki's request parameters (contract §17): times, steps, the window of whole client milliseconds.
import { expect, test } from "bun:test";
import { limitOf, MAX_LIMIT, msWindow, stepOf, timeNs } from "../../../src/loki/params.ts";

test("a time with . is seconds, an integer of at most 10 digits seconds, a longer one nanoseconds, else RFC 3339", () => {
  for (const [text, ns] of [
    ["4000000000", 4_000_000_000_000_000_000n],
    ["1700000000.5", 1_700_000_000_500_000_000n],
    ["1700000000.123456789", 1_700_000_000_123_456_789n],
    [".5", 500_000_000n],
    ["17000000000", 17_000_000_000n],
    ["1700000000000000001", 1_700_000_000_000_000_001n],
    ["2023-11-14T22:13:20Z", 1_700_000_000_000_000_000n],
    ["2023-11-14T22:13:20.000000001+00:00", 1_700_000_000_000_000_001n],
  ] as const) {
    expect({ text, ns: timeNs("t", text) }).toEqual({ text, ns });
  }
  expect(() => timeNs("start", "now-1h")).toThrow("cannot parse");
});

test("[start, end) in nanoseconds is the client milliseconds whose nanoseconds are ≥ start and < end", () => {
  expect(msWindow(1_000_000n, 3_000_000n)).toEqual({ fromMs: 1, toMs: 3 });
  expect(msWindow(1_000_001n, 3_000_001n)).toEqual({ fromMs: 2, toMs: 4 });
});

test("step: a duration or seconds; by default the range over 250 points, at least 1 s; more than 11,000 points is a 400", () => {
  const p = (step?: string) => new URLSearchParams(step === undefined ? {} : { step });
  expect(stepOf(p("15s"), 0n, 3_600_000_000_000n)).toBe(15_000_000_000n);
  expect(stepOf(p("0.5"), 0n, 3_600_000_000_000n)).toBe(500_000_000n);
  expect(stepOf(p(), 0n, 3_600_000_000_000n)).toBe(14_000_000_000n);
  expect(stepOf(p(), 0n, 60_000_000_000n)).toBe(1_000_000_000n);
  expect(() => stepOf(p("1s"), 0n, 11_000_000_000_000n)).toThrow("at most 11000");
  expect(stepOf(p("1s"), 0n, 10_999_000_000_000n)).toBe(1_000_000_000n);
});

test("limit: 100 by default, 1 to MAX_LIMIT", () => {
  expect(limitOf(new URLSearchParams())).toBe(100);
  expect(limitOf(new URLSearchParams({ limit: "" }))).toBe(100);
  expect(limitOf(new URLSearchParams({ limit: String(MAX_LIMIT) }))).toBe(MAX_LIMIT);
  for (const limit of ["0", String(MAX_LIMIT + 1), "-1", "1.5", "ten"]) expect(() => limitOf(new URLSearchParams({ limit }))).toThrow("limit must be");
});
