// ascending: entries oldest first, strictly after one entry and up to another: what a live tail catches up with and
// what context shows after an entry. Blocks of one millisecond may interleave in id, so each millisecond's entries
// are merged and ordered by id before any is given out.
import type { Block } from "../storage/format/block.ts";
import type { EntryStore, Row } from "../storage/entries.ts";
import { compareKeys, type Key } from "../storage/inflight.ts";
import type { Tenant } from "../storage/keys.ts";
import { PAUSE, type Pause } from "./execute.ts";

/** TOP is a key above every entry's. */
export const TOP: Key = { ms: 8.64e15, id: "" };

/**
 * ascendingRows yields the entries that `accept` takes with a key in (after, upTo], oldest first; between blocks it
 * yields PAUSE once `due` says the caller's slice is used up.
 */
export function* ascendingRows(
  store: Pick<EntryStore, "blocksAscending" | "readBlock">,
  tenant: Tenant,
  after: Key,
  upTo: Key,
  accept: (row: Row) => boolean,
  due: () => boolean = () => false,
): Generator<Row | Pause> {
  let groupMs = Number.NaN;
  let blocks: Block[] = [];
  const flush = function* (): Generator<Row> {
    const rows: Row[] = [];
    for (const block of blocks) {
      for (let i = 0; i < block.size; i++) {
        const key = { ms: groupMs, id: block.id(i) };
        if (compareKeys(key, after) <= 0 || compareKeys(key, upTo) > 0) continue;
        const row = { serverMs: groupMs, entry: block.entry(i) };
        if (accept(row)) rows.push(row);
      }
    }
    if (blocks.length > 1) rows.sort((a, b) => (a.entry.id < b.entry.id ? -1 : 1));
    yield* rows;
  };
  for (const ref of store.blocksAscending(tenant, after.ms, Math.min(upTo.ms + 1, TOP.ms))) {
    if (due()) yield PAUSE;
    if (ref.ms !== groupMs) {
      yield* flush();
      groupMs = ref.ms;
      blocks = [];
    }
    const block = store.readBlock(tenant, ref.ms, ref.firstId);
    if (block) blocks.push(block);
  }
  yield* flush();
}
