// execute: turns block references, newest first, into the entries of a read in the read order (server time descending,
// then id descending), checking each with the query's predicate. Blocks of one millisecond are read one after another
// when their id ranges do not overlap (a process draws each write's ids as one ascending run); blocks that interleave
// in id are merged before they are ordered.
import { EntryView, type Block } from "../storage/format/block.ts";
import type { EntryStore, Row } from "../storage/entries.ts";
import type { BlockRef, ScanRange, Tenant } from "../storage/keys.ts";
import { ascending, merged, within } from "./positions.ts";

/** BlockReader is what the executor reads blocks through. */
export type BlockReader = Pick<EntryStore, "readBlock" | "readBlockTransient">;

/** PAUSE is what rowsSliced yields when its slice is used up: the reader lets the event loop run, then asks for more. */
export const PAUSE = Symbol("pause");
export type Pause = typeof PAUSE;
const never = () => false;
const always = () => true;
/** a block narrowed to at most this many entries is read in place and its accepted entries copied out, not the whole block */
const DETACH_MAX = 64;

/** Narrow gives the ascending positions of a block's entries that may be accepted; undefined: all of them. */
export type Narrow = (block: Block) => readonly number[] | undefined;
const all: Narrow = () => undefined;

/**
 * narrowSpan narrows only the entries from the reference's first position to its last: a stripe its filter named is
 * half a block of 1,000, and a test such as a path value's search then opens that stripe's frame alone.
 */
function narrowSpan(narrow: Narrow, block: Block, ms: number, positions: readonly number[] | null): readonly number[] | undefined {
  if (positions === null || positions.length === 0) return narrow(block);
  const from = positions[0];
  const span = positions[positions.length - 1] - from + 1;
  if (span === block.size) return narrow(block);
  const found = narrow(block.slice(ms, from, span));
  return found && found.map((p) => p + from);
}

/** Walk is what a read of block references walks through: where it reads, and which entries it keeps. */
export interface Walk {
  store: BlockReader;
  tenant: Tenant;
  /** its time range and cursor: entries strictly after the cursor, in the range */
  range: ScanRange;
  /** the entries kept (compileQuery); it sees a view reused for the next entry, and must not keep it. Default: all */
  accept?: (row: Row) => boolean;
  /** the positions of a block whose entries `accept` may take (compileBlockTest); the others are not read */
  narrow?: Narrow;
}

/**
 * rows turns block references (newest first) into the entries the walk keeps, in the read order — serverMs
 * descending, then id descending — strictly after the range's cursor. References to deleted blocks are skipped.
 */
export function rows(w: Walk, refs: Iterable<BlockRef>): Generator<Row> {
  return walk(w, refs, never) as Generator<Row>;
}

/**
 * rowsSliced is rows for a reader that works in time slices: between blocks it yields PAUSE once `due` says the
 * slice is used up, and the reader lets the event loop run before it asks for more. The rows are those of rows().
 */
export function rowsSliced(w: Walk, refs: Iterable<BlockRef>, due: () => boolean): Generator<Row | Pause> {
  return walk(w, refs, due);
}

