// tail-hub: hands committed entries to live tails in the list's ascending order, and only once none can come before
// them. The store announces each block after its commit; a write whose ids are drawn but not yet committed (it waits
// for its turn's transaction, or for full text to catch up) may hold lower ids than one announced already, so entries
// at or above the lowest key of a write under way (EntryStore.inFlight) are held back until it settles. What a tail
// has sent therefore never has an entry committed behind it.
import type { EntryStore, Row } from "../storage/entries.ts";
import { compareKeys, type Key } from "../storage/inflight.ts";
import type { Tenant } from "../storage/keys.ts";
import type { BlockTerms, PostingKind } from "../storage/indexes/posting-terms.ts";

/** Subscriber takes each tenant's released entries, oldest first, in batches. */
export type Subscriber = (batch: Batch) => void;

/** HeldBlock is what a batch keeps of a committed block: its size and postings, and each position's row in the batch. */
interface HeldBlock {
  size: number;
  terms: BlockTerms;
  rowAt?: Int32Array;
}

/** LiveRow is a committed entry with where it sits in its block. */
interface LiveRow extends Row {
  block: HeldBlock;
  i: number;
}

interface Pending {
  tenant: Tenant;
  refs: { ms: number; firstId: string; terms: BlockTerms }[];
  rows: LiveRow[];
}

/**
 * Batch is one release of a tenant's entries, oldest first. `candidates` gives the rows that carry a level, tag or
 * action term, from the blocks' postings, worked out once per batch however many tails ask: a tail of `tag=x` looks
 * at those rows only. `matching` keeps what each query accepts, so that tails of one query share the rows (and the
 * sink the bytes it wrote for them).
 */
export class Batch {
  private readonly found = new Map<string, number[]>();
  private readonly matched = new Map<string, readonly Row[]>();
  constructor(readonly rows: readonly Row[]) {}

  /** matching gives the rows a query (named by `key`) accepts, worked out by the first tail of that query that asks */
  matching(key: string, work: () => readonly Row[]): readonly Row[] {
    let rows = this.matched.get(key);
    if (!rows) this.matched.set(key, (rows = work()));
    return rows;
  }

  /** candidates lists, ascending, the indexes of the rows whose entry carries the term (kind l, t or a, exactly). */
  candidates(kind: PostingKind, term: string): readonly number[] {
    const name = `${kind}\u0000${term}`;
    let out = this.found.get(name);
    if (out) return out;
    out = [];
    const blocks = new Set<HeldBlock>();
    for (const r of this.rows as LiveRow[]) blocks.add(r.block);
    for (const b of blocks) {
      const hit = b.terms.find(([k, t]) => k === kind && t === term);
      if (!hit) continue;
      const positions = hit[2];
      const rowAt = b.rowAt!;
      if (positions.byteLength === 0) {
        for (let i = 0; i < b.size; i++) if (rowAt[i] >= 0) out.push(rowAt[i]);
      } else {
        const at = new Uint16Array(positions.buffer.slice(positions.byteOffset, positions.byteOffset + positions.byteLength));
        for (const p of at) if (rowAt[p] >= 0) out.push(rowAt[p]); // a position outside this batch was released before or is held back
      }
    }
    if (blocks.size > 1) out.sort((a, b) => a - b);
    this.found.set(name, out);
    return out;
  }
}

const nameOf = (t: Tenant) => `${t.ws}\u0000${t.env}`;
const keyOf = (r: Row): Key => ({ ms: r.serverMs, id: r.entry.id });

/** TailHub releases committed entries to the subscribers of their tenant. */
export class TailHub {
  private readonly pending = new Map<string, Pending>();
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private scheduled = false;

  constructor(private readonly store: EntryStore) {
    store.onCommitted((b) => {
      const name = nameOf(b);
      let p = this.pending.get(name);
      if (!p) this.pending.set(name, (p = { tenant: { ws: b.ws, env: b.env }, refs: [], rows: [] }));
      p.refs.push({ ms: b.ms, firstId: b.firstId, terms: b.terms });
      this.schedule();
    });
    store.inFlight.onSettled(() => {
      if (this.pending.size > 0) this.schedule();
    });
  }

  /** subscribe adds a subscriber to a tenant's entries; the returned function removes it. */
  subscribe(tenant: Tenant, subscriber: Subscriber): () => void {
    const name = nameOf(tenant);
    let set = this.subscribers.get(name);
    if (!set) this.subscribers.set(name, (set = new Set()));
    set.add(subscriber);
    return () => {
      set.delete(subscriber);
      if (set.size === 0) this.subscribers.delete(name);
    };
  }

  /**
   * frontier is the newest stored entry of a tenant below every write under way: no entry at or below it can still
   * appear, and every entry above it reaches a subscriber registered now. undefined: the tenant has no such entry.
   */
  frontier(tenant: Tenant): Key | undefined {
    const safe = this.store.inFlight.lowest(tenant);
    let best: Key | undefined;
    for (const ref of this.store.blocks(tenant, { fromMs: 0, toMs: safe ? safe.ms + 1 : 8.64e15 })) {
      if (best && ref.ms < best.ms) break;
      const block = this.store.readBlock(tenant, ref.ms, ref.firstId);
      if (!block) continue;
      for (let i = block.size - 1; i >= 0; i--) {
        const key = { ms: ref.ms, id: block.id(i) };
        if (safe && compareKeys(key, safe) >= 0) continue;
        if (!best || compareKeys(key, best) > 0) best = key;
        break;
      }
    }
    return best;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // after the turn: the announcing commit's writes have settled (left inFlight) by then
    setImmediate(() => {
      this.scheduled = false;
      this.release();
    });
  }

  private release(): void {
    for (const [name, p] of this.pending) {
      const safe = this.store.inFlight.lowest(p.tenant);
      const subscribers = this.subscribers.get(name);
      if (!subscribers) {
        if (!safe) this.pending.delete(name); // nobody listens and nothing is held back: a tail opening now starts past these
        continue;
      }
      // a block's ids ascend, so the rows are in order once the blocks are, unless blocks of one millisecond interleave
      let sorted = p.rows.length === 0;
      p.refs.sort((a, b) => a.ms - b.ms || (a.firstId < b.firstId ? -1 : 1));
      for (let r = 0; r < p.refs.length; r++) {
        const ref = p.refs[r];
        if (r > 0 && p.refs[r - 1].ms === ref.ms) sorted = false;
        const block = this.store.readBlock(p.tenant, ref.ms, ref.firstId);
        if (!block) continue;
        const held: HeldBlock = { size: block.size, terms: ref.terms };
        for (let i = 0; i < block.size; i++) p.rows.push({ serverMs: ref.ms, entry: block.entry(i), block: held, i });
      }
      p.refs = [];
      if (!sorted) p.rows.sort((a, b) => a.serverMs - b.serverMs || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0));
      let n = p.rows.length;
      if (safe) {
        n = 0;
        while (n < p.rows.length && compareKeys(keyOf(p.rows[n]), safe) < 0) n++;
      }
      const out = p.rows.slice(0, n);
      p.rows = p.rows.slice(n);
      if (p.rows.length === 0) this.pending.delete(name);
      if (out.length === 0) continue;
      const blocks = new Set(out.map((r) => r.block));
      for (const b of blocks) b.rowAt = new Int32Array(b.size).fill(-1);
      for (let k = 0; k < out.length; k++) out[k].block.rowAt![out[k].i] = k;
      const batch = new Batch(out);
      for (const subscriber of subscribers) subscriber(batch);
    }
  }
}
