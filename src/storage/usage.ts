// usage: entries written per workspace per calendar month (UTC), in the `usage` database.
//
// Key layout: [workspaceId, "YYYY-MM"] → count. The count is put in the same write batch as the
// entries it counts (one LMDB transaction), so a kill -9 never loses or double-counts usage.
// This process is the only writer of usage: it keeps each month's count, committed or in flight,
// in memory, so the quota is checked without waiting for earlier writes to commit.
import type { Database } from "lmdb";

let lastMonth = { from: 0, to: 0, name: "" }; // writes come in time order: nearly every call falls in the last month named

/** monthOf names the UTC calendar month of an instant: "2026-11". */
export function monthOf(ms: number): string {
  if (ms >= lastMonth.from && ms < lastMonth.to) return lastMonth.name;
  const d = new Date(ms);
  const [y, m] = [d.getUTCFullYear(), d.getUTCMonth()];
  const first = (month: number) => new Date(0).setUTCFullYear(y, month, 1); // not Date.UTC: it reads years 0–99 as 19xx
  lastMonth = { from: first(m), to: first(m + 1), name: d.toISOString().slice(0, 7) };
  return lastMonth.name;
}

export class UsageStore {
  /** counts of the months this process has written to, including writes not yet committed */
  private readonly counts = new Map<string, number>();
  constructor(readonly db: Database) {}

  /** used is the committed count. */
  used(ws: string, month: string): number {
    return (this.db.get([ws, month]) as number | undefined) ?? 0;
  }

  /** take counts n more entries, in memory, unless the month would pass limit (-1: none); `put` then stores the count. */
  take(ws: string, month: string, n: number, limit: number): { ok: boolean; used: number } {
    const key = `${ws}\u0000${month}`;
    const used = this.counts.get(key) ?? this.used(ws, month);
    if (limit >= 0 && used + n > limit) return { ok: false, used };
    this.counts.set(key, used + n);
    return { ok: true, used: used + n };
  }

  /** put queues the month's count as taken so far: issue it with the entries' puts, in the same event turn, so they commit together. */
  put(ws: string, month: string): Promise<unknown> {
    return this.db.put([ws, month], this.counts.get(`${ws}\u0000${month}`) ?? 0);
  }

  /** giveBack undoes a take whose batch failed to commit; later batches may hold counts that included it, so the corrected count is put after them. */
  giveBack(ws: string, month: string, n: number): Promise<unknown> {
    const key = `${ws}\u0000${month}`;
    const count = (this.counts.get(key) ?? n) - n;
    this.counts.set(key, count);
    return this.db.put([ws, month], count);
  }
}
