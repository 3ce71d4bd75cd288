// entries: the primary store of log entries, in blocks, with the indexes written in the same transaction.
//
// Key layout (db `entries`, lmdb ordered-binary array keys, compared element by element):
//   [workspaceId, environment, serverMs, firstId] → Block (columnar; see block.ts)
// One block holds at most BLOCK_MAX entries that share serverMs, of one write or of several committed
// in the same event-loop turn; their ids are UUIDv7 whose time field is serverMs, ascending in the block.
// So a page is a reverse range scan, a cursor is a seek, and GET by id needs no id index:
// the id gives serverMs, and the block holding it is among those at [ws, env, serverMs, ≤ id].
// Blocks written at the same millisecond by different writers may interleave in id, so readers
// merge all blocks of one millisecond before ordering by id.
// Beside each block, in the same transaction: the mark that its postings are not yet stored
// (postings.ts), new action values (dictionary.ts) and the month's usage count (usage.ts); right
// after commit, its postings are held in memory until a batch stores them, and its words join the
// full-text index (fulltext.ts). The writes of one event-loop turn commit together (commit.ts).
// No key holds a user's string the key encoding could misread: a tag, an action or a name of 64+ UTF-16 units
// stands in index keys as its hash (keys.ts); the version of that layout is in db `layout` (layout.ts).
import type { Database } from "lmdb";
import { uuidTimeMs } from "../ids.ts";
import type { Environment, LogEntry } from "../schema.ts";
import { formatMs, formatMsRepeated } from "../time.ts";
import { Block, EntryView, blockWords, type Entry } from "./block.ts";
import { TurnCommitter, type CommittedBlock, type Verdict, type Write } from "./commit.ts";
import { Dictionary } from "./dictionary.ts";
import type { EncodedBlock } from "./encode.ts";
import { FullText, type BlockText } from "./fulltext.ts";
import { rangeKeys, type BlockRef, type ScanRange } from "./keys.ts";
import { Postings, blockTerms, termsOf } from "./postings.ts";
import { resumingKeys } from "./resume.ts";
import type { UsageStore } from "./usage.ts";

export type { Entry } from "./block.ts";

/** Row is an entry read back with the server timestamp its key carries. */
export interface Row {
  serverMs: number;
  entry: Entry;
}

export { BLOCK_MAX } from "./block.ts";


export interface EntryDatabases {
  entries: Database;
  postings: Database;
  unindexed: Database;
  dictionary: Database;
  fulltext: Database;
}

/** EntryStore reads and writes entry blocks and their indexes; the layout stays behind this class. */
export class EntryStore {
  readonly postings: Postings;
  readonly dictionary: Dictionary;
  readonly fulltext: FullText;
  private readonly db: Database;
  private readonly turns: TurnCommitter;

  constructor(dbs: EntryDatabases, usage: UsageStore, segmentEntries?: number) {
    this.db = dbs.entries;
    this.postings = new Postings(dbs.postings, dbs.unindexed);
    this.postings.recover((ws, env, ms, firstId) => {
      const block = this.block(ws, env, ms, firstId);
      return block && blockTerms(block.entries());
    });
    this.dictionary = new Dictionary(dbs.dictionary);
    this.fulltext = new FullText(dbs.fulltext, (ws, env, after) => this.blockTextsAfter(ws, env, after), segmentEntries);
    this.turns = new TurnCommitter({ entries: this.db, postings: this.postings, dictionary: this.dictionary, usage });
    // the indexes kept beside the blocks learn of each block once it is committed
    this.onCommitted((b) => this.postings.hold(b.ws, b.env, b.ms, b.firstId, b.terms));
    this.onCommitted((b) => this.fulltext.add(b.ws, b.env, { ms: b.ms, firstId: b.firstId, text: b.words, entries: b.size }));
  }

  /**
   * append stores one write's entries, their index entries and their count, atomically, unless that
   * would pass `monthlyLimit` (-1: none); then it stores nothing. Resolves once committed, with the
   * verdict; by then the entries are findable through every index and full text.
   */
  append(ws: string, env: Environment, serverMs: number, entries: Entry[], monthlyLimit: number): Promise<Verdict> {
    return this.enqueue({ ws, env, serverMs, count: entries.length, entries, monthlyLimit });
  }

  /** appendPrepared is append for blocks encoded off the main thread (encode.ts); `ids` ascend across them. */
  appendPrepared(ws: string, env: Environment, serverMs: number, ids: string[], blocks: EncodedBlock[], monthlyLimit: number): Promise<Verdict> {
    return this.enqueue({ ws, env, serverMs, count: ids.length, prepared: { ids, blocks }, monthlyLimit });
  }

