// metric: LogQL metric queries evaluated at each step over the entries a range needs, with Prometheus range semantics:
// at step t a range covers client times in (t − offset − range, t − offset] (contract §17).
import type { ReadScope } from "../query/page.ts";
import type { Slice } from "../query/slice.ts";
import type { EntryStore } from "../storage/entries.ts";
import type { MetricExpr, RangeAgg } from "./ast.ts";
import { type Labels, labelsKey } from "./labels.ts";
import { Cells } from "./cells.ts";
import { ColumnCounter } from "./column-count.ts";
import { floorDiv } from "./params.ts";
import { compileStages, lookupLabel, type Processed, setSampleError } from "./pipeline.ts";
import { COLUMN_LABELS, selectByColumns, selectEntries } from "./select.ts";
import { bytesOf, durationNs } from "./units.ts";
import { aggregate, binary, type Sample, type StepValue } from "./vectors.ts";

export type { Sample, StepValue } from "./vectors.ts";

/** ADDITIVE range aggregations: the sum of a group's series is the aggregation of the group's entries. */
const ADDITIVE: ReadonlySet<string> = new Set(["count_over_time", "rate", "bytes_over_time", "bytes_rate", "sum_over_time"]);

/** Evaluation is where a metric query reads its entries and at which steps (ns) it is evaluated. */
export interface Evaluation {
  store: EntryStore;
  scope: ReadScope;
  slice: Slice;
  steps: bigint[];
}

/** evaluate yields the expression's value at every step; `carry` names structured-metadata labels an enclosing `by` groups on. */
export async function evaluate(expr: MetricExpr, ev: Evaluation, carry: ReadonlySet<string> = new Set()): Promise<StepValue[]> {
  switch (expr.kind) {
    case "number":
      return ev.steps.map(() => ({ scalar: expr.value }));
    case "vector":
      return ev.steps.map(() => ({ vector: [{ labels: {}, value: expr.value }] }));
    case "range":
      return (await rangeAggregate(expr, ev, carry)).map((vector) => ({ vector }));
    case "aggregate": {
      const { inner: innerExpr } = expr;
      // a sum by (…) of an additive range aggregation sums per group as it reads: no series a stream is kept
      const early = expr.op === "sum" && expr.by && innerExpr.kind === "range" && ADDITIVE.has(innerExpr.op) && !innerExpr.by && !innerExpr.without;
      const source: MetricExpr = early ? { ...innerExpr, by: expr.by } : innerExpr;
      const inner = await evaluate(source, ev, expr.by ? new Set([...carry, ...expr.by]) : carry);
      return inner.map((v) => ({ vector: aggregate(expr, "vector" in v ? v.vector : [{ labels: {}, value: v.scalar }]) }));
    }
    case "binary": {
      const left = await evaluate(expr.left, ev, carry);
      const right = await evaluate(expr.right, ev, carry);
      return left.map((l, k) => binary(expr, l, right[k]));
    }
  }
}

interface Series {
  labels: Labels;
  ms: number[];
  ids: string[];
  values: number[];
}

const utf8 = new TextEncoder();

/** sampleOf reads an entry's sample value: 1 a line, its bytes, or an unwrapped label; undefined when it has none. */
function sampler(expr: RangeAgg): (out: Processed) => number | undefined {
  const { unwrap } = expr;
  if (!unwrap) return expr.op === "bytes_over_time" || expr.op === "bytes_rate" ? (out) => utf8.encode(out.line).length : () => 1;
  const after = compileStages(unwrap.after);
  return (out) => {
    const text = lookupLabel(out, unwrap.name);
    const value = text === undefined ? undefined : unwrap.conv === "duration" ? secondsOf(text) : unwrap.conv === "bytes" ? bytesOf(text) : numberOf(text);
    if (value === undefined) setSampleError(out, `cannot read label ${unwrap.name} (${JSON.stringify(text ?? null)}) as a ${unwrap.conv}`);
    if (!after(out)) return undefined;
    return value; // an entry whose label cannot be read gives no sample
  };
}

