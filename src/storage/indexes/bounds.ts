// bounds: the earliest and latest client timestamp of each block, in the `bounds` database, so that a read on the
// client time axis skips the blocks that hold none of its window without reading them.
//
// Key layout: [workspaceId, environment, serverMs, firstId] (a block's key, entries.ts) → two float64s, the block's
// smallest and largest clientMs; and [0, workspaceId, environment, hi, serverMs, firstId] → nothing, the blocks by their
// largest clientMs (a number first: apart from every block key), so that a read newest first learns which is the
// oldest block still reaching a client time. Put in the block's own transaction, deleted with it.
// Blocks merged into a part (merge.ts) share the part's bounds, stored at the part's first block with the key of its
// last block after them: a merged block's bounds are those of the part around it (a superset of its own).
import type { Database } from "lmdb";
import type { Environment } from "../../schema.ts";

/** ClientBounds are a block's smallest and largest client timestamp, epoch ms. */
export type ClientBounds = [lo: number, hi: number];

/** clientBoundsOf is the smallest and largest of a block's client timestamps. */
export function clientBoundsOf(count: number, clientMs: (i: number) => number): ClientBounds {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < count; i++) {
    const c = clientMs(i);
    if (c < lo) lo = c;
    if (c > hi) hi = c;
  }
  return [lo, hi];
}

const packed = ([lo, hi]: ClientBounds): Uint8Array => new Uint8Array(new Float64Array([lo, hi]).buffer);
const NOTHING = new Uint8Array(0);
const BY_HI = 0;

// read through one scratch pair: a value's own ArrayBuffer (for a DataView) costs Bun more than the read
const scratch = new Float64Array(2);
const scratchBytes = new Uint8Array(scratch.buffer);
const unpacked = (bytes: Uint8Array): ClientBounds | undefined => {
  if (bytes.length < 16) return undefined;
  scratchBytes.set(bytes.subarray(0, 16));
  return [scratch[0], scratch[1]];
};

/** BlockKey names a block: its server millisecond and first id. */
export interface BlockKey {
  ms: number;
  firstId: string;
}

export class BoundsStore {
  constructor(readonly db: Database) {}

  /** put queues a block's bounds: issue it with the block's put, in the same event turn, so they commit together. */
  put(ws: string, env: Environment, ms: number, firstId: string, bounds: ClientBounds): Promise<unknown> {
    this.db.put([BY_HI, ws, env, bounds[1], ms, firstId], NOTHING);
    return this.db.put([ws, env, ms, firstId], packed(bounds));
  }

  /** putSync stores a block's bounds inside a synchronous transaction (a rebuild). */
  putSync(ws: string, env: Environment, ms: number, firstId: string, bounds: ClientBounds): void {
    this.db.putSync([BY_HI, ws, env, bounds[1], ms, firstId], NOTHING);
    this.db.putSync([ws, env, ms, firstId], packed(bounds));
  }

  /** putPartSync stores a part's bounds in place of its blocks' own (removed first), inside the merge's transaction. */
  putPartSync(ws: string, env: Environment, first: BlockKey, last: BlockKey, bounds: ClientBounds): void {
    const id = Buffer.from(last.firstId, "utf8");
    const value = new Uint8Array(24 + id.length);
    value.set(packed(bounds));
    new DataView(value.buffer).setFloat64(16, last.ms);
    value.set(id, 24);
    this.db.putSync([BY_HI, ws, env, bounds[1], first.ms, first.firstId], NOTHING);
    this.db.putSync([ws, env, first.ms, first.firstId], value);
  }

  /** removeSync drops the bounds stored at a block's key (a block's own, or a part's at its first block), inside the deletion's transaction. */
  removeSync(ws: string, env: Environment, ms: number, firstId: string): void {
    const bytes = this.db.getBinaryFast([ws, env, ms, firstId]);
    const bounds = bytes && unpacked(bytes);
    if (bounds) this.db.removeSync([BY_HI, ws, env, bounds[1], ms, firstId]);
    this.db.removeSync([ws, env, ms, firstId]);
  }

  /** get reads a block's bounds, or its part's; undefined when none are stored (the block must be read). */
  get(ws: string, env: Environment, ms: number, firstId: string): ClientBounds | undefined {
    const bytes = this.db.getBinaryFast([ws, env, ms, firstId]);
    if (bytes !== undefined) return unpacked(bytes);
    for (const { value } of this.db.getRange({ start: [ws, env, ms, firstId], end: [ws, env, 0], reverse: true, limit: 1, snapshot: false })) {
      const v = value as Uint8Array;
      if (v.length <= 16) return undefined; // a block's own bounds: the block asked for is no part's
      const view = new DataView(v.buffer, v.byteOffset, v.length);
      const last = { ms: view.getFloat64(16), firstId: Buffer.from(v.buffer, v.byteOffset + 24, v.length - 24).toString("utf8") };
      return ms < last.ms || (ms === last.ms && firstId <= last.firstId) ? unpacked(v) : undefined;
    }
    return undefined;
  }

  /**
   * oldestReaching is the oldest block (by server ms, then first id) whose latest client time is at least `atLeast`;
   * null when none is: every block older than it holds only earlier client times. It reads one key per such block,
   * and stops at `cap` of them (then undefined: not known).
   */
  oldestReaching(ws: string, env: Environment, atLeast: number, cap = Number.POSITIVE_INFINITY): BlockKey | null | undefined {
    let oldest: BlockKey | null = null;
    let n = 0;
    for (const key of this.db.getKeys({ start: [BY_HI, ws, env, Number.POSITIVE_INFINITY], end: [BY_HI, ws, env, atLeast], reverse: true, snapshot: false })) {
      if (n++ >= cap) return undefined;
      const k = key as unknown[];
      const ms = k[4] as number;
      const firstId = k[5] as string;
      if (!oldest || ms < oldest.ms || (ms === oldest.ms && firstId < oldest.firstId)) oldest = { ms, firstId };
    }
    return oldest;
  }

  /** indexByHi adds every stored block's key by its latest client time (index layout 6 had none); it returns how many. */
  indexByHi(): number {
    let n = 0;
    let batch: [string, Environment, number, string, number][] = [];
    const store = () => {
      this.db.transactionSync(() => {
        for (const [ws, env, ms, firstId, hi] of batch) this.db.putSync([BY_HI, ws, env, hi, ms, firstId], NOTHING);
      });
      n += batch.length;
      batch = [];
    };
    for (const { key, value } of this.db.getRange({ start: [""], snapshot: false })) {
      const [ws, env, ms, firstId] = key as [string, Environment, number, string];
      const bounds = unpacked(value as Uint8Array);
      if (bounds) batch.push([ws, env, ms, firstId, bounds[1]]);
      if (batch.length === 1024) store();
    }
    store();
    return n;
  }
}
