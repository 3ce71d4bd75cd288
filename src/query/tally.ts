// tally: visits every entry a query matches within a time window, in no particular order, for counting (hits, facets).
// It reads the blocks the planner's chosen index proposes, each once however many references name it, and checks
// the whole query on each candidate entry, so counts equal what paging through POST /logs/query returns. Where no
// check is left to make on the server axis (no query, or one term its posting list answers exactly), whole blocks
// are handed over at once, to be counted from their columns and positions without reading entry by entry. On the
// client axis, the blocks' client time bounds skip blocks unread and end a read once no older block can hold what
// the counter still wants (bounds.ts).
import { LEVELS } from "../schema.ts";
import type { Block } from "../storage/format/block.ts";
import type { BlockKey, ClientBounds } from "../storage/indexes/bounds.ts";
import { EntryView } from "../storage/format/block.ts";
import { DECODED_KEPT, type EntryStore } from "../storage/entries.ts";
import { newer, type ScanRange } from "../storage/keys.ts";
import type { Query } from "./ast.ts";
import { compileBlockTest, compileQuery } from "./compile.ts";
import type { Window } from "./explore-request.ts";
import type { ReadScope } from "./page.ts";
import { planQuery, type Candidate } from "./plan.ts";
import { ascending, merged, within } from "./positions.ts";
import type { Slice } from "./slice.ts";

/** Counter takes the matching entries: one at a time, or (when it can) a block's at once. */
export interface Counter {
  /** position i of `block`, stored at server millisecond `serverMs`, matches */
  entry(block: Block, i: number, serverMs: number): void;
  /** every entry of `block` at `positions` (null: all) matches; a counter without it gets them one at a time */
  block?(block: Block, positions: readonly number[] | null, serverMs: number): void;
  /** `n` entries stored at `serverMs` match: for a counter that needs no more of them (then no block is read) */
  count?(n: number, serverMs: number): void;
  /** on the client axis: false for a block (by its client time bounds) none of whose entries the counter wants now */
  wants?(lo: number, hi: number): boolean;
  /** on the client axis: the earliest client time an entry the counter still wants can have (it never decreases) */
  reach?(): number;
  /**
   * on the client axis: takes at once the matching entries at `positions` (null: all) of a block whose client times
   * [lo, hi] all lie inside the window; false: hand them over one at a time
   */
  within?(block: Block, positions: readonly number[] | null, lo: number, hi: number): boolean;
  /** a block's entries handed over from its last position down: a counter keeping the newest fills first and skips the rest */
  newestFirst?: boolean;
}

/** serverRange is the server-time range a window reads: itself on the server axis, everything within retention on the client axis. */
export function serverRange(scope: ReadScope, window: Window): ScanRange {
  return window.axis === "server" ? { fromMs: Math.max(window.fromMs, scope.floorMs), toMs: window.toMs } : { fromMs: scope.floorMs, toMs: 8.64e15 };
}

/** answersExactly tells whether the chosen candidate's positions are exactly the query's matches (nothing to check). */
function answersExactly(query: Query, chosen: Candidate): boolean {
  if (query.terms.length === 0) return true;
  if (query.terms.length !== 1) return false;
  const t = query.terms[0];
  if (t.kind === "enum" && t.facet === "level" && t.op === "=") return chosen.index === "level";
  if (t.kind === "tag" && t.op === "=" && t.values.every((v) => v.kind === "string")) return chosen.index === "tag";
  return false;
}

