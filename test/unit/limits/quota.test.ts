// Monthly quota (contract §8): calendar months in UTC; the 429 of a write that would pass the limit.
import { describe, expect, test } from "bun:test";
import { BUILT_IN_PLANS } from "../../../src/limits/plans.ts";
import { monthBounds, quotaExceeded } from "../../../src/limits/quota.ts";

const ms = (iso: string) => Date.parse(iso);
const free = BUILT_IN_PLANS.find((p) => p.code === "free")!;

describe("monthBounds", () => {
  // [instant, first millisecond of its month, first millisecond of the next]
  const rows: [string, string, string][] = [
    ["2026-11-15T12:00:00.000Z", "2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"],
    ["2026-11-01T00:00:00.000Z", "2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"],
    ["2026-11-30T23:59:59.999Z", "2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"],
    ["2026-12-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"],
    ["2026-12-31T23:59:59.999Z", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"],
    ["2028-02-29T23:59:59.999Z", "2028-02-01T00:00:00.000Z", "2028-03-01T00:00:00.000Z"],
    ["2027-02-28T12:00:00.000Z", "2027-02-01T00:00:00.000Z", "2027-03-01T00:00:00.000Z"],
  ];
  test.each(rows)("%s lies in the UTC month [%s, %s)", (at, start, end) => {
    const b = monthBounds(ms(at));
    expect({ start: new Date(b.startMs).toISOString(), end: new Date(b.endMs).toISOString() }).toEqual({ start, end });
  });
});

describe("quotaExceeded", () => {
  test("answers 429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED whose rate-limit headers describe the quota, Retry-After until the reset", () => {
    const e = quotaExceeded(free, 4_990, 20, ms("2026-11-30T23:00:00.000Z"));
    expect({ status: e.status, code: e.code, headers: e.headers }).toEqual({
      status: 429,
      code: "QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED",
      headers: {
        "x-ratelimit-limit": "5000",
        "x-ratelimit-remaining": "10",
        "x-ratelimit-reset": String(ms("2026-12-01T00:00:00.000Z") / 1000),
        "retry-after": "3600",
      },
    });
  });

  // [now, Retry-After]: whole seconds up to the reset, never below 1
  const retry: [string, string][] = [
    ["2026-11-30T23:59:59.999Z", "1"],
    ["2026-11-30T23:59:58.500Z", "2"],
    ["2026-11-01T00:00:00.000Z", String(30 * 86_400)],
  ];
  test.each(retry)("at %s Retry-After is %s s", (now, seconds) => {
    expect(quotaExceeded(free, 5_000, 1, ms(now)).headers?.["retry-after"]).toBe(seconds);
  });
});
