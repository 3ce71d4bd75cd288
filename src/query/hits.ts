// hits: counts of matching entries over aligned time buckets, optionally per group (contract §10, POST /logs/hits).
import { badRequest } from "../errors.ts";
import type { EntryStore } from "../storage/entries.ts";
import { formatMs } from "../time.ts";
import type { Query } from "./ast.ts";
import { fieldError, type Window } from "./explore-request.ts";
import { countBlockGroups, groupReader, type GroupField } from "./group-field.ts";
import type { ReadScope } from "./page.ts";
import type { Slice } from "./slice.ts";
import { tally, tallyLevels } from "./tally.ts";

/** MAX_BUCKETS is the most buckets one answer holds. */
export const MAX_BUCKETS = 1000;
/** MAX_GROUPS is the most distinct groups a grouped count keeps; one more is a 400. */
export const MAX_GROUPS = 10_000;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DEFAULT_STEPS = ["1s", "5s", "10s", "30s", "1m", "5m", "10m", "30m", "1h", "3h", "6h", "12h", "1d", "7d"];
const DEFAULT_BUCKETS = 120;
const MIN_INSTANT_MS = -62_167_219_200_000; // 0000-01-01T00:00:00Z: bucket starts must print as RFC 3339
const MAX_INSTANT_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/** HitsRequest is a validated hits request. */
export interface HitsRequest {
  query: Query;
  window: Window;
  stepMs: number;
  groupBy?: GroupField;
  limit: number;
}

/** bucketCount is the number of aligned buckets of `stepMs` that [fromMs, toMs) touches. */
export const bucketCount = (fromMs: number, toMs: number, stepMs: number): number => Math.floor((toMs - 1) / stepMs) - Math.floor(fromMs / stepMs) + 1;

/** parseStep reads `<integer><unit>` (ms s m h d), or picks the default step for the window; too many buckets is a 400. */
export function parseStep(value: unknown, fromMs: number, toMs: number): number {
  let stepMs: number;
  if (value === undefined) {
    const fits = DEFAULT_STEPS.map(stepOf).find((s) => bucketCount(fromMs, toMs, s) <= DEFAULT_BUCKETS);
    stepMs = fits ?? stepOf("7d");
  } else {
    const m = typeof value === "string" ? /^([0-9]{1,15})(ms|s|m|h|d)$/.exec(value) : null;
    stepMs = m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : 0;
    if (!(stepMs > 0)) throw fieldError("step", `step must be a whole number above 0 and a unit (ms, s, m, h or d), e.g. "5m" (got ${JSON.stringify(value)})`);
  }
  const n = bucketCount(fromMs, toMs, stepMs);
  const firstStart = Math.floor(fromMs / stepMs) * stepMs;
  if (firstStart < MIN_INSTANT_MS || firstStart + (n - 1) * stepMs > MAX_INSTANT_MS) {
    throw fieldError("step", `step ${JSON.stringify(value)} puts a bucket's start outside the years 0000–9999; use a smaller step`);
  }
  if (n > MAX_BUCKETS) {
    throw badRequest(
      "VALIDATION_QUERY_CONSTRAINT",
      `from, to and step make ${n} buckets; at most ${MAX_BUCKETS} are allowed: use a larger step or a shorter range`,
      {
        field: "step",
      },
    );
  }
  return stepMs;
}

function stepOf(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text)!;
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

interface Series {
  group: Record<string, string | null> | null;
  counts: number[];
  total: number;
}