  /** onCommitted calls `listener` once with each block after it is committed, before its write is answered. */
  onCommitted(listener: (block: CommittedBlock) => void): void {
    this.turns.onCommitted(listener);
  }

  /** settled ends what a clean stop waits for: a sealed full-text segment is persisted, held postings are stored (a restart has none to recover). */
  async settled(): Promise<void> {
    await this.fulltext.settled();
    await this.postings.settled();
  }

  private enqueue(write: Write): Promise<Verdict> {
    const behind = this.fulltext.caughtUp();
    return behind ? behind.then(() => this.turns.commit(write)) : this.turns.commit(write);
  }

  /** get finds one entry by id within a workspace environment. */
  get(ws: string, env: Environment, id: string): Row | undefined {
    const ref = this.locate(ws, env, id);
    if (!ref) return undefined;
    const block = this.block(ws, env, ref.ms, ref.firstId)!;
    return { serverMs: ref.ms, entry: block.entry(ref.positions![0]) };
  }

  /** locate finds the block and position of an entry by id. */
  locate(ws: string, env: Environment, id: string): BlockRef | undefined {
    const ms = uuidTimeMs(id);
    if (!(ms >= 0 && ms < 8.64e15)) return undefined;
    for (const { key, value } of this.db.getRange({ start: [ws, env, ms, id], end: [ws, env, ms], reverse: true })) {
      const i = Block.decode(ms, value as Uint8Array).indexOf(id);
      if (i >= 0) return { ms, firstId: (key as unknown[])[3] as string, positions: [i] };
    }
    return undefined;
  }

  /** blocks yields every block of a range as a reference, newest first: the full scan. */
  *blocks(ws: string, env: Environment, range: ScanRange): Generator<BlockRef> {
    const { start, fromMs } = rangeKeys(range);
    if (!start) return;
    for (const key of resumingKeys(this.db, { start: [ws, env, ...start], end: [ws, env, fromMs], reverse: true })) {
      const k = key as unknown[];
      yield { ms: k[2] as number, firstId: k[3] as string, positions: null };
    }
  }

  /** countBlocks counts a range's blocks, stopping at cap (planner estimates). */
  countBlocks(ws: string, env: Environment, range: ScanRange, cap: number): number {
    let n = 0;
    for (const _ of this.blocks(ws, env, range)) if (++n >= cap) break;
    return n;
  }

  /**
   * rows turns block references (newest first) into the entries that `accept` takes, in the read order —
   * serverMs descending, then id descending — strictly after the range's cursor. `accept` sees a view
   * that is reused for the next entry: it must not keep it. References to deleted blocks are skipped.
   */
  rows(
    ws: string, env: Environment, refs: Iterable<BlockRef>, range: ScanRange,
    accept: (row: Row) => boolean = () => true,
    /** false for a block none of whose entries `accept` can take (compileBlockTest): its entries are not read */
    mayHold: (block: Block) => boolean = () => true,
  ): Generator<Row> {
    return this.walk(ws, env, refs, range, accept, mayHold, never) as Generator<Row>;
  }

  /**
   * rowsSliced is rows for a reader that works in time slices: between blocks it yields PAUSE once `due` says the
   * slice is used up, and the reader lets the event loop run before it asks for more. The rows are those of rows().
   */
  rowsSliced(
    ws: string, env: Environment, refs: Iterable<BlockRef>, range: ScanRange,
    accept: (row: Row) => boolean, mayHold: ((block: Block) => boolean) | undefined, due: () => boolean,
  ): Generator<Row | Pause> {
    return this.walk(ws, env, refs, range, accept, mayHold ?? (() => true), due);
  }

