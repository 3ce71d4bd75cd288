// metric: LogQL metric queries evaluated at each step over the entries a range needs, with Prometheus range semantics:
// at step t a range covers client times in (t − offset − range, t − offset] (contract §17).
import type { ReadScope } from "../query/page.ts";
import type { Slice } from "../query/slice.ts";
import type { EntryStore } from "../storage/entries.ts";
import type { MetricExpr, RangeAgg } from "./ast.ts";
import { type Labels, labelsKey } from "./labels.ts";
import { floorDiv } from "./params.ts";
import { selectEntries } from "./select.ts";
import { aggregate, binary, type Sample, type StepValue } from "./vectors.ts";

export type { Sample, StepValue } from "./vectors.ts";

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
      const inner = await evaluate(expr.inner, ev, expr.by ? new Set([...carry, ...expr.by]) : carry);
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
  bytes: number[];
}

const utf8 = new TextEncoder();

/** rangeAggregate reads the entries every step's range needs once, then counts each range by binary search. */
async function rangeAggregate(expr: RangeAgg, ev: Evaluation, carry: ReadonlySet<string>): Promise<Sample[][]> {
  const { steps } = ev;
  const lowest = floorDiv(steps[0] - expr.offsetNs - expr.rangeNs, 1_000_000n);
  const highest = floorDiv(steps[steps.length - 1] - expr.offsetNs, 1_000_000n);
  const series = new Map<string, Series>();
  const wantsBytes = expr.op === "bytes_over_time" || expr.op === "bytes_rate";
  await selectEntries(ev.store, ev.scope, expr.log, { fromMs: Number(lowest) + 1, toMs: Number(highest) + 1 }, ev.slice, ({ entry, out }) => {
    const labels: Labels = { ...out.stream, ...out.parsed };
    for (const name of carry) if (out.metadata[name] !== undefined && labels[name] === undefined) labels[name] = out.metadata[name];
    const key = labelsKey(labels);
    let s = series.get(key);
    if (!s) series.set(key, (s = { labels, ms: [], bytes: [] }));
    s.ms.push(entry.clientMs);
    s.bytes.push(wantsBytes ? utf8.encode(out.line).length : 0);
  });
  const sorted = [...series.values()].map((s) => {
    const order = s.ms.map((_, i) => i).sort((a, b) => s.ms[a] - s.ms[b]);
    const ms = order.map((i) => s.ms[i]);
    const prefix = [0];
    for (const i of order) prefix.push(prefix[prefix.length - 1] + s.bytes[i]);
    return { labels: s.labels, ms, prefix };
  });
  const seconds = Number(expr.rangeNs) / 1e9;
  return steps.map((t) => {
    const lo = Number(floorDiv(t - expr.offsetNs - expr.rangeNs, 1_000_000n));
    const hi = Number(floorDiv(t - expr.offsetNs, 1_000_000n));
    const out: Sample[] = [];
    for (const s of sorted) {
      const a = upTo(s.ms, lo);
      const b = upTo(s.ms, hi);
      const count = b - a;
      if (count === 0) continue;
      const bytes = s.prefix[b] - s.prefix[a];
      const value = expr.op === "count_over_time" ? count : expr.op === "rate" ? count / seconds : expr.op === "bytes_over_time" ? bytes : bytes / seconds;
      if (expr.op !== "absent_over_time") out.push({ labels: s.labels, value });
    }
    if (expr.op === "absent_over_time") return absent(expr, sorted, lo, hi);
    return out;
  });
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