/** tally hands `counter` each entry of the scope that matches `query` inside `window`, once, pausing whenever `slice` is used up. */
export async function tally(store: EntryStore, scope: ReadScope, query: Query, window: Window, slice: Slice, counter: Counter): Promise<void> {
  const plan = planQuery(store, scope, query, serverRange(scope, window));
  const { fromMs, toMs } = plan.range;
  const client = window.axis === "client";
  const exact = answersExactly(query, plan.chosen);
  const accept = exact ? undefined : compileQuery(query, scope.env);
  const mayHold = exact ? undefined : compileBlockTest(query, scope.env);
  const wholeBlocks = !client && !accept && (counter.block !== undefined || counter.count !== undefined);
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
    counter.entry(block, i, ms);
  };
  const accepted = (block: Block, at: readonly number[] | null): number[] => {
    const out: number[] = [];
    probe.entry.b = block;
    for (let i = 0, n = at ? at.length : block.size; i < n; i++) {
      probe.entry.i = at ? at[i] : i;
      if (accept!(probe)) out.push(probe.entry.i);
    }
    return out;
  };
  let read = 0;
  let groupMs = Number.NaN;
  // one millisecond's blocks: a block named twice is read once
  let group = new Map<string, { positions: readonly number[] | null; bounds: ClientBounds | undefined }>();
  const flush = () => {
    for (const [firstId, { positions, bounds }] of group) {
      if (wholeBlocks && counter.count) {
        const n = positions ? positions.length : store.blockSize(scope, groupMs, firstId);
        if (n) counter.count(n, groupMs);
        continue;
      }
      // read at once and let go before the next read: the block's bytes sit in a buffer lmdb-js reuses
      const block = store.readBlockTransient(scope, groupMs, firstId, read++ < DECODED_KEPT); // more would only be copied to evict the first
      if (!block) continue;
      const at = within(positions, mayHold?.(block)); // the narrowing's undefined: any entry may match
      if (at !== null && at.length === 0) continue;
      probe.serverMs = groupMs;
      if (wholeBlocks) counter.block!(block, at, groupMs);
      else if (inside(bounds) && counter.within!(block, accept ? accepted(block, at) : at, bounds![0], bounds![1])) continue;
      else if (counter.newestFirst) {
        if (at === null) for (let i = block.size - 1; i >= 0; i--) take(block, i, groupMs);
        else for (let k = at.length - 1; k >= 0; k--) take(block, at[k], groupMs);
      } else if (at === null) for (let i = 0; i < block.size; i++) take(block, i, groupMs);
      else for (const i of at) take(block, i, groupMs);
    }
  };
  const inside = (b: ClientBounds | undefined) => client && counter.within !== undefined && b !== undefined && b[0] >= window.fromMs && b[1] < window.toMs;
  // on the client axis every block within retention may hold the window: its stored bounds tell which cannot, unread;
  // and since references come newest first, a read stops past the oldest block that reaches the latest client time
  // still wanted (the window's start, or later as the counter fills)
  let atLeast = Number.NEGATIVE_INFINITY;
  let oldest: BlockKey | null | undefined;
  let visited = 0;
  let nextLook = 1;
  const past = (ref: BlockKey) => {
    const wanted = Math.max(window.fromMs, counter.reach?.() ?? Number.NEGATIVE_INFINITY);
    // looked up again at doubling counts of blocks visited, each look reading at most 4× as many keys: a read that
    // cannot stop early pays a constant share for trying
    if (++visited >= nextLook && (wanted > atLeast || oldest === undefined)) {
      atLeast = wanted;
      oldest = store.oldestReaching(scope, atLeast, 4 * visited);
      nextLook = 2 * visited;
    }
    return oldest === null || (oldest !== undefined && newer(oldest, ref));
  };
  const unwanted = ([lo, hi]: ClientBounds) => hi < window.fromMs || lo >= window.toMs || counter.wants?.(lo, hi) === false;
  for (const ref of plan.chosen.open()) {
    if (slice.due()) await slice.pause();
    if (ref.ms < fromMs || ref.ms >= toMs) continue;
    // the millisecond before is counted first: what the counter then still wants may leave this block unread
    if (ref.ms !== groupMs) {
      flush();
      groupMs = ref.ms;
      group = new Map();
    }
    const had = group.get(ref.firstId);
    if (had && had.positions === null) continue;
    let bounds = had?.bounds;
    if (client && !had) {
      if (past(ref)) break; // this block and every one after it hold only earlier client times
      bounds = store.clientBounds(scope, ref.ms, ref.firstId);
      if (bounds && unwanted(bounds)) continue;
    }
    // kept ascending: a counter taking a block newest first walks its positions from the last
    const positions = ref.positions === null ? null : ascending(ref.positions);
    group.set(ref.firstId, { positions: had && positions ? merged(had.positions!, positions) : positions, bounds });
  }
  flush();
}

/**
 * tallyLevels counts every entry of the scope within a server-time window by level, from the level posting lists
 * alone (each entry has one level): `add` gets a level, a count and the server millisecond of the block they are in.
 */
export async function tallyLevels(
  store: EntryStore,
  scope: ReadScope,
  window: Window,
  slice: Slice,
  add: (level: string, n: number, serverMs: number) => void,
) {
  const range = serverRange(scope, window);
  for (const level of LEVELS) {
    const seen = new Set<string>(); // a block being stored is named twice (held and stored) for a moment: count it once
    for (const ref of store.postingSizes(scope, "l", level, range)) {
      if (slice.due()) await slice.pause();
      const name = `${ref.ms}\u0000${ref.firstId}`;
      if (seen.has(name)) continue;
      seen.add(name);
      const n = ref.n ?? store.blockSize(scope, ref.ms, ref.firstId);
      if (n) add(level, n, ref.ms);
    }
  }
}
