// resume: key ranges that a reader may leave suspended across event-loop turns (a query in time slices) and go on
// reading exactly. lmdb-js renews a `snapshot: false` cursor at the key it gave last, then steps once: when a
// commit deleted that key meanwhile, the step skips the key after it. So after a turn this reopens past the last key.
import { PerTurn } from "../turn.ts";
import type { Database, Key, RangeOptions } from "lmdb";

let turns = 0;
/** currentTurn numbers event-loop turns; it only counts in turns where a range read asked. */
const turnNumber = new PerTurn(() => ++turns);
const currentTurn = () => turnNumber.get();

/**
 * resumingKeys yields the keys of a range as `db.getKeys` does (without `limit`), and stays exact when it is
 * suspended across turns while other writes commit: keys present throughout are yielded once each, in order.
 */
export function* resumingKeys(db: Database, options: Omit<RangeOptions, "limit" | "snapshot">): Generator<Key> {
  let last: Key | undefined;
  for (;;) {
    const opened = currentTurn();
    const range = last === undefined ? { ...options, snapshot: false } : { ...options, start: last, exclusiveStart: true, snapshot: false };
    let reopen = false;
    for (const key of db.getKeys(range)) {
      last = key;
      yield key;
      if (currentTurn() !== opened) {
        reopen = true;
        break; // closes this cursor; the next one starts after `last`
      }
    }
    if (!reopen) return;
  }
}
