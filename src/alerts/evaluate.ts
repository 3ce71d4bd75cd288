// evaluate: one evaluation of a rule at instant t (contract §16): per group, the aggregate over the entries whose
// axis timestamp lies in [t − delay − window, t − delay). It visits entries through tally, the counting core of
// POST /logs/hits, and groups them with the same readers, so a count equals what /logs/hits returns.
import { createHash } from "node:crypto";
import type { ObjectFacet } from "../query/ast.ts";
import type { Window } from "../query/explore-request.ts";
import { groupReader, parseGroupField, type GroupField } from "../query/group-field.ts";
import { byTotalThenText, countHits, MAX_GROUPS } from "../query/hits.ts";
import { walk } from "../query/match.ts";
import type { ReadScope } from "../query/page.ts";
import { parseQuery } from "../query/parser.ts";
import type { Slice } from "../query/slice.ts";
import { tally } from "../query/tally.ts";
import { ApiError } from "../errors.ts";
import { type Block, EntryView } from "../storage/format/block.ts";
import type { EntryStore } from "../storage/entries.ts";
import { durationMs, type Rule } from "./rules.ts";
import type { WindowCounts } from "./window-counts.ts";

/** MAX_ALERT_GROUPS is the most groups one evaluation may have; one more puts the rule in state error. */
export const MAX_ALERT_GROUPS = 1000;
const SETTLE_WAIT_MS = 5000;
/** a window of more cells than this is counted whole at each evaluation: its coarse cells would be too many to keep */
const MAX_WINDOW_CELLS = 64 * 4096;

export type Group = Record<string, string | null> | null;

/** Sample is a matching entry shown in a notice. */
export interface Sample {
  id: string;
  server_timestamp: string;
  level: string;
  action: string;
  message: string | null;
}

/** GroupValue is one group's value at an evaluation (null: a numeric aggregate with no number to take). */
export interface GroupValue {
  group: Group;
  fingerprint: string;
  value: number | null;
  samples: Sample[];
}

export type Evaluation = { ok: true; window: Window; groups: GroupValue[] } | { ok: false; window: Window; reason: string };

/** windowAt is the window a rule reads when evaluated at `atMs`. */
export function windowAt(rule: Rule, atMs: number): Window {
  const toMs = atMs - durationMs(rule.delay)!;
  return { axis: rule.axis, fromMs: toMs - durationMs(rule.window)!, toMs };
}

/** fingerprint names a (rule, group) pair: stable across restarts, as Alertmanager's is. */
export const fingerprint = (ruleId: string, group: Group): string =>
  createHash("sha256")
    .update(`${ruleId}\u0000${JSON.stringify(group)}`)
    .digest("hex")
    .slice(0, 16);

interface Acc {
  values: (string | null)[];
  count: number;
  numbers: number[];
  distinct: Set<string>;
}

const tooManyReason = `more than ${MAX_ALERT_GROUPS} groups in one evaluation: group by fields with fewer values, or narrow the query`;

/**
 * evaluateRule computes a rule's value per group at `atMs`, waiting on the server axis for writes still under way in the
 * window. A count by at most one field is POST /logs/hits' own count (countHits); other rules visit the entries through
 * tally, the pass countHits is built on. Samples are read apart (samples.ts), only for the groups a notice announces.
 * With `counts`, such a count on the server axis adds up the cells earlier evaluations counted (window-counts.ts).
 */
export async function evaluateRule(store: EntryStore, scope: ReadScope, rule: Rule, atMs: number, slice: Slice, counts?: WindowCounts): Promise<Evaluation> {
  const window = windowAt(rule, atMs);
  if (window.axis === "server") await writesSettled(store, scope, window.toMs);
  const fields = rule.group_by.map((f) => parseGroupField(f, "group_by"));
  if (rule.aggregate.fn === "count" && fields.length <= 1) {
    const gridMs = gcd(gcd(durationMs(rule.every)!, durationMs(rule.window)!), durationMs(rule.delay)!);
    if (counts && window.axis === "server" && (window.toMs - window.fromMs) / gridMs <= MAX_WINDOW_CELLS)
      return countByCells(counts, scope, rule, window, gridMs, atMs, fields[0], slice);
    return countByHits(store, scope, rule, window, fields[0], slice);
  }
  const readers = fields.map((f) => groupReader(f, scope.env));
  const measure = measureOf(rule, scope);
  const groups = new Map<string, Acc>();
  let tooMany = false;
  await tally(store, scope, parseQuery(rule.query), window, slice, {
    entry(block, i) {
      if (tooMany) return;
      for (const combo of combinations(readers.map((r) => [...r(block, i)]))) {
        const key = JSON.stringify(combo);
        let acc = groups.get(key);
        if (!acc) {
          if (groups.size >= MAX_ALERT_GROUPS) {
            tooMany = true;
            return;
          }
          groups.set(key, (acc = { values: combo, count: 0, numbers: [], distinct: new Set() }));
        }
        acc.count++;
        measure?.(acc, block, i);
      }
    },
  });
  if (tooMany) return { ok: false, window, reason: tooManyReason };
  if (fields.length === 0 && groups.size === 0) groups.set("[]", { values: [], count: 0, numbers: [], distinct: new Set() }); // "fewer than N" needs a 0
  const out: GroupValue[] = [];
  for (const acc of groups.values()) {
    const group = fields.length === 0 ? null : Object.fromEntries(fields.map((f, k) => [f.name, acc.values[k]]));
    out.push({ group, fingerprint: fingerprint(rule.id, group), value: aggregateOf(rule, acc), samples: [] });
  }
  return { ok: true, window, groups: out };
}

