// tally: visits every entry a query matches within a time window, in no particular order, for counting (hits, facets).
// It reads the blocks the planner's chosen index proposes, each once however many references name it, and checks
// the whole query on each candidate entry, so counts equal what paging through POST /logs/query returns.
import type { Block } from "../storage/block.ts";
import { EntryView } from "../storage/block.ts";
import type { EntryStore } from "../storage/entries.ts";
import type { ScanRange } from "../storage/keys.ts";
import type { Query } from "./ast.ts";
import { compileBlockTest, compileQuery } from "./compile.ts";
import type { Window } from "./explore-request.ts";
import type { ReadScope } from "./page.ts";
import { planQuery } from "./plan.ts";
import type { Slice } from "./slice.ts";

/** Visit sees one matching entry: position i of `block`, stored at server millisecond `serverMs`. */
export type Visit = (block: Block, i: number, serverMs: number) => void;

/** serverRange is the server-time range a window reads: itself on the server axis, everything within retention on the client axis. */
export function serverRange(scope: ReadScope, window: Window): ScanRange {
  return window.axis === "server" ? { fromMs: Math.max(window.fromMs, scope.floorMs), toMs: window.toMs } : { fromMs: scope.floorMs, toMs: 8.64e15 };
}

/** tally calls `visit` once for each entry of the scope that matches `query` inside `window`, pausing whenever `slice` is used up. */
export async function tally(store: EntryStore, scope: ReadScope, query: Query, window: Window, slice: Slice, visit: Visit): Promise<void> {
  const plan = planQuery(store, scope, query, serverRange(scope, window));
  const { fromMs, toMs } = plan.range;
  const accept = query.terms.length === 0 ? undefined : compileQuery(query, scope.env);
  const mayHold = compileBlockTest(query);
  const client = window.axis === "client";
  const probe = { serverMs: 0, entry: new EntryView(undefined as unknown as Block, 0) };
  const take = (block: Block, i: number, ms: number) => {
    if (client) {
      const c = block.clientMs(i);
      if (!(c >= window.fromMs && c < window.toMs)) return;
    }
    if (accept) {
      probe.entry.b = block;
      probe.entry.i = i;
      if (!accept(probe)) return;
    }
    visit(block, i, ms);
  };
  let groupMs = Number.NaN;
  let group = new Map<string, Set<number> | null>(); // one millisecond's blocks: a block named twice is read once
  const flush = () => {
    for (const [firstId, positions] of group) {
      const block = store.readBlock(scope, groupMs, firstId);
      if (!block || (mayHold && !mayHold(block))) continue;
      probe.serverMs = groupMs;
      if (positions === null) for (let i = 0; i < block.size; i++) take(block, i, groupMs);
      else for (const i of positions) take(block, i, groupMs);
    }
  };
  for (const ref of plan.chosen.open()) {
    if (slice.due()) await slice.pause();
    if (ref.ms < fromMs || ref.ms >= toMs) continue;
    if (ref.ms !== groupMs) {
      flush();
      groupMs = ref.ms;
      group = new Map();
    }
    const had = group.get(ref.firstId);
    if (had === null) continue;
    if (ref.positions === null) group.set(ref.firstId, null);
    else if (had) for (const p of ref.positions) had.add(p);
    else group.set(ref.firstId, new Set(ref.positions));
  }
  flush();
}
