// page: runs a read as a range scan in the read order, keeps what matches, stops when the page is full.
import type { Caller } from "../auth/authenticate.ts";
import type { LogEntry } from "../schema.ts";
import { toLogEntry, type EntryStore, type ScanRange, type StoredEntry } from "../storage/entries.ts";
import { retentionFloorMs } from "../limits/plans.ts";

/** PageRequest is a validated read: a time range, an optional cursor, a page size and a filter. */
export interface PageRequest {
  range: ScanRange;
  pageSize: number;
  match: (entry: StoredEntry) => boolean;
}

export interface Page {
  entries: LogEntry[];
  /** the cursor of the next page, present only when at least one more entry matches */
  next: { id: string; ts: string } | undefined;
}

/** readPage returns one page of the caller's own environment, never an entry past retention. */
export function readPage(store: EntryStore, caller: Caller, req: PageRequest, nowMs: number): Page {
  const env = caller.key.environment;
  const range = { ...req.range, fromMs: Math.max(req.range.fromMs, retentionFloorMs(caller.plan, nowMs)) };
  const entries: LogEntry[] = [];
  let more = false;
  for (const row of store.scan(caller.workspace.id, env, range)) {
    if (!req.match(row.entry)) continue;
    if (entries.length === req.pageSize) {
      more = true;
      break;
    }
    entries.push(toLogEntry(env, row.serverMs, row.entry));
  }
  const last = entries[entries.length - 1];
  return { entries, next: more && last ? { id: last.id, ts: last.server_timestamp } : undefined };
}

/** readOne finds one entry of the caller's own environment by id, never one past retention. */
export function readOne(store: EntryStore, caller: Caller, id: string, nowMs: number): LogEntry | undefined {
  const entry = store.get(caller.workspace.id, caller.key.environment, id);
  return entry && Date.parse(entry.server_timestamp) >= retentionFloorMs(caller.plan, nowMs) ? entry : undefined;
}

/** pageHeaders carries the next cursor as X-Next-Cursor-ID / X-Next-Cursor-TS. */
export function pageHeaders(page: Page): Record<string, string> {
  return page.next ? { "x-next-cursor-id": page.next.id, "x-next-cursor-ts": page.next.ts } : {};
}
