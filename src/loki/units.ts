// units: durations and byte sizes as LogQL writes them (`1h30m`, `250ms`, `2KiB`), and Go string literals.
import { badRequest } from "../errors.ts";

const NS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9, d: 86400e9, w: 604800e9, y: 31536000e9 };
const DURATION = /^(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d|w|y))+$/;

/** durationNs reads a duration such as `5m` or `1h30m` in nanoseconds; undefined when it is none. */
export function durationNs(text: string): bigint | undefined {
  const negative = text.startsWith("-");
  const body = negative ? text.slice(1) : text;
  if (!DURATION.test(body)) return undefined;
  let total = 0n;
  for (const m of body.matchAll(/(\d+)(?:\.(\d+))?(ns|us|µs|ms|s|m|h|d|w|y)/g)) {
    const unit = BigInt(NS[m[3]]);
    total += BigInt(m[1]) * unit;
    if (m[2]) total += BigInt(Math.round(Number(`0.${m[2]}`) * Number(unit)));
  }
  return negative ? -total : total;
}

const BYTES: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  pb: 1e15,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
  pib: 1024 ** 5,
};

/** bytesOf reads a byte size such as `2KB` or `1.5MiB`; undefined when it is none. */
export function bytesOf(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(text.trim());
  if (!m) return undefined;
  const unit = m[2].toLowerCase() || "b";
  const k = BYTES[unit] ?? BYTES[`${unit}b`];
  return k === undefined ? undefined : Number(m[1]) * k;
}

/** goString unquotes a LogQL string: "…" with Go escapes, or `…` taken as written. */
export function goString(quoted: string): string {
  if (quoted.startsWith("`")) return quoted.slice(1, -1);
  try {
    return JSON.parse(quoted.replace(/\\'/g, "'").replace(/\\x([0-9a-fA-F]{2})/g, "\\u00$1")) as string;
  } catch {
    throw badRequest("VALIDATION_QUERY_SYNTAX", `cannot read the string ${quoted}: use JSON-style escapes (\\" \\\\ \\n) or a backquoted raw string`);
  }
}
