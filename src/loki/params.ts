// params: times, steps, limits and directions as Loki reads them from a request (contract §17).
import { badRequest } from "../errors.ts";
import { parseRfc3339 } from "../time.ts";
import type { Direction } from "./logs.ts";
import { durationNs } from "./units.ts";

/** MAX_POINTS is the most points a range query may ask for. */
export const MAX_POINTS = 11_000;

const bad = (name: string, message: string) => badRequest("VALIDATION_FAILED", message, { errors: [{ field: name, message, log_index: null }] });

/** timeNs reads a time: a number with `.` is seconds, an integer of at most 10 digits seconds, a longer one nanoseconds, else RFC 3339. */
export function timeNs(name: string, text: string): bigint {
  const t = text.trim();
  const decimal = /^(-?)(\d*)\.(\d*)$/.exec(t);
  if (decimal && (decimal[2] !== "" || decimal[3] !== "")) {
    const ns = BigInt(decimal[2] || "0") * 1_000_000_000n + BigInt((decimal[3] || "0").padEnd(9, "0").slice(0, 9));
    return decimal[1] ? -ns : ns;
  }
  const integer = /^-?(\d+)$/.exec(t);
  if (integer) return integer[1].length <= 10 ? BigInt(t) * 1_000_000_000n : BigInt(t);
  const instant = parseRfc3339(t);
  if (instant) return BigInt(instant.ms) * 1_000_000n + BigInt(instant.subNs);
  throw bad(
    name,
    `cannot parse ${JSON.stringify(text)} as a time: send Unix seconds (1700000000 or 1700000000.5), nanoseconds (1700000000000000000) or RFC 3339`,
  );
}

/** Params reads a request's parameters by name. */
export type Params = { get(name: string): string | null; getAll(name: string): string[] };

const given = (p: Params, name: string): string | undefined => {
  const v = p.get(name);
  return v === null || v === "" ? undefined : v;
};

/** rangeOf reads start and end (or since), defaulting to the last `defaultNs` before now. */
export function rangeOf(p: Params, nowMs: number, defaultNs: bigint): { startNs: bigint; endNs: bigint } {
  const end = given(p, "end");
  const endNs = end === undefined ? BigInt(nowMs) * 1_000_000n : timeNs("end", end);
  const start = given(p, "start");
  const since = given(p, "since");
  let startNs = endNs - defaultNs;
  if (start !== undefined) startNs = timeNs("start", start);
  else if (since !== undefined) startNs = endNs - durationOf("since", since);
  if (endNs < startNs) throw bad("end", "end is before start; send an end at or after start");
  return { startNs, endNs };
}

/** durationOf reads a duration (`5m`, `250ms`) or a number of seconds. */
export function durationOf(name: string, text: string): bigint {
  const d = durationNs(text.trim());
  if (d !== undefined) return d;
  if (/^\d+(\.\d+)?$/.test(text.trim())) return BigInt(Math.round(Number(text) * 1e9));
  throw bad(name, `cannot parse ${JSON.stringify(text)} as a duration: send e.g. 15s, 1m or a number of seconds`);
}

/** stepOf reads `step`, by default the range over 250 points and at least 1 s (as Loki); more than MAX_POINTS points is a 400. */
export function stepOf(p: Params, startNs: bigint, endNs: bigint): bigint {
  const text = given(p, "step");
  const step = text === undefined ? bigMax(((endNs - startNs) / 250n / 1_000_000_000n) * 1_000_000_000n, 1_000_000_000n) : durationOf("step", text);
  if (step <= 0n) throw bad("step", "step must be above 0: send e.g. step=15s");
  const points = (endNs - startNs) / step + 1n;
  if (points > BigInt(MAX_POINTS)) {
    throw bad("step", `start, end and step make ${points} points; at most ${MAX_POINTS} are allowed: use a larger step or a shorter range`);
  }
  return step;
}

const bigMax = (a: bigint, b: bigint) => (a > b ? a : b);

/** MAX_LIMIT is the most entries one log query returns (Loki's own default is 5,000). */
export const MAX_LIMIT = 50_000;

/** limitOf reads `limit` (default 100, at most MAX_LIMIT). */
export function limitOf(p: Params): number {
  const text = given(p, "limit");
  if (text === undefined) return 100;
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1 || Number(text) > MAX_LIMIT) {
    throw bad("limit", `limit must be a whole number from 1 to ${MAX_LIMIT} (got ${JSON.stringify(text)}); page with start or end for more`);
  }
  return Number(text);
}

/** directionOf reads `direction` (default backward), any case. */
export function directionOf(p: Params): Direction {
  const text = given(p, "direction")?.toLowerCase() ?? "backward";
  if (text !== "forward" && text !== "backward") throw bad("direction", `direction must be forward or backward (got ${JSON.stringify(text)})`);
  return text;
}

/** msWindow turns [startNs, endNs) into whole client milliseconds: ms·10⁶ ≥ start and < end. */
export function msWindow(startNs: bigint, endNs: bigint): { fromMs: number; toMs: number } {
  return { fromMs: Number(ceilDiv(startNs, 1_000_000n)), toMs: Number(ceilDiv(endNs, 1_000_000n)) };
}

/** ceilDiv divides rounding up, for either sign. */
export const ceilDiv = (a: bigint, b: bigint): bigint => {
  const q = a / b;
  return q * b < a ? q + 1n : q;
};

/** floorDiv divides rounding down, for either sign. */
export const floorDiv = (a: bigint, b: bigint): bigint => {
  const q = a / b;
  return q * b > a ? q - 1n : q;
};