/** countHits counts the matching entries of the window per bucket (and per group), exactly. */
export async function countHits(store: EntryStore, scope: ReadScope, req: HitsRequest, slice: Slice) {
  const { window, stepMs, groupBy } = req;
  const first = Math.floor(window.fromMs / stepMs);
  const n = bucketCount(window.fromMs, window.toMs, stepMs);
  const client = window.axis === "client";
  const bucketOf = (block: { clientMs(i: number): number }, i: number, ms: number) => Math.floor((client ? block.clientMs(i) : ms) / stepMs) - first;
  const totals = new Array<number>(n).fill(0);
  let total = 0;
  const groups = new Map<string, number[]>();
  let nullGroup: number[] | undefined;
  const read = groupBy ? groupReader(groupBy, scope.env) : undefined;
  const add = (k: number, text: string | null, count: number) => {
    if (text === null) {
      nullGroup ??= new Array<number>(n).fill(0);
      nullGroup[k] += count;
      return;
    }
    let counts = groups.get(text);
    if (!counts) {
      if (groups.size + (nullGroup ? 1 : 0) >= MAX_GROUPS) throw tooManyGroups(groupBy!.name);
      groups.set(text, (counts = new Array<number>(n).fill(0)));
    }
    counts[k] += count;
  };
  const countOnly = (n: number, ms: number) => {
    const k = Math.floor(ms / stepMs) - first;
    totals[k] += n;
    total += n;
  };
  // by level without a query, on the server axis, the level posting lists count every entry once: no block is read
  if (groupBy?.kind === "level" && req.query.terms.length === 0 && !client) {
    await tallyLevels(store, scope, window, slice, (level, n, ms) => {
      countOnly(n, ms);
      add(Math.floor(ms / stepMs) - first, level, n);
    });
  } else
    await tally(store, scope, req.query, window, slice, {
      ...(groupBy ? {} : { count: countOnly }),
      entry(block, i, ms) {
        const k = bucketOf(block, i, ms);
        totals[k]++;
        total++;
        if (!read) return;
        const values = read(block, i);
        if (values.length === 0) add(k, null, 1);
        else for (const v of values) add(k, v, 1);
      },
      block(block, positions, ms) {
        const k = Math.floor(ms / stepMs) - first; // the server axis: one block, one millisecond, one bucket
        if (groupBy && !countBlockGroups(groupBy, scope.env, block, positions, (text, count) => add(k, text, count))) {
          if (positions) for (const i of positions) this.entry(block, i, ms);
          else for (let i = 0; i < block.size; i++) this.entry(block, i, ms);
          return;
        }
        const count = positions ? positions.length : block.size;
        totals[k] += count;
        total += count;
      },
    });
  if (groupBy && groups.size + (nullGroup ? 1 : 0) > MAX_GROUPS) throw tooManyGroups(groupBy.name);
  const buckets = Array.from({ length: n }, (_, k) => formatMs((first + k) * stepMs));
  const head = { from: formatMs(window.fromMs), to: formatMs(window.toMs), step_ms: stepMs, axis: window.axis, buckets, total };
  if (!groupBy) return { ...head, series: [{ group: null, counts: totals, total }], other: null };
  const name = groupBy.name;
  const all: (Series & { text: string | null })[] = [...groups].map(([text, counts]) => ({ group: { [name]: text }, counts, total: sum(counts), text }));
  if (nullGroup) all.push({ group: { [name]: null }, counts: nullGroup, total: sum(nullGroup), text: null });
  all.sort(byTotalThenText);
  const kept = all.slice(0, req.limit);
  const rest = all.slice(req.limit);
  const other =
    rest.length === 0
      ? null
      : {
          counts: Array.from({ length: n }, (_, k) => rest.reduce((s, g) => s + g.counts[k], 0)),
          total: rest.reduce((s, g) => s + g.total, 0),
        };
  return { ...head, series: kept.map(({ group, counts, total }) => ({ group, counts, total })), other };
}

/** byTotalThenText orders groups by total descending, then text form ascending, the null group after every text. */
export function byTotalThenText(a: { total: number; text: string | null }, b: { total: number; text: string | null }): number {
  if (a.total !== b.total) return b.total - a.total;
  if (a.text === b.text) return 0;
  if (a.text === null) return 1;
  if (b.text === null) return -1;
  return a.text < b.text ? -1 : 1;
}

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

const tooManyGroups = (field: string) =>
  badRequest(
    "VALIDATION_QUERY_CONSTRAINT",
    `${field} has more than ${MAX_GROUPS} distinct values in this range: group by a field with fewer values, or narrow the query or the range`,
    { field: "groupBy", max_groups: MAX_GROUPS },
  );
