// time: RFC 3339 parsing at full precision and the UTC millisecond rendering used on the wire.

const MIN_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const MAX_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/** Instant is a parsed RFC 3339 time: whole epoch milliseconds plus nanoseconds within that millisecond. */
export interface Instant {
  ms: number;
  subNs: number;
}

/** parseRfc3339 returns the instant of an RFC 3339 date-time with a zone, or null when it is not one. */
export function parseRfc3339(text: string): Instant | null {
  // fixed positions: YYYY-MM-DDTHH:MM:SS, then an optional fraction of 1–9 digits, then Z or ±hh:mm
  const n = text.length;
  if (n < 20 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return null;
  const t = text.charCodeAt(10);
  if (t !== 84 && t !== 116) return null; // T or t
  const year = digits(text, 0, 4),
    month = digits(text, 5, 2),
    day = digits(text, 8, 2);
  const hour = digits(text, 11, 2),
    minute = digits(text, 14, 2),
    second = digits(text, 17, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return null;
  let at = 19;
  let fractionMs = 0; // the first 3 fraction digits
  let subNs = 0; // the next 6
  if (text.charCodeAt(at) === 46) {
    const start = ++at;
    while (at < n && isDigit(text.charCodeAt(at))) at++;
    const len = at - start;
    if (len === 0 || len > 9) return null;
    for (let k = 0; k < 9; k++) {
      const d = k < len ? text.charCodeAt(start + k) - 48 : 0;
      if (k < 3) fractionMs = fractionMs * 10 + d;
      else subNs = subNs * 10 + d;
    }
  }
  let offsetMin = 0;
  const z = text.charCodeAt(at);
  if (z === 90 || z === 122) {
    if (at + 1 !== n) return null; // Z or z ends the text
  } else if (z === 43 || z === 45) {
    if (at + 6 !== n || text.charCodeAt(at + 3) !== 58) return null;
    const oh = digits(text, at + 1, 2);
    const om = digits(text, at + 4, 2);
    if (oh < 0 || om < 0 || oh > 23 || om > 59) return null;
    offsetMin = (z === 45 ? -1 : 1) * (oh * 60 + om);
  } else return null;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 60) return null; // 60: RFC 3339 allows a leap second
  const seconds = ((daysFromCivil(year, month, day) * 24 + hour) * 60 + minute - offsetMin) * 60 + second;
  const ms = seconds * 1000 + fractionMs;
  if (ms < MIN_MS || ms > MAX_MS) return null; // outside 0000–9999 it cannot be rendered as RFC 3339
  return { ms, subNs };
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** digits reads `count` decimal digits at `at`, or -1 when any is not a digit. */
function digits(text: string, at: number, count: number): number {
  let v = 0;
  for (let i = at; i < at + count; i++) {
    const c = text.charCodeAt(i);
    if (!isDigit(c)) return -1;
    v = v * 10 + (c - 48);
  }
  return v;
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

let lastMs = NaN;
let lastText = "";

/** formatMsRepeated is formatMs for a value asked for many times in a row, as the server millisecond of a turn's answers is: it keeps the last one. */
export function formatMsRepeated(ms: number): string {
  if (ms !== lastMs) {
    lastText = formatMs(ms);
    lastMs = ms;
  }
  return lastText;
}

/** isTimeZone tells whether Intl knows a zone name (SLUICE_SYSLOG_TZ is checked at start). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
