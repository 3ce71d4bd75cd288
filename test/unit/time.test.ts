// RFC 3339 parsing at full precision, the millisecond bounds of from/to, and the UTC rendering.
import { test, expect, describe } from "bun:test";
import fc from "fast-check";
import { formatMs, formatMsRepeated, lowerBoundMs, parseRfc3339, upperBoundMs, type Instant } from "../../src/time.ts";

const H = 3_600_000;
const M = 60_000;

describe("parseRfc3339: offsets convert to UTC", () => {
  const rows: [string, string, number][] = [
    ["Z is UTC", "2026-11-22T10:00:00Z", Date.UTC(2026, 10, 22, 10)],
    ["lowercase z is UTC", "2026-11-22T10:00:00z", Date.UTC(2026, 10, 22, 10)],
    ["lowercase t separates date and time", "2026-11-22t10:00:00Z", Date.UTC(2026, 10, 22, 10)],
    ["+00:00 is UTC", "2026-11-22T10:00:00+00:00", Date.UTC(2026, 10, 22, 10)],
    ["-00:00 is UTC", "2026-11-22T10:00:00-00:00", Date.UTC(2026, 10, 22, 10)],
    ["+02:00 is two hours ahead of UTC", "2026-11-22T10:00:00+02:00", Date.UTC(2026, 10, 22, 8)],
    ["-05:30 is five and a half hours behind UTC", "2026-11-22T10:00:00-05:30", Date.UTC(2026, 10, 22, 15, 30)],
    ["+05:45 minutes of the offset count", "2026-11-22T10:00:00+05:45", Date.UTC(2026, 10, 22, 4, 15)],
    ["+23:59 is the largest offset", "2026-11-22T10:00:00+23:59", Date.UTC(2026, 10, 22, 10) - 23 * H - 59 * M],
    ["an offset can move the instant to the previous day and year", "2026-01-01T01:00:00+02:00", Date.UTC(2025, 11, 31, 23)],
    ["an offset can move the instant to the next day", "2026-02-28T22:30:00-02:00", Date.UTC(2026, 2, 1, 0, 30)],
  ];
  for (const [name, text, ms] of rows) {
    test(name, () => expect(parseRfc3339(text)).toEqual({ ms, subNs: 0 }));
  }
});

describe("parseRfc3339: fractional seconds up to 9 digits", () => {
  const base = Date.UTC(2026, 10, 22, 10);
  const rows: [string, string, Instant][] = [
    ["1 digit is tenths", "2026-11-22T10:00:00.1Z", { ms: base + 100, subNs: 0 }],
    ["2 digits are hundredths", "2026-11-22T10:00:00.12Z", { ms: base + 120, subNs: 0 }],
    ["3 digits are milliseconds", "2026-11-22T10:00:00.123Z", { ms: base + 123, subNs: 0 }],
    ["4 digits leave a sub-millisecond remainder", "2026-11-22T10:00:00.1234Z", { ms: base + 123, subNs: 400_000 }],
    ["6 digits are microseconds", "2026-11-22T10:00:00.123456Z", { ms: base + 123, subNs: 456_000 }],
    ["9 digits are nanoseconds", "2026-11-22T10:00:00.123456789Z", { ms: base + 123, subNs: 456_789 }],
    ["1 nanosecond", "2026-11-22T10:00:00.000000001Z", { ms: base, subNs: 1 }],
    ["999,999 ns is the largest remainder", "2026-11-22T10:00:00.999999999Z", { ms: base + 999, subNs: 999_999 }],
    ["trailing zeros change nothing", "2026-11-22T10:00:00.120000000Z", { ms: base + 120, subNs: 0 }],
    ["fraction with an offset", "2026-11-22T10:00:00.5+01:00", { ms: base - H + 500, subNs: 0 }],
  ];
  for (const [name, text, instant] of rows) {
    test(name, () => expect(parseRfc3339(text)).toEqual(instant));
  }
  test("10 fraction digits are rejected", () => expect(parseRfc3339("2026-11-22T10:00:00.1234567891Z")).toBeNull());
  test("a dot without digits is rejected", () => expect(parseRfc3339("2026-11-22T10:00:00.Z")).toBeNull());
  test("a comma as decimal separator is rejected", () => expect(parseRfc3339("2026-11-22T10:00:00,5Z")).toBeNull());
});

