// ascending: entries oldest first, strictly after one entry and up to another: what a live tail catches up with and
// what context shows after an entry. Blocks of one millisecond may interleave in id: a millisecond's blocks are read
// one after another while each one's ids stay below the next one's first, and the rest are merged and ordered by id.
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
  let firstIds: string[] = [];
  // the entries of some blocks of the millisecond that `accept` takes in (after, upTo], in id order
  const ordered = (blocks: Block[]): Row[] => {
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
    return rows;
  };
  const flush = function* (): Generator<Row | Pause> {
    for (let k = 0; k < firstIds.length; k++) {
      if (k > 0 && due()) yield PAUSE;
      const block = store.readBlock(tenant, groupMs, firstIds[k]);
      if (!block) continue;
      const next = firstIds[k + 1];
      if (next !== undefined && block.id(block.size - 1) >= next) {
        // it interleaves in id with the next block: the rest of the millisecond is merged
        const rest = firstIds.slice(k + 1).flatMap((id) => store.readBlock(tenant, groupMs, id) ?? []);
        yield* ordered([block, ...rest]);
        return;
      }
      yield* ordered([block]);
    }
  };
  for (const ref of store.blocksAscending(tenant, after.ms, Math.min(upTo.ms + 1, TOP.ms))) {
    if (due()) yield PAUSE;
    if (ref.ms !== groupMs) {
      yield* flush();
      groupMs = ref.ms;
      firstIds = [];
    }
    firstIds.push(ref.firstId);
  }
  yield* flush();
}