const numberOf = (text: string) => (text.trim() === "" || Number.isNaN(Number(text)) ? undefined : Number(text));
const secondsOf = (text: string) => {
  const ns = durationNs(text.trim());
  return ns === undefined ? undefined : Number(ns) / 1e9;
};

/** seriesLabels are a sample's labels: stream and parsed labels (with `carry` metadata), grouped when the range aggregation groups. */
function seriesLabels(expr: RangeAgg, out: Processed, carry: ReadonlySet<string>): Labels {
  const labels: Labels = { ...out.stream, ...out.parsed };
  for (const name of carry) if (out.metadata[name] !== undefined && labels[name] === undefined) labels[name] = out.metadata[name];
  if (expr.unwrap) delete labels[expr.unwrap.name];
  if (expr.by) {
    const grouped: Labels = {};
    for (const name of expr.by) {
      const v = labels[name] ?? out.metadata[name];
      if (v !== undefined) grouped[name] = v;
    }
    return grouped;
  }
  if (expr.without) for (const name of expr.without) delete labels[name];
  return labels;
}

/**
 * fromColumns tells whether a count or rate grouped by column labels (early, under sum by) can be read from the
 * blocks' columns alone: its selector and groups name only COLUMN_LABELS and its pipeline only drops or keeps
 * `__error__` (Grafana's logs volume), which without a parser changes nothing.
 */
function fromColumns(expr: RangeAgg): boolean {
  if ((expr.op !== "count_over_time" && expr.op !== "rate") || expr.unwrap || !expr.by) return false;
  const errorLabel = (name: string) => name === "__error__" || name === "__error_details__";
  if (!expr.log.stages.every((s) => (s.kind === "drop" || s.kind === "keep") && s.items.every((i) => errorLabel(i.name)))) return false;
  if (expr.log.stages.some((s) => s.kind === "keep")) return false; // keep __error__ would drop the grouped labels
  return expr.log.selector.every((m) => COLUMN_LABELS.has(m.name)) && expr.by.every((name) => COLUMN_LABELS.has(name));
}

/** rangeAggregate reads the entries every step's range needs once, then finds each range by binary search. */
async function rangeAggregate(expr: RangeAgg, ev: Evaluation, carry: ReadonlySet<string>): Promise<Sample[][]> {
  const { steps } = ev;
  const lowest = floorDiv(steps[0] - expr.offsetNs - expr.rangeNs, 1_000_000n);
  const highest = floorDiv(steps[steps.length - 1] - expr.offsetNs, 1_000_000n);
  const series = new Map<string, Series>();
  const sample = sampler(expr);
  const add = (labels: Labels, ms: number, id: string, value: number) => {
    const key = labelsKey(labels);
    let s = series.get(key);
    if (!s) series.set(key, (s = { labels, ms: [], ids: [], values: [] }));
    s.ms.push(ms);
    s.ids.push(id);
    s.values.push(value);
  };
  const window = { fromMs: Number(lowest) + 1, toMs: Number(highest) + 1 };
  if (fromColumns(expr)) return countByColumns(expr, ev, window);
  await selectEntries(ev.store, ev.scope, expr.log, window, ev.slice, ({ entry, out }) => {
    const value = sample(out);
    if (value !== undefined) add(seriesLabels(expr, out, carry), entry.clientMs, entry.id, value);
  });
  const sorted = [...series.values()].map((s) => {
    const order = s.ms.map((_, i) => i).sort((a, b) => s.ms[a] - s.ms[b] || (s.ids[a] < s.ids[b] ? -1 : 1));
    return { labels: s.labels, ms: order.map((i) => s.ms[i]), values: order.map((i) => s.values[i]) };
  });
  const seconds = Number(expr.rangeNs) / 1e9;
  return steps.map((t) => {
    const lo = Number(floorDiv(t - expr.offsetNs - expr.rangeNs, 1_000_000n));
    const hi = Number(floorDiv(t - expr.offsetNs, 1_000_000n));
    if (expr.op === "absent_over_time") return absent(expr, sorted, lo, hi);
    const out: Sample[] = [];
    for (const s of sorted) {
      const a = upTo(s.ms, lo);
      const b = upTo(s.ms, hi);
      if (b === a) continue;
      out.push({ labels: s.labels, value: overRange(expr, s.values.slice(a, b), seconds) });
    }
    return out;
  });
}