describe("parseRfc3339: years 0000–9999 only", () => {
  test("0000-01-01T00:00:00Z is the earliest instant", () => {
    expect(parseRfc3339("0000-01-01T00:00:00Z")).toEqual({ ms: Date.parse("0000-01-01T00:00:00.000Z"), subNs: 0 });
    expect(Date.parse("0000-01-01T00:00:00.000Z")).toBe(-62_167_219_200_000);
  });
  test("an offset that moves year 0000 before its start is rejected", () => {
    expect(parseRfc3339("0000-01-01T00:00:00+00:01")).toBeNull();
  });
  test("years 0–99 are kept as written (not mapped to 1900–1999)", () => {
    expect(parseRfc3339("0099-03-01T12:00:00Z")!.ms).toBe(Date.parse("0099-03-01T12:00:00.000Z"));
    expect(parseRfc3339("0001-01-01T00:00:00Z")!.ms).toBe(Date.parse("0001-01-01T00:00:00.000Z"));
  });
  test("year 0000 is a leap year (divisible by 400)", () => {
    expect(parseRfc3339("0000-02-29T00:00:00Z")!.ms).toBe(Date.parse("0000-02-29T00:00:00.000Z"));
  });
  test("9999-12-31T23:59:59.999Z is accepted", () => {
    expect(parseRfc3339("9999-12-31T23:59:59.999Z")).toEqual({ ms: Date.parse("9999-12-31T23:59:59.999Z"), subNs: 0 });
  });
  test("the last nanosecond of 9999 is accepted", () => {
    expect(parseRfc3339("9999-12-31T23:59:59.999999999Z")).toEqual({ ms: Date.parse("9999-12-31T23:59:59.999Z"), subNs: 999_999 });
  });
  test("an offset that moves 9999 into year 10000 is rejected", () => {
    expect(parseRfc3339("9999-12-31T23:59:59-00:01")).toBeNull();
  });
  test("a five-digit year is rejected", () => expect(parseRfc3339("10000-01-01T00:00:00Z")).toBeNull());
  test("a signed year is rejected", () => expect(parseRfc3339("+2026-11-22T10:00:00Z")).toBeNull());
  test("a three-digit year is rejected", () => expect(parseRfc3339("999-01-01T00:00:00Z")).toBeNull());
});

describe("parseRfc3339: leap second 60", () => {
  test("second 60 is accepted and is the instant one second after :59", () => {
    expect(parseRfc3339("2016-12-31T23:59:60Z")).toEqual({ ms: Date.UTC(2017, 0, 1, 0, 0, 0), subNs: 0 });
  });
  test("second 60 with a fraction keeps the fraction", () => {
    expect(parseRfc3339("2016-12-31T23:59:60.5Z")).toEqual({ ms: Date.UTC(2017, 0, 1, 0, 0, 0, 500), subNs: 0 });
  });
  test("second 61 is rejected", () => expect(parseRfc3339("2016-12-31T23:59:61Z")).toBeNull());
});

describe("parseRfc3339: what is not an RFC 3339 date-time with a zone", () => {
  const rows: [string, string][] = [
    ["no zone", "2026-11-22T10:00:00"],
    ["date only", "2026-11-22"],
    ["space instead of T", "2026-11-22 10:00:00Z"],
    ["no seconds", "2026-11-22T10:00Z"],
    ["offset without colon", "2026-11-22T10:00:00+0200"],
    ["offset hours only", "2026-11-22T10:00:00+02"],
    ["offset hour 24", "2026-11-22T10:00:00+24:00"],
    ["offset minute 60", "2026-11-22T10:00:00+02:60"],
    ["zone name", "2026-11-22T10:00:00 UTC"],
    ["one-digit month", "2026-1-22T10:00:00Z"],
    ["one-digit hour", "2026-11-22T1:00:00Z"],
    ["month 00", "2026-00-22T10:00:00Z"],
    ["month 13", "2026-13-22T10:00:00Z"],
    ["day 00", "2026-11-00T10:00:00Z"],
    ["day 32", "2026-01-32T10:00:00Z"],
    ["November 31", "2026-11-31T10:00:00Z"],
    ["Feb 29 in a non-leap year", "2023-02-29T10:00:00Z"],
    ["Feb 29 in 1900 (century, not leap)", "1900-02-29T10:00:00Z"],
    ["Feb 30 in a leap year", "2024-02-30T10:00:00Z"],
    ["hour 24", "2026-11-22T24:00:00Z"],
    ["minute 60", "2026-11-22T10:60:00Z"],
    ["leading white space", " 2026-11-22T10:00:00Z"],
    ["trailing white space", "2026-11-22T10:00:00Z "],
    ["trailing newline", "2026-11-22T10:00:00Z\n"],
    ["other letter as separator", "2026-11-22X10:00:00Z"],
    ["empty string", ""],
    ["epoch digits", "1795000000000"],
  ];
  for (const [name, text] of rows) {
    test(`${name} is rejected: ${JSON.stringify(text)}`, () => expect(parseRfc3339(text)).toBeNull());
  }
  test("Feb 29 in a leap year is accepted", () => {
    expect(parseRfc3339("2024-02-29T10:00:00Z")).toEqual({ ms: Date.UTC(2024, 1, 29, 10), subNs: 0 });
  });
  test("Feb 29 in 2000 (divisible by 400) is accepted", () => {
    expect(parseRfc3339("2000-02-29T10:00:00Z")).toEqual({ ms: Date.UTC(2000, 1, 29, 10), subNs: 0 });
  });
});