function* walk(w: Walk, refs: Iterable<BlockRef>, due: () => boolean): Generator<Row | Pause> {
  const { store, tenant, range } = w;
  const accept = w.accept ?? always;
  const narrow = w.narrow ?? all;
  const { after } = range;
  const probe = { serverMs: 0, entry: new EntryView(undefined as unknown as Block, 0) };
  let groupMs = NaN;
  let group = new Map<string, readonly number[] | null>();
  // a block narrowed to no entry is let go unread past its test, and one narrowed to a few is read in place (`transient`):
  // only a block with many entries to check is copied out
  const read = (
    firstId: string,
    positions: readonly number[] | null,
    inPlace: boolean,
  ): { block?: Block; at: readonly number[] | null; transient?: boolean } => {
    if (narrow === all) return { block: store.readBlock(tenant, groupMs, firstId), at: within(positions, undefined) };
    const peek = store.readBlockTransient(tenant, groupMs, firstId);
    if (!peek) return { at: [] };
    const at = within(positions, narrowSpan(narrow, peek, groupMs, positions));
    if (at !== null && at.length === 0) return { at };
    if (inPlace && at !== null && at.length <= DETACH_MAX) return { block: peek, at, transient: true };
    return { block: store.readBlock(tenant, groupMs, firstId), at };
  };
  const flush = function* (): Generator<Row | Pause> {
    if (group.size === 0) return;
    const cursorHere = after !== undefined && groupMs === after.ms;
    probe.serverMs = groupMs;
    const test = (block: Block, i: number) => {
      probe.entry.b = block;
      probe.entry.i = i;
      return !(cursorHere && block.id(i) >= after.id) && accept(probe);
    };
    // one block: ids ascend with positions, so walk them backwards without building a list
    const one = function* (firstId: string, positions: readonly number[] | null): Generator<Row> {
      const { block, at, transient } = read(firstId, positions, true);
      if (!block) return;
      if (transient) {
        // the next read reuses the block's buffer: copy the accepted entries out before yielding any
        const accepted: Row[] = [];
        for (let k = at!.length - 1; k >= 0; k--) if (test(block, at![k])) accepted.push({ serverMs: groupMs, entry: block.detach(at![k]) });
        yield* accepted;
        return;
      }
      for (let k = (at ? at.length : block.size) - 1; k >= 0; k--) {
        const i = at ? at[k] : k;
        if (test(block, i)) yield { serverMs: groupMs, entry: block.entry(i) };
      }
    };
    if (group.size === 1) {
      const [[firstId, positions]] = group;
      yield* one(firstId, positions);
      return;
    }
    // blocks apart in id are read newest first, each only once the page still wants entries
    const apart = apartInId(store, tenant, groupMs, [...group.keys()]);
    if (apart) {
      for (const [k, firstId] of apart.entries()) {
        if (k > 0 && due()) yield PAUSE;
        yield* one(firstId, group.get(firstId)!);
      }
      return;
    }
    // blocks are copies of the stored bytes (lmdb-js get), so those read stay valid across a pause
    const candidates: [Block, number][] = [];
    for (const [firstId, positions] of group) {
      if (due()) yield PAUSE;
      const { block, at } = read(firstId, positions, false);
      if (!block) continue;
      if (at === null) for (let i = 0; i < block.size; i++) candidates.push([block, i]);
      else for (const i of at) candidates.push([block, i]);
    }
    candidates.sort(([a, i], [b, j]) => (a.id(i) < b.id(j) ? 1 : a.id(i) > b.id(j) ? -1 : 0));
    for (let k = 0; k < candidates.length; k++) {
      if ((k & 1023) === 1023 && due()) yield PAUSE; // about as often as between blocks
      const [block, i] = candidates[k];
      if (test(block, i)) yield { serverMs: groupMs, entry: block.entry(i) };
    }
  };
  for (const ref of refs) {
    if (due()) yield PAUSE; // a reference in range costs a block read: one clock reading is cheap beside it
    if (ref.ms < range.fromMs || ref.ms >= range.toMs || (after && ref.ms > after.ms)) continue;
    if (ref.ms !== groupMs) {
      yield* flush();
      groupMs = ref.ms;
      group = new Map();
    }
    const had = group.get(ref.firstId);
    if (had === null) continue; // the whole block is in already
    if (ref.positions === null) group.set(ref.firstId, null);
    else group.set(ref.firstId, had === undefined ? ascending(ref.positions) : merged(had, ascending(ref.positions)));
  }
  yield* flush();
}

/** scan yields every entry of a range in the read order. */
export function scan(store: BlockReader & Pick<EntryStore, "blocks">, tenant: Tenant, range: ScanRange): Generator<Row> {
  return rows({ store, tenant, range }, store.blocks(tenant, range));
}

/**
 * apartInId orders a millisecond's blocks by first id, descending, when no two of them overlap in id (each block's last
 * id below the first id of the block above it), so reading them in that order gives the read order; else undefined.
 * A block's last id is read in place, without copying the block out.
 */
function apartInId(store: BlockReader, tenant: Tenant, ms: number, firstIds: string[]): string[] | undefined {
  const order = firstIds.sort().reverse();
  for (let k = 1; k < order.length; k++) {
    const below = store.readBlockTransient(tenant, ms, order[k]);
    if (below && below.id(below.size - 1) >= order[k - 1]) return undefined;
  }
  return order;
}
