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

/**
 * BoundsList is the client time bounds of a range's blocks, newest first (by server ms, then first id), with the
 * smallest lo and largest hi of each block and every older one: a newest-first read learns what all the blocks left
 * to it may hold, and stops when none of them can hold what it still wants.
 */
export class BoundsList {
  private readonly ms: number[] = [];
  private readonly firstIds: string[] = [];
  private readonly los: number[] = [];
  private readonly his: number[] = [];
  private restLo: Float64Array = new Float64Array(1);
  private restHi: Float64Array = new Float64Array(1);

  add(ms: number, firstId: string, [lo, hi]: ClientBounds): void {
    this.ms.push(ms);
    this.firstIds.push(firstId);
    this.los.push(lo);
    this.his.push(hi);
  }

  /** seal computes the bounds of every block from each one on, once all are added. */
  seal(): this {
    const n = this.ms.length;
    this.restLo = new Float64Array(n + 1).fill(Number.POSITIVE_INFINITY);
    this.restHi = new Float64Array(n + 1).fill(Number.NEGATIVE_INFINITY);
    for (let k = n - 1; k >= 0; k--) {
      this.restLo[k] = Math.min(this.los[k], this.restLo[k + 1]);
      this.restHi[k] = Math.max(this.his[k], this.restHi[k + 1]);
    }
    return this;
  }

  /** seek is the index of the first listed block not newer than (ms, firstId): the block itself when listed. */
  seek(ms: number, firstId: string): number {
    let lo = 0;
    let hi = this.ms.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ms[mid] > ms || (this.ms[mid] === ms && this.firstIds[mid] > firstId)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** at is the bounds of the block at index k if it is (ms, firstId); undefined when that block is not listed. */
  at(k: number, ms: number, firstId: string): ClientBounds | undefined {
    return k < this.ms.length && this.ms[k] === ms && this.firstIds[k] === firstId ? [this.los[k], this.his[k]] : undefined;
  }

  /** rest is the smallest lo and largest hi of the listed blocks from index k on ([+∞, −∞] when none). */
  rest(k: number): ClientBounds {
    return [this.restLo[k], this.restHi[k]];
  }
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

  /** list reads the bounds of every block of a tenant stored at server ms in [fromMs, toMs), newest first. */
  list(ws: string, env: Environment, fromMs: number, toMs: number): BoundsList {
    const out = new BoundsList();
    const top = Math.min(toMs, 8.64e15);
    if (top <= fromMs) return out.seal();
    for (const { key, value } of this.db.getRange({ start: [ws, env, top], end: [ws, env, fromMs], reverse: true, snapshot: false })) {
      const bytes = value as Uint8Array;
      if (bytes.length < 16) continue;
      const view = new DataView(bytes.buffer, bytes.byteOffset, 16);
      const k = key as unknown[];
      out.add(k[2] as number, k[3] as string, [view.getFloat64(0, true), view.getFloat64(8, true)]);
    }
    return out.seal();
  }

  /** get reads a block's bounds; undefined when none are stored (the block must be read). */
  get(ws: string, env: Environment, ms: number, firstId: string): ClientBounds | undefined {
    const bytes = this.db.getBinaryFast([ws, env, ms, firstId]);
    if (bytes === undefined || bytes.length < 16) return undefined;
    const view = new DataView(bytes.buffer, bytes.byteOffset, 16);
    return [view.getFloat64(0, true), view.getFloat64(8, true)];
  }
}