/** countByHits is a count rule's evaluation by POST /logs/hits' engine: one bucket as wide as the window (two when it straddles). */
async function countByHits(store: EntryStore, scope: ReadScope, rule: Rule, window: Window, field: GroupField | undefined, slice: Slice): Promise<Evaluation> {
  const stepMs = window.toMs - window.fromMs;
  let hits: Awaited<ReturnType<typeof countHits>>;
  try {
    hits = await countHits(store, scope, { query: parseQuery(rule.query), window, stepMs, groupBy: field, limit: MAX_GROUPS }, slice);
  } catch (e) {
    if (e instanceof ApiError && e.details?.field === "groupBy") return { ok: false, window, reason: tooManyReason }; // past hits' own bound
    throw e;
  }
  if (!field) return { ok: true, window, groups: [{ group: null, fingerprint: fingerprint(rule.id, null), value: hits.total, samples: [] }] };
  if (hits.series.length > MAX_ALERT_GROUPS) return { ok: false, window, reason: tooManyReason };
  return { ok: true, window, groups: hits.series.map((x) => ({ group: x.group, fingerprint: fingerprint(rule.id, x.group), value: x.total, samples: [] })) };
}

/** countByCells is countByHits' answer added up from the cells of the rule's query and group field (window-counts.ts). */
async function countByCells(
  counts: WindowCounts,
  scope: ReadScope,
  rule: Rule,
  window: Window,
  gridMs: number,
  atMs: number,
  field: GroupField | undefined,
  slice: Slice,
): Promise<Evaluation> {
  const periodMs = durationMs(rule.every)!;
  let got: Awaited<ReturnType<WindowCounts["count"]>>;
  try {
    got = await counts.count({ scope, query: parseQuery(rule.query), queryText: rule.query, field, window, gridMs, atMs, periodMs }, slice);
  } catch (e) {
    if (e instanceof ApiError && e.details?.field === "groupBy") return { ok: false, window, reason: tooManyReason }; // past hits' own bound
    throw e;
  }
  if (!field) return { ok: true, window, groups: [{ group: null, fingerprint: fingerprint(rule.id, null), value: got.total, samples: [] }] };
  if (got.groups.size > MAX_GROUPS) return { ok: false, window, reason: tooManyReason }; // where hits would have stopped
  const series = [...got.groups].filter(([, n]) => n > 0).map(([text, total]) => ({ text, total }));
  if (series.length > MAX_ALERT_GROUPS) return { ok: false, window, reason: tooManyReason };
  series.sort(byTotalThenText);
  return {
    ok: true,
    window,
    groups: series.map(({ text, total }) => {
      const group = { [field.name]: text };
      return { group, fingerprint: fingerprint(rule.id, group), value: total, samples: [] };
    }),
  };
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** combinations is every choice of one value per field; a field without a value is the null group. */
export function combinations(values: string[][]): (string | null)[][] {
  let out: (string | null)[][] = [[]];
  for (const vs of values) {
    const choices: (string | null)[] = vs.length === 0 ? [null] : vs;
    out = out.flatMap((prefix) => choices.map((v) => [...prefix, v]));
  }
  return out;
}

/** measureOf reads the aggregate's field of an entry into its group's accumulator (undefined for count). */
function measureOf(rule: Rule, scope: ReadScope): ((acc: Acc, block: Block, i: number) => void) | undefined {
  const { fn, field } = rule.aggregate;
  if (fn === "count" || field === null) return undefined;
  const f: GroupField = parseGroupField(field, "aggregate.field");
  if (fn === "count_distinct") {
    const read = groupReader(f, scope.env);
    return (acc, block, i) => {
      for (const v of read(block, i)) acc.distinct.add(v);
    };
  }
  if (f.kind !== "path") return undefined;
  const facet: ObjectFacet = f.facet;
  const path = f.path;
  const view = new EntryView(undefined as unknown as Block, 0);
  return (acc, block, i) => {
    view.b = block;
    view.i = i;
    const v = walk(view, facet, path);
    if (typeof v === "number" && Number.isFinite(v)) acc.numbers.push(v); // numeric aggregates take number values only
  };
}

function aggregateOf(rule: Rule, acc: Acc): number | null {
  const xs = acc.numbers;
  switch (rule.aggregate.fn) {
    case "count":
      return acc.count;
    case "count_distinct":
      return acc.distinct.size;
    case "sum":
      return xs.reduce((s, x) => s + x, 0);
    case "avg":
      return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null;
    case "min":
      return xs.length ? xs.reduce((a, b) => Math.min(a, b)) : null;
    case "max":
      return xs.length ? xs.reduce((a, b) => Math.max(a, b)) : null;
    default: {
      if (!xs.length) return null;
      const p = Number(rule.aggregate.fn.slice(1));
      const sorted = [...xs].sort((a, b) => a - b);
      return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]; // nearest rank
    }
  }
}

/** writesSettled waits until no write under way can still be stored with a server time below `toMs`. */
async function writesSettled(store: EntryStore, scope: ReadScope, toMs: number): Promise<void> {
  const deadline = performance.now() + SETTLE_WAIT_MS;
  for (;;) {
    const low = store.inFlight.lowest(scope);
    if (low === undefined || low.ms >= toMs || performance.now() > deadline) return;
    await Bun.sleep(2);
  }
}
