// count: how many keys a range holds, up to a cap, without decoding them (the planner counts every candidate).
import type { Database, Key, RangeOptions } from "lmdb";

/**
 * countKeys counts the keys of a range up to `cap` in LMDB's own loop (lmdb-js's count takes no limit, so the
 * cap-th key is looked up first); `last` is that cap-th key, the one key decoded, when the count reached the cap.
 */
export function countKeys(db: Database, range: Omit<RangeOptions, "limit" | "offset" | "snapshot">, cap: number): { n: number; last?: Key } {
  if (cap <= 0) return { n: 0 };
  for (const last of db.getKeys({ ...range, offset: cap - 1, limit: 1, snapshot: false })) return { n: cap, last };
  return { n: db.getKeysCount({ ...range, snapshot: false }) };
}
