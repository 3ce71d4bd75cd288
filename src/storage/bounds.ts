// bounds: the earliest and latest client timestamp of each block, in the `bounds` database, so that a read on the
// client time axis skips the blocks that hold none of its window without reading them.
//
// Key layout: [workspaceId, environment, serverMs, firstId] (a block's key, entries.ts) → two float64s, the block's
// smallest and largest clientMs. Put in the block's own transaction, deleted with it.
import type { Database } from "lmdb";
import type { Environment } from "../schema.ts";

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

export class BoundsStore {
  constructor(readonly db: Database) {}

  /** put queues a block's bounds: issue it with the block's put, in the same event turn, so they commit together. */
  put(ws: string, env: Environment, ms: number, firstId: string, bounds: ClientBounds): Promise<unknown> {
    return this.db.put([ws, env, ms, firstId], packed(bounds));
  }

  /** putSync stores a block's bounds inside a synchronous transaction (a rebuild). */
  putSync(ws: string, env: Environment, ms: number, firstId: string, bounds: ClientBounds): void {
    this.db.putSync([ws, env, ms, firstId], packed(bounds));
  }

  /** removeSync drops a deleted block's bounds, inside the deletion's transaction. */
  removeSync(ws: string, env: Environment, ms: number, firstId: string): void {
    this.db.removeSync([ws, env, ms, firstId]);
  }

  /** get reads a block's bounds; undefined when none are stored (the block must be read). */
  get(ws: string, env: Environment, ms: number, firstId: string): ClientBounds | undefined {
    const bytes = this.db.getBinaryFast([ws, env, ms, firstId]);
    if (bytes === undefined || bytes.length < 16) return undefined;
    const view = new DataView(bytes.buffer, bytes.byteOffset, 16);
    return [view.getFloat64(0, true), view.getFloat64(8, true)];
  }
}
