// usage: entries written per workspace per calendar month (UTC), in the `usage` database.
//
// Key layout: [workspaceId, "YYYY-MM"] → count. It changes in the same transaction as the
// entries it counts, so a kill -9 never loses or double-counts usage.
import type { Database } from "lmdb";

/** monthOf names the UTC calendar month of an instant: "2026-11". */
export const monthOf = (ms: number): string => new Date(ms).toISOString().slice(0, 7);

export class UsageStore {
  constructor(readonly db: Database) {}

  used(ws: string, month: string): number {
    return (this.db.get([ws, month]) as number | undefined) ?? 0;
  }

  /** add counts n entries; call it only inside the write transaction of those entries. */
  addInTransaction(ws: string, month: string, n: number): number {
    const next = this.used(ws, month) + n;
    this.db.put([ws, month], next);
    return next;
  }
}
