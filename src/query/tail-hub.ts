// tail-hub: hands committed entries to live tails in the list's ascending order, and only once none can come before
// them. The store announces each block after its commit; a write whose ids are drawn but not yet committed (it waits
// for its turn's transaction, or for full text to catch up) may hold lower ids than one announced already, so entries
// at or above the lowest key of a write under way (EntryStore.inFlight) are held back until it settles. What a tail
// has sent therefore never has an entry committed behind it.
import type { EntryStore, Row } from "../storage/entries.ts";
import { compareKeys, type Key } from "../storage/inflight.ts";
import type { Tenant } from "../storage/keys.ts";

/** Subscriber takes each tenant's released entries, oldest first, in batches. */
export type Subscriber = (rows: readonly Row[]) => void;

interface Pending {
  tenant: Tenant;
  refs: { ms: number; firstId: string }[];
  rows: Row[];
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
      p.refs.push({ ms: b.ms, firstId: b.firstId });
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
      for (const ref of p.refs) {
        const block = this.store.readBlock(p.tenant, ref.ms, ref.firstId);
        if (block) for (let i = 0; i < block.size; i++) p.rows.push({ serverMs: ref.ms, entry: block.entry(i) });
      }
      p.refs = [];
      p.rows.sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
      let n = p.rows.length;
      if (safe) {
        n = 0;
        while (n < p.rows.length && compareKeys(keyOf(p.rows[n]), safe) < 0) n++;
      }
      const out = p.rows.slice(0, n);
      p.rows = p.rows.slice(n);
      if (p.rows.length === 0) this.pending.delete(name);
      if (out.length > 0) for (const s of subscribers) s(out);
    }
  }
}