/** countByColumns is a count or rate that fromColumns allows, counted per cell of the steps' ranges (cells.ts). */
async function countByColumns(expr: RangeAgg, ev: Evaluation, window: { fromMs: number; toMs: number }): Promise<Sample[][]> {
  const cells = new Cells(ev.steps, expr.offsetNs, expr.rangeNs);
  const counter = new ColumnCounter(cells, expr.log.selector, expr.by!, ev.scope.env);
  await selectByColumns(ev.store, ev.scope, expr.log.selector, window, ev.slice, counter);
  const series = counter.sums();
  const seconds = Number(expr.rangeNs) / 1e9;
  return ev.steps.map((_, k) => {
    const out: Sample[] = [];
    for (const s of series) {
      const n = cells.countAt(s.counts, k);
      if (n > 0) out.push({ labels: s.labels, value: expr.op === "rate" ? n / seconds : n });
    }
    return out;
  });
}

/** overRange applies a range aggregation to the values of one range, oldest first (never empty). */
function overRange(expr: RangeAgg, xs: number[], seconds: number): number {
  const sum = () => xs.reduce((s, x) => s + x, 0);
  const variance = () => {
    const mean = sum() / xs.length;
    return xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length;
  };
  switch (expr.op) {
    case "count_over_time":
      return xs.length;
    case "rate":
      return (expr.unwrap ? sum() : xs.length) / seconds;
    case "bytes_over_time":
    case "sum_over_time":
      return sum();
    case "bytes_rate":
      return sum() / seconds;
    case "avg_over_time":
      return sum() / xs.length;
    case "min_over_time":
      return Math.min(...xs);
    case "max_over_time":
      return Math.max(...xs);
    case "first_over_time":
      return xs[0];
    case "last_over_time":
      return xs[xs.length - 1];
    case "stddev_over_time":
      return Math.sqrt(variance());
    case "stdvar_over_time":
      return variance();
    case "quantile_over_time":
      return quantile(expr.param ?? 0.5, xs);
    default:
      return Number.NaN;
  }
}

/** quantile is Prometheus's φ-quantile with linear interpolation; φ outside [0, 1] gives ±Inf. */
function quantile(q: number, values: number[]): number {
  if (q < 0) return Number.NEGATIVE_INFINITY;
  if (q > 1) return Number.POSITIVE_INFINITY;
  const xs = [...values].sort((a, b) => a - b);
  const rank = q * (xs.length - 1);
  const lower = Math.floor(rank);
  const upper = Math.min(lower + 1, xs.length - 1);
  return xs[lower] + (xs[upper] - xs[lower]) * (rank - lower);
}

/** absent is absent_over_time at one step: 1 with the selector's equality labels when no entry is in range. */
function absent(expr: RangeAgg, sorted: { ms: number[] }[], lo: number, hi: number): Sample[] {
  if (sorted.some((s) => upTo(s.ms, hi) - upTo(s.ms, lo) > 0)) return [];
  const labels: Labels = {};
  for (const m of expr.log.selector) if (m.op === "=") labels[m.name] = m.value;
  return [{ labels, value: 1 }];
}

/** upTo is how many of the ascending `ms` are ≤ x. */
function upTo(ms: number[], x: number): number {
  let lo = 0;
  let hi = ms.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ms[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
