// inflight: the writes whose ids are drawn but not yet committed (or refused), per tenant. An entry below the lowest
// of them can no longer appear, so a live tail may send everything committed below it (query/tail-hub.ts).
import type { Tenant } from "./keys.ts";

/** Key is an entry's place in the list order: server millisecond, then id. */
export interface Key {
  ms: number;
  id: string;
}

/** compareKeys orders keys by (ms, id) ascending. */
export const compareKeys = (a: Key, b: Key): number => a.ms - b.ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** InFlight counts the writes under way per tenant with the lowest key of each. */
export class InFlight {
  private readonly writes = new Map<string, Set<Key>>();
  private readonly listeners: (() => void)[] = [];
  private waiters: (() => void)[] = [];

  /** track holds `first` (the lowest key of a write) until `done` settles. */
  track<T>(tenant: Tenant, first: Key, done: Promise<T>): Promise<T> {
    const name = `${tenant.ws}\u0000${tenant.env}`;
    let set = this.writes.get(name);
    if (!set) this.writes.set(name, (set = new Set()));
    set.add(first);
    const settle = () => {
      set.delete(first);
      if (set.size === 0) this.writes.delete(name);
      for (const l of this.listeners) l();
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
    };
    done.then(settle, settle);
    return done;
  }

  /** lowest is the lowest key of a tenant's writes under way, or undefined when none is. */
  lowest(tenant: Tenant): Key | undefined {
    const set = this.writes.get(`${tenant.ws}\u0000${tenant.env}`);
    let low: Key | undefined;
    if (set) for (const k of set) if (!low || compareKeys(k, low) < 0) low = k;
    return low;
  }

  /** busy tells whether a write is under way in any tenant. */
  busy(): boolean {
    return this.writes.size > 0;
  }

  /** nextSettled resolves when a write next leaves the set. */
  nextSettled(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** onSettled calls `listener` whenever a write leaves the set (committed, refused or failed). */
  onSettled(listener: () => void): void {
    this.listeners.push(listener);
  }
}
