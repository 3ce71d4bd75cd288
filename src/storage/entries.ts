// entries: the primary store of log entries, in blocks.
//
// Key layout (lmdb ordered-binary array keys, so keys sort element by element):
//   [workspaceId, environment, serverMs, firstId] → Block
// One block holds the entries of one write (at most BLOCK_MAX of them) that share serverMs;
// their ids are UUIDv7 whose time field is serverMs and which increase in input order.
// So a page is a reverse range scan, a cursor is a seek, and GET by id needs no id index:
// the id gives serverMs, and the block holding it is among those at [ws, env, serverMs, ≤ id].
// Blocks written at the same millisecond by different processes may interleave in id,
// so readers merge all blocks of one millisecond before ordering by id.
import type { Database } from "lmdb";
import type { Environment, Level, LogEntry } from "../schema.ts";
import { formatMs } from "../time.ts";
import { uuidTimeMs } from "../ids.ts";
import { monthOf, type UsageStore } from "./usage.ts";

/** StoredEntry is one entry as kept inside a block: a tuple, so that blocks stay compact. */
export type StoredEntry = [
  id: string, level: Level, action: string, message: string | null, tags: string[],
  actor: object | null, target: object | null, context: object | null, metadata: object | null, clientMs: number,
];

/** Row is an entry read back with the fields its key carries. */
export interface Row {
  serverMs: number;
  entry: StoredEntry;
}

export const BLOCK_MAX = 1000;
const TS_MAX = 8.64e15; // the largest JS Date: above any server timestamp

export interface ScanRange {
  /** inclusive lower bound on serverMs */
  fromMs: number;
  /** exclusive upper bound on serverMs */
  toMs: number;
  /** resume strictly after this entry in the (serverMs desc, id desc) order */
  after?: { ms: number; id: string };
}

/** EntryStore reads and writes entry blocks; the layout stays behind this class. */
export class EntryStore {
  constructor(private readonly db: Database, private readonly usage: UsageStore) {}

  /**
   * append stores one write's entries and counts them, atomically, unless that would pass
   * `monthlyLimit` (-1: none); then it stores nothing. Resolves once committed, with the verdict.
   */
  append(ws: string, env: Environment, serverMs: number, entries: StoredEntry[], monthlyLimit: number): Promise<{ stored: boolean; used: number }> {
    return this.db.transaction(() => {
      const month = monthOf(serverMs);
      const used = this.usage.used(ws, month);
      if (monthlyLimit >= 0 && used + entries.length > monthlyLimit) return { stored: false, used };
      for (let i = 0; i < entries.length; i += BLOCK_MAX) {
        const block = entries.slice(i, i + BLOCK_MAX);
        this.db.put([ws, env, serverMs, block[0][0]], block);
      }
      return { stored: true, used: this.usage.addInTransaction(ws, month, entries.length) };
    });
  }

  /**
   * deleteBefore removes up to `maxBlocks` blocks older than `beforeMs` in one transaction and
   * returns how many entries went; callers loop until it returns 0, so ingestion never waits long.
   */
  async deleteBefore(ws: string, env: Environment, beforeMs: number, maxBlocks: number): Promise<number> {
    const doomed = [...this.db.getKeys({ start: [ws, env, 0], end: [ws, env, beforeMs], limit: maxBlocks, snapshot: false })];
    if (doomed.length === 0) return 0;
    return this.db.transaction(() => {
      let entries = 0;
      for (const key of doomed) {
        const block = this.db.get(key) as StoredEntry[] | undefined;
        if (block && this.db.removeSync(key)) entries += block.length;
      }
      return entries;
    });
  }

  /** get finds one entry by id within a workspace environment. */
  get(ws: string, env: Environment, id: string): LogEntry | undefined {
    const ms = uuidTimeMs(id);
    if (!(ms >= 0 && ms < TS_MAX)) return undefined;
    for (const { value } of this.db.getRange({ start: [ws, env, ms, id], end: [ws, env, ms], reverse: true })) {
      const hit = (value as StoredEntry[]).find((e) => e[0] === id);
      if (hit) return toLogEntry(env, ms, hit);
    }
    return undefined;
  }

  /** scan yields the entries of a range in the read order: serverMs descending, then id descending. */
  *scan(ws: string, env: Environment, range: ScanRange): Generator<Row> {
    const { after } = range;
    let top = range.toMs;
    if (after && after.ms < top) top = after.ms + 1; // only blocks at or below the cursor's millisecond matter
    if (top <= range.fromMs) return;
    const start = after && after.ms + 1 === top ? [ws, env, after.ms, after.id] : [ws, env, Math.min(top, TS_MAX)];
    let groupMs = -1;
    let group: StoredEntry[] = [];
    for (const { key, value } of this.db.getRange({ start, end: [ws, env, range.fromMs], reverse: true, snapshot: false })) {
      const ms = (key as unknown[])[2] as number;
      if (ms !== groupMs) {
        yield* emit(groupMs, group, after);
        groupMs = ms;
        group = [];
      }
      for (const e of value as StoredEntry[]) group.push(e);
    }
    yield* emit(groupMs, group, after);
  }
}

function* emit(ms: number, group: StoredEntry[], after: ScanRange["after"]): Generator<Row> {
  if (group.length === 0) return;
  group.sort((a, b) => (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0));
  for (const entry of group) {
    if (after && ms === after.ms && entry[0] >= after.id) continue;
    yield { serverMs: ms, entry };
  }
}

/** toLogEntry renders a stored entry in the wire shape of interface §2.1. */
export function toLogEntry(env: Environment, serverMs: number, e: StoredEntry): LogEntry {
  return {
    id: e[0],
    environment: env,
    level: e[1],
    action: e[2],
    message: e[3],
    tags: e[4],
    actor: e[5] as LogEntry["actor"],
    target: e[6] as LogEntry["target"],
    context: e[7] as LogEntry["context"],
    metadata: e[8] as LogEntry["metadata"],
    client_timestamp: formatMs(e[9]),
    server_timestamp: formatMs(serverMs),
  };
}
