// time: RFC 3339 parsing at full precision and the UTC millisecond rendering used on the wire.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const MIN_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const MAX_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/** Instant is a parsed RFC 3339 time: whole epoch milliseconds plus nanoseconds within that millisecond. */
export interface Instant {
  ms: number;
  subNs: number;
}

/** parseRfc3339 returns the instant of an RFC 3339 date-time with a zone, or null when it is not one. */
export function parseRfc3339(text: string): Instant | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const year = +m[1], month = +m[2], day = +m[3], hour = +m[4], minute = +m[5], second = +m[6];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 60) return null; // 60: RFC 3339 allows a leap second
  let offsetMin = 0;
  if (!m[8]) {
    const oh = +m[10];
    const om = +m[11];
    if (oh > 23 || om > 59) return null;
    offsetMin = (m[9] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const fraction = m[7] === undefined ? "000000000" : m[7].padEnd(9, "0");
  const seconds = ((daysFromCivil(year, month, day) * 24 + hour) * 60 + minute - offsetMin) * 60 + second;
  const ms = seconds * 1000 + +fraction.slice(0, 3);
  if (ms < MIN_MS || ms > MAX_MS) return null; // outside 0000–9999 it cannot be rendered as RFC 3339
  return { ms, subNs: +fraction.slice(3) };
}

/** daysFromCivil counts days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** lowerBoundMs is the first whole millisecond at or after the instant (an inclusive `from`). */
export const lowerBoundMs = (t: Instant): number => (t.subNs > 0 ? t.ms + 1 : t.ms);

/** upperBoundMs is the first whole millisecond not before the instant (an exclusive `to`). */
export const upperBoundMs = (t: Instant): number => (t.subNs > 0 ? t.ms + 1 : t.ms);

/** formatMs renders epoch milliseconds as UTC RFC 3339 with milliseconds: 2026-11-22T10:00:00.123Z. */
export function formatMs(ms: number): string {
  return new Date(ms).toISOString();
}
