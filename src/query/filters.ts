// filters: the simple filters of GET /logs and the body `action` of POST /logs/query (contract §5).
// They are plain case-insensitive substrings and any-of lists; the query language lives beside them.
import type { StoredEntry } from "../storage/entries.ts";
import type { Level } from "../schema.ts";

export interface SimpleFilters {
  levels?: ReadonlySet<Level>;
  tags?: ReadonlySet<string>;
  /** lowercased substring of action */
  action?: string;
  /** lowercased substring of message */
  message?: string;
}

/** matchSimple builds the predicate for a set of simple filters (all ANDed). */
export function matchSimple(f: SimpleFilters): (e: StoredEntry) => boolean {
  const { levels, tags, action, message } = f;
  return (e) =>
    (!levels || levels.has(e[1])) &&
    (action === undefined || e[2].toLowerCase().includes(action)) &&
    (message === undefined || (e[3] !== null && e[3].toLowerCase().includes(message))) &&
    (!tags || e[4].some((t) => tags.has(t)));
}