  private *walk(
    ws: string, env: Environment, refs: Iterable<BlockRef>, range: ScanRange,
    accept: (row: Row) => boolean, mayHold: (block: Block) => boolean, due: () => boolean,
  ): Generator<Row | Pause> {
    const { after } = range;
    const probe = { serverMs: 0, entry: new EntryView(undefined as unknown as Block, 0) };
    let groupMs = NaN;
    let group = new Map<string, Set<number> | null>();
    const flush = function* (this: EntryStore): Generator<Row | Pause> {
      if (group.size === 0) return;
      const cursorHere = after !== undefined && groupMs === after.ms;
      probe.serverMs = groupMs;
      const test = (block: Block, i: number) => {
        probe.entry.b = block;
        probe.entry.i = i;
        return !(cursorHere && block.id(i) >= after.id) && accept(probe);
      };
      if (group.size === 1) {
        // one block: ids ascend with positions, so walk them backwards without building a list
        const [[firstId, positions]] = group;
        const block = this.block(ws, env, groupMs, firstId);
        if (!block || !mayHold(block)) return;
        const at = positions === null ? null : [...positions].sort((a, b) => a - b);
        for (let k = (at ? at.length : block.size) - 1; k >= 0; k--) {
          const i = at ? at[k] : k;
          if (test(block, i)) yield { serverMs: groupMs, entry: block.entry(i) };
        }
        return;
      }
      // blocks are copies of the stored bytes (lmdb-js get), so those read stay valid across a pause
      const candidates: [Block, number][] = [];
      for (const [firstId, positions] of group) {
        if (due()) yield PAUSE;
        const block = this.block(ws, env, groupMs, firstId);
        if (!block || !mayHold(block)) continue;
        if (positions === null) for (let i = 0; i < block.size; i++) candidates.push([block, i]);
        else for (const i of positions) candidates.push([block, i]);
      }
      candidates.sort(([a, i], [b, j]) => (a.id(i) < b.id(j) ? 1 : a.id(i) > b.id(j) ? -1 : 0));
      for (let k = 0; k < candidates.length; k++) {
        if ((k & 1023) === 1023 && due()) yield PAUSE; // about as often as between blocks
        const [block, i] = candidates[k];
        if (test(block, i)) yield { serverMs: groupMs, entry: block.entry(i) };
      }
    };
    for (const ref of refs) {
      if (due()) yield PAUSE; // a reference in range costs a block read: one clock reading is cheap beside it
      if (ref.ms < range.fromMs || ref.ms >= range.toMs || (after && ref.ms > after.ms)) continue;
      if (ref.ms !== groupMs) {
        yield* flush.call(this);
        groupMs = ref.ms;
        group = new Map();
      }
      const had = group.get(ref.firstId);
      if (had === null) continue; // the whole block is in already
      if (ref.positions === null) group.set(ref.firstId, null);
      else group.set(ref.firstId, new Set([...(had ?? []), ...ref.positions]));
    }
    yield* flush.call(this);
  }

  /** scan yields every entry of a range in the read order. */
  scan(ws: string, env: Environment, range: ScanRange): Generator<Row> {
    return this.rows(ws, env, this.blocks(ws, env, range), range);
  }

  /**
   * deleteBefore removes up to `maxBlocks` blocks older than `beforeMs`, with their postings, in one
   * transaction and returns how many entries went; callers loop until it returns 0, so ingestion never waits long.
   */
  async deleteBefore(ws: string, env: Environment, beforeMs: number, maxBlocks: number): Promise<number> {
    await this.postings.flush(); // the postings to remove are stored, none in flight
    const doomed = [...this.db.getKeys({ start: [ws, env, 0], end: [ws, env, beforeMs], limit: maxBlocks, snapshot: false })];
    if (doomed.length === 0) {
      await this.fulltext.dropBefore(ws, env, beforeMs);
      return 0;
    }
    return this.db.transaction(() => {
      let n = 0;
      for (const key of doomed) {
        const [, , ms, firstId] = key as [string, Environment, number, string];
        const block = this.block(ws, env, ms, firstId);
        if (!block) continue;
        for (const [kind, term] of termsOf(block.entries())) this.postings.remove(ws, env, kind, term, ms, firstId);
        this.db.removeSync(key);
        n += block.size;
      }
      return n;
    });
  }

  private block(ws: string, env: Environment, ms: number, firstId: string): Block | undefined {
    const value = this.db.get([ws, env, ms, firstId]) as Uint8Array | undefined;
    return value === undefined ? undefined : Block.decode(ms, value);
  }

  private *blockTextsAfter(ws: string, env: Environment, after: [number, string] | undefined): Generator<BlockText> {
    const start = after ? [ws, env, after[0], `${after[1]}\u0000`] : [ws, env, 0];
    for (const { key, value } of this.db.getRange({ start, end: [ws, env, 8.64e15], snapshot: false })) {
      const ms = (key as unknown[])[2] as number;
      const block = Block.decode(ms, value as Uint8Array);
      const entries = block.entries();
      yield { ms, firstId: entries[0].id, text: blockWords(entries), entries: entries.length };
    }
  }
}

/** PAUSE is what rowsSliced yields when its slice is used up: the reader lets the event loop run, then asks for more. */
export const PAUSE = Symbol("pause");
export type Pause = typeof PAUSE;
const never = () => false;

/** toLogEntry renders a stored entry in the wire shape of interface §2.1. */
export function toLogEntry(env: Environment, serverMs: number, e: Entry): LogEntry {
  return {
    id: e.id,
    environment: env,
    level: e.level,
    action: e.action,
    message: e.message,
    tags: e.tags,
    actor: e.actor,
    target: e.target,
    context: e.context,
    metadata: e.metadata,
    client_timestamp: formatMs(e.clientMs),
    server_timestamp: formatMsRepeated(serverMs),
  };
}
