// needle-blocks: numbered blocks of entries for the filter index's tests (needle-index, needle-merge): block b is
// written at t0 + b ms, and entry i of it holds metadata.order "o-<b>-<i>" and the message "ref <b>x<i>".
import type { IdGenerator } from "../../src/ids.ts";
import type { Entry, EntryStore } from "../../src/storage/entries.ts";
import type { BlockRef, Tenant } from "../../src/storage/keys.ts";

export interface BlockWriter {
  store: EntryStore;
  tenant: Tenant;
  ids: IdGenerator;
  t0: number;
  action: string;
}

/** writeNumberedBlocks writes blocks [from, from + count) of `size` entries each, and tells their keys. */
export async function writeNumberedBlocks(w: BlockWriter, count: number, from = 0, size = 10): Promise<BlockRef[]> {
  const refs: BlockRef[] = [];
  for (let b = from; b < from + count; b++) {
    const { ms, ids } = w.ids.next(size, w.t0 + b);
    const entries = ids.map(
      (id, i): Entry => ({
        id,
        level: "info",
        action: w.action,
        message: `ref ${b}x${i}`,
        tags: [],
        clientMs: ms,
        actor: null,
        target: null,
        context: null,
        metadata: { order: `o-${b}-${i}` },
      }),
    );
    await w.store.append(w.tenant, ms, entries, -1);
    refs.push({ ms, firstId: ids[0], positions: null });
  }
  return refs;
}
