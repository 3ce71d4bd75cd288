// select: the entries a LogQL selector and pipeline keep within a client-time window. The selector's level, environment
// and action matchers are pushed down onto the native query language (contract §6), so its planner picks the index;
// every candidate is then checked exactly by the compiled selector and pipeline.
import { LEVELS } from "../schema.ts";
import type { Query } from "../query/ast.ts";
import type { ReadScope } from "../query/page.ts";
import { parseQuery } from "../query/parser.ts";
import type { Slice } from "../query/slice.ts";
import { type Counter, tally } from "../query/tally.ts";
import type { Block } from "../storage/format/block.ts";
import type { EntryStore } from "../storage/entries.ts";
import type { LogExpr, Matcher } from "./ast.ts";
import { FIXED_LABELS, type Labels, type LokiEntry, leafNames, streamLabels } from "./labels.ts";
import { type Compiled, compileLog, matcherTest, type Processed, PUSHED_LABELS } from "./pipeline.ts";
import { lokiEntryAt } from "./shape-labels.ts";

/** ClientWindow is [fromMs, toMs) on the client axis, in whole milliseconds. */
export interface ClientWindow {
  fromMs: number;
  toMs: number;
}

const quote = (v: string) => `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

/**
 * pushDown is the native query whose matches include every entry the selector can select; null when the selector
 * selects nothing in this scope (another environment, no level allowed).
 */
export function pushDown(selector: Matcher[], env: string): Query | null {
  const terms: string[] = [];
  for (const m of selector) {
    if (m.name === "level" || m.name === "detected_level") {
      const test = matcherTest(m);
      const allowed = LEVELS.filter((l) => test(l));
      if (allowed.length === 0) return null;
      if (allowed.length < LEVELS.length) terms.push(`level=${allowed.join(",")}`);
    } else if (m.name === "environment" && !matcherTest(m)(env)) return null;
    else if (m.name === "action" && m.op === "=" && m.value !== "" && m.value.length < 1000) terms.push(`action=${quote(m.value)}`); // case-insensitive: a superset
  }
  return parseQuery(terms.join(" "));
}

/** Selected is an entry a log query keeps: as stored (through Loki) and after its pipeline. */
export interface Selected {
  entry: LokiEntry;
  out: Processed;
}

/** selectEntries hands `visit` each entry of the window that the log query keeps, in no particular order. */
export async function selectEntries(
  store: EntryStore,
  scope: ReadScope,
  log: LogExpr,
  window: ClientWindow,
  slice: Slice,
  visit: (s: Selected) => void,
  compiled: Compiled = compileLog(log, PUSHED_LABELS),
  /** a cheap test on (client ms, id) before an entry is decoded: false skips it (a log query's kept set is full) */
  admit?: (clientMs: number, id: string) => boolean,
  /** tests on a block's client time bounds before it is read (tally.ts Counter: wants, reach) */
  blocks?: Pick<Counter, "wants" | "reach" | "newestFirst">,
): Promise<void> {
  const query = pushDown(log.selector, scope.env);
  if (query === null || window.fromMs >= window.toMs) return;
  await tally(store, scope, query, { axis: "client", ...window }, slice, {
    ...blocks,
    entry(block, i) {
      if (admit && !admit(block.clientMs(i), block.id(i))) return;
      const message = block.message(i); // the line, when there is one: line filters first, before the entry is decoded
      if (message !== null && !compiled.keepsLine(message)) return;
      const entry = lokiEntryAt(block, i, message, scope.env);
      const out = compiled.run(entry);
      if (out) visit({ entry, out });
    },
  });
}

/** COLUMN_LABELS are the stream labels a block's columns give without decoding an entry's objects. */
export const COLUMN_LABELS: ReadonlySet<string> = new Set(["environment", "level", "detected_level", "action"]);

/** BlockCounter counts entries from a block's columns: one at a time, or a block's at once when it can. */
export interface BlockCounter {
  entry(block: Block, i: number): void;
  /** the entries at `positions` (null: all) of a block whose client times all lie in [lo, hi], inside the window; false: one at a time */
  block(block: Block, positions: readonly number[] | null, lo: number, hi: number): boolean;
}

/**
 * selectByColumns hands `counter` the entries of the window that the push-down of a selector naming COLUMN_LABELS
 * only finds, decoding nothing: the counter checks the selector on the columns (counting by level needs no more).
 */
export async function selectByColumns(store: EntryStore, scope: ReadScope, selector: Matcher[], window: ClientWindow, slice: Slice, counter: BlockCounter) {
  const query = pushDown(selector, scope.env);
  if (query === null || window.fromMs >= window.toMs) return;
  await tally(store, scope, query, { axis: "client", ...window }, slice, {
    entry: (block, i) => counter.entry(block, i),
    within: (block, positions, lo, hi) => counter.block(block, positions, lo, hi),
  });
}

/** selectStreams hands `visit` the stream labels of each entry of the window the selector selects (labels, series). */
export async function selectStreams(
  store: EntryStore,
  scope: ReadScope,
  selector: Matcher[],
  window: ClientWindow,
  slice: Slice,
  visit: (stream: Labels) => void,
) {
  const query = pushDown(selector, scope.env);
  if (query === null || window.fromMs >= window.toMs) return;
  const tests = selector.map((m) => ({ name: m.name, test: matcherTest(m) }));
  await tally(store, scope, query, { axis: "client", ...window }, slice, {
    entry(block, i) {
      const stream = streamLabels(block.entry(i), scope.env); // read at once: the block's buffer is reused after
      if (tests.every((t) => t.test(stream[t.name] ?? ""))) visit(stream);
    },
  });
}

/**
 * selectLabelNames adds to `names` the stream label names of the entries a bare selector selects: when the push-down
 * answers every matcher, only the context's leaf names are walked, no label set built.
 */
export async function selectLabelNames(store: EntryStore, scope: ReadScope, selector: Matcher[], window: ClientWindow, slice: Slice, names: Set<string>) {
  if (selector.some((m) => !PUSHED_LABELS.has(m.name))) {
    return selectStreams(store, scope, selector, window, slice, (stream) => {
      for (const name in stream) names.add(name);
    });
  }
  const query = pushDown(selector, scope.env);
  if (query === null || window.fromMs >= window.toMs) return;
  let any = false;
  await tally(store, scope, query, { axis: "client", ...window }, slice, {
    entry(block, i) {
      any = true;
      leafNames(block.entry(i).context, "", names); // read at once: the block's buffer is reused after
    },
  });
  if (any) for (const name of FIXED_LABELS) names.add(name);
}