describe("lowerBoundMs / upperBoundMs: whole-millisecond bounds of an instant", () => {
  test("a whole-millisecond instant is its own bound both ways", () => {
    const t = parseRfc3339("2026-11-22T10:00:00.123Z")!;
    expect(lowerBoundMs(t)).toBe(Date.UTC(2026, 10, 22, 10, 0, 0, 123));
    expect(upperBoundMs(t)).toBe(Date.UTC(2026, 10, 22, 10, 0, 0, 123));
  });
  test("a sub-millisecond remainder lifts the inclusive from to the next millisecond", () => {
    const t = parseRfc3339("2026-11-22T10:00:00.123000001Z")!;
    expect(lowerBoundMs(t)).toBe(Date.UTC(2026, 10, 22, 10, 0, 0, 124));
  });
  test("a sub-millisecond remainder lifts the exclusive to to the next millisecond", () => {
    const t = parseRfc3339("2026-11-22T10:00:00.123999999Z")!;
    expect(upperBoundMs(t)).toBe(Date.UTC(2026, 10, 22, 10, 0, 0, 124));
  });

  // Whatever the instant, a whole-ms server timestamp s passes `from` iff s ≥ instant,
  // and passes `to` iff s < instant, compared exactly in nanoseconds.
  const instants = [
    "2026-11-22T10:00:00Z",
    "2026-11-22T10:00:00.123Z",
    "2026-11-22T10:00:00.1234Z",
    "2026-11-22T10:00:00.000000001Z",
    "2026-11-22T10:00:00.999999999Z",
    "2026-11-22T12:00:00.500000500+02:00",
    "1969-12-31T23:59:59.999500Z",
  ];
  for (const text of instants) {
    test(`from is inclusive and to exclusive at full precision: ${text}`, () => {
      const t = parseRfc3339(text)!;
      const exactNs = BigInt(t.ms) * 1_000_000n + BigInt(t.subNs);
      for (let s = t.ms - 2; s <= t.ms + 2; s++) {
        const sNs = BigInt(s) * 1_000_000n;
        expect(s >= lowerBoundMs(t)).toBe(sNs >= exactNs);
        expect(s < upperBoundMs(t)).toBe(sNs < exactNs);
      }
    });
  }
});

describe("formatMs: UTC RFC 3339 with milliseconds", () => {
  const rows: [string, number, string][] = [
    ["milliseconds are shown", Date.UTC(2026, 10, 22, 10, 0, 0, 123), "2026-11-22T10:00:00.123Z"],
    ["zero milliseconds are shown as .000", Date.UTC(2026, 10, 22, 10), "2026-11-22T10:00:00.000Z"],
    ["small milliseconds are zero-padded", Date.UTC(2026, 0, 2, 3, 4, 5, 7), "2026-01-02T03:04:05.007Z"],
    ["the epoch", 0, "1970-01-01T00:00:00.000Z"],
    ["before the epoch", -1, "1969-12-31T23:59:59.999Z"],
    ["year 0000", -62_167_219_200_000, "0000-01-01T00:00:00.000Z"],
    ["year 9999", 253_402_300_799_999, "9999-12-31T23:59:59.999Z"],
  ];
  for (const [name, ms, text] of rows) {
    test(name, () => expect(formatMs(ms)).toBe(text));
  }
  test("an instant given with an offset is rendered in UTC", () => {
    expect(formatMs(parseRfc3339("2026-11-22T12:30:00.250+02:30")!.ms)).toBe("2026-11-22T10:00:00.250Z");
  });
  test("sub-millisecond digits are cut, not rounded", () => {
    expect(formatMs(parseRfc3339("2026-11-22T10:00:00.123999999Z")!.ms)).toBe("2026-11-22T10:00:00.123Z");
  });
  test("formatMsRepeated, which keeps the last instant, renders any run of instants, repeats among them, as formatMs does", () => {
    const ms = fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 });
    fc.assert(
      fc.property(fc.array(fc.oneof(ms, fc.constantFrom(0, 1, 1, 2)), { maxLength: 20 }), (run) => {
        for (const m of run) expect(formatMsRepeated(m)).toBe(formatMs(m));
      }),
    );
    expect(() => formatMsRepeated(NaN)).toThrow(RangeError);
  });
  test("format and parse round-trip", () => {
    for (const ms of [0, 1, Date.UTC(2026, 10, 22, 10, 0, 0, 123), -62_167_219_200_000, 253_402_300_799_999]) {
      expect(parseRfc3339(formatMs(ms))).toEqual({ ms, subNs: 0 });
    }
  });
});

describe("parseRfc3339 agrees with the calendar", () => {
  test("every instant of years 0000–9999, written with any offset, parses back to its millisecond (20,000 random cases)", () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_135_596_800_000, max: 253_402_214_400_000 }), fc.integer({ min: -1439, max: 1439 }), (ms, off) => {
        const local = new Date(ms + off * 60_000).toISOString().slice(0, 23);
        const a = Math.abs(off);
        const text = `${local}${off < 0 ? "-" : "+"}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
        expect(parseRfc3339(text)).toEqual({ ms, subNs: 0 });
      }),
      { numRuns: 20_000 },
    );
  });
});
