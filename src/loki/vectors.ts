// vectors: vector aggregations and binary operators at one step, as Prometheus defines them.
import { badRequest } from "../errors.ts";
import type { Binary, Matching, VectorAgg } from "./ast.ts";
import { type Labels, labelsKey } from "./labels.ts";

/** Sample is one labelled value at a step. */
export interface Sample {
  labels: Labels;
  value: number;
}

/** StepValue is what an expression yields at one step: a scalar or a vector. */
export type StepValue = { scalar: number } | { vector: Sample[] };

function groupLabels(expr: VectorAgg, labels: Labels): Labels {
  const out: Labels = {};
  if (expr.by) for (const name of expr.by) if (labels[name] !== undefined) out[name] = labels[name];
  if (expr.without) for (const [k, v] of Object.entries(labels)) if (!expr.without.includes(k)) out[k] = v;
  return out;
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const variance = (xs: number[]) => {
  const m = mean(xs);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length;
};

/** aggregate applies a vector aggregation to one step's samples. */
export function aggregate(expr: VectorAgg, samples: Sample[]): Sample[] {
  if (expr.op === "sort" || expr.op === "sort_desc") {
    const sign = expr.op === "sort" ? 1 : -1;
    return [...samples].sort((a, b) => sign * (a.value - b.value));
  }
  const groups = new Map<string, { labels: Labels; samples: Sample[] }>();
  for (const s of samples) {
    const labels = groupLabels(expr, s.labels);
    const key = labelsKey(labels);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { labels, samples: [] }));
    g.samples.push(s);
  }
  const out: Sample[] = [];
  for (const { labels, samples: group } of groups.values()) {
    const xs = group.map((s) => s.value);
    switch (expr.op) {
      case "topk":
      case "bottomk": {
        const sign = expr.op === "topk" ? -1 : 1;
        out.push(...[...group].sort((a, b) => sign * (a.value - b.value)).slice(0, Math.floor(expr.param ?? 1)));
        break;
      }
      case "sum":
        out.push({ labels, value: xs.reduce((s, x) => s + x, 0) });
        break;
      case "avg":
        out.push({ labels, value: mean(xs) });
        break;
      case "min":
        out.push({ labels, value: Math.min(...xs) });
        break;
      case "max":
        out.push({ labels, value: Math.max(...xs) });
        break;
      case "count":
        out.push({ labels, value: xs.length });
        break;
      case "stddev":
        out.push({ labels, value: Math.sqrt(variance(xs)) });
        break;
      case "stdvar":
        out.push({ labels, value: variance(xs) });
        break;
    }
  }
  return out;
}

const COMPARISONS = new Set(["==", "!=", ">", ">=", "<", "<="]);

function apply(op: string, a: number, b: number): number {
  switch (op) {
    case "+":
      return a + b;
    case "-":
      return a - b;
    case "*":
      return a * b;
    case "/":
      return a / b;
    case "%":
      return a % b;
    case "^":
      return a ** b;
    case "==":
      return Number(a === b);
    case "!=":
      return Number(a !== b);
    case ">":
      return Number(a > b);
    case ">=":
      return Number(a >= b);
    case "<":
      return Number(a < b);
    default:
      return Number(a <= b);
  }
}

/** binary applies a binary operator at one step: scalars with scalars and vectors, vectors matched on identical label sets. */
export function binary(expr: Binary, left: StepValue, right: StepValue): StepValue {
  const { op, bool } = expr;
  const compare = COMPARISONS.has(op);
  if (op === "and" || op === "or" || op === "unless") {
    if (!("vector" in left) || !("vector" in right)) throw badRequest("VALIDATION_QUERY_INVALID", `${op} needs vectors on both sides, not a number`);
    const sig = (s: Sample) => signature(s.labels, expr.matching);
    const keys = new Set(right.vector.map(sig));
    if (op === "and") return { vector: left.vector.filter((s) => keys.has(sig(s))) };
    if (op === "unless") return { vector: left.vector.filter((s) => !keys.has(sig(s))) };
    const leftKeys = new Set(left.vector.map(sig));
    return { vector: [...left.vector, ...right.vector.filter((s) => !leftKeys.has(sig(s)))] };
  }
  if ("scalar" in left && "scalar" in right) return { scalar: apply(op, left.scalar, right.scalar) };
  const one = (labels: Labels, value: number, a: number, b: number): Sample[] => {
    const r = apply(op, a, b);
    if (!compare) return [{ labels, value: r }];
    if (bool) return [{ labels, value: r }];
    return r === 1 ? [{ labels, value }] : [];
  };
  if ("scalar" in right) return { vector: (left as { vector: Sample[] }).vector.flatMap((s) => one(s.labels, s.value, s.value, right.scalar)) };
  if ("scalar" in left) return { vector: right.vector.flatMap((s) => one(s.labels, s.value, left.scalar, s.value)) };
  return { vector: matchVectors(expr, left.vector, right.vector, (l, r) => apply(op, l, r), compare && !bool) };
}

/** signature is what pairs a sample with another: its labels restricted to `on (…)`, or without `ignoring (…)`. */
function signature(labels: Labels, m: Matching | undefined): string {
  if (!m) return labelsKey(labels);
  const kept: Labels = {};
  for (const [k, v] of Object.entries(labels)) if (m.on === m.labels.includes(k)) kept[k] = v;
  return labelsKey(kept);
}

/** resultLabels are a pair's labels as Prometheus gives them: the many side's (plus included ones), else the matched ones. */
function resultLabels(many: Labels, one: Labels, m: Matching | undefined): Labels {
  if (!m) return many;
  if (m.group) {
    const out = { ...many };
    for (const name of m.include) {
      if (one[name] !== undefined) out[name] = one[name];
      else delete out[name];
    }
    return out;
  }
  const out: Labels = {};
  for (const [k, v] of Object.entries(many)) if (m.on === m.labels.includes(k)) out[k] = v;
  return out;
}

/** matchVectors pairs two vectors' samples one-to-one, or many-to-one with group_left/group_right. */
function matchVectors(expr: Binary, left: Sample[], right: Sample[], f: (l: number, r: number) => number, filter: boolean): Sample[] {
  const m = expr.matching;
  const rightMany = m?.group === "right";
  const [many, one] = rightMany ? [right, left] : [left, right];
  const ones = new Map<string, Sample>();
  for (const s of one) {
    const sig = signature(s.labels, m);
    if (ones.has(sig)) {
      throw badRequest(
        "VALIDATION_QUERY_INVALID",
        `${expr.op}: several samples on the ${rightMany ? "left" : "right"} side match the same labels; use on (…) or ignoring (…) to tell them apart`,
      );
    }
    ones.set(sig, s);
  }
  const out: Sample[] = [];
  const seen = new Set<string>();
  for (const s of many) {
    const sig = signature(s.labels, m);
    const other = ones.get(sig);
    if (!other) continue;
    if (!m?.group) {
      if (seen.has(sig))
        throw badRequest("VALIDATION_QUERY_INVALID", `${expr.op}: several samples on the left side match the same labels; add group_left to allow it`);
      seen.add(sig);
    }
    const [l, r] = rightMany ? [other.value, s.value] : [s.value, other.value];
    const value = f(l, r);
    if (filter && value !== 1) continue;
    out.push({ labels: resultLabels(s.labels, other.labels, m), value: filter ? l : value });
  }
  return out;
}
