// entries: the primary store of log entries, in blocks, with the indexes written in the same transaction.
//
// Key layout (db `entries`, lmdb ordered-binary array keys, compared element by element):
//   [workspaceId, environment, serverMs, firstId] → Block (columnar; see block.ts)
// One block holds at most BLOCK_MAX entries that share serverMs, of one write or of several committed
// in the same event-loop turn; their ids are UUIDv7 whose time field is serverMs, ascending in the block.
// So a page is a reverse range scan, a cursor is a seek, and GET by id needs no id index:
// the id gives serverMs, and the block holding it is among those at [ws, env, serverMs, ≤ id].
// Blocks written at the same millisecond by different writers may interleave in id, so readers
// merge a millisecond's blocks before ordering by id, unless their ids do not overlap (query/execute.ts).
// A block older than a few seconds with few entries is merged with its neighbours into a part (merge.ts): its key
// stays, and its value becomes a pointer to its entries in the part (part.ts), which every read follows (stored-blocks.ts).
// Beside each block, in the same transaction: the mark that its postings are not yet stored
// (postings.ts), new action values (dictionary.ts) and the month's usage count (usage.ts); right
// after commit, its postings are held in memory until a batch stores them, and its words join the
// full-text index (fulltext.ts); its filters of rare values are stored beside it and held until its segment
// is sealed (needle-index.ts). The writes of one event-loop turn commit together (commit.ts).
// No key holds a user's string the key encoding could misread: a tag, an action or a name of 64+ UTF-16 units
// stands in index keys as its hash (keys.ts); the version of that layout is in db `layout` (layout.ts).
import type { Database } from "lmdb";
import { uuidTimeMs } from "../ids.ts";
import type { Environment } from "../schema.ts";
import type { Block, Entry } from "./format/block.ts";
import { blockWords } from "./format/block-encode.ts";
import { TurnCommitter, type CommittedBlock, type Verdict, type Write } from "./commit.ts";
import { Dictionary } from "./indexes/dictionary.ts";
import type { DiskSpace } from "./disk.ts";
import type { EncodedBlock } from "./format/encode.ts";
import { FullText, type BlockText } from "./indexes/fulltext.ts";
import { NeedleIndex } from "./indexes/needle-index.ts";
import type { Needle } from "./indexes/needles.ts";
import { InFlight } from "./inflight.ts";
import { rangeKeys, type BlockRef, type ScanRange, type Tenant } from "./keys.ts";
import { Postings } from "./indexes/postings.ts";
import { blockTerms, termsOf, type PostingKind } from "./indexes/posting-terms.ts";
import { countKeys } from "./count.ts";
import { blockSignature } from "./signature.ts";
import { resumingKeys } from "./resume.ts";
import { StatsStore } from "./stats.ts";
import { type BlockKey, BoundsStore, type ClientBounds } from "./indexes/bounds.ts";
import { DEFAULT_PACE, Merger, type MergePace } from "./merge/merge.ts";
import { partOf, pointerOf } from "./format/part.ts";
import { blockName, partName, StoredBlocks } from "./format/stored-blocks.ts";
import type { UsageStore } from "./usage.ts";

export type { Entry } from "./format/block.ts";

/** Row is an entry read back with the server timestamp its key carries. */
export interface Row {
  serverMs: number;
  entry: Entry;
}

export { BLOCK_MAX } from "./format/block.ts";

export { DECODED_KEPT } from "./format/stored-blocks.ts";

export interface EntryDatabases {
  entries: Database;
  parts: Database;
  postings: Database;
  unindexed: Database;
  dictionary: Database;
  fulltext: Database;
  filters: Database;
  filtersHeld: Database;
  stats: Database;
  bounds: Database;
  disk: DiskSpace;
}

/** EntryStore reads and writes entry blocks and their indexes; the layout stays behind this class. */
export class EntryStore {
  readonly postings: Postings;
  /** what each workspace environment stores (the storage report) */
  readonly stats: StatsStore;
  private readonly bounds: BoundsStore;
  private readonly dictionary: Dictionary;
  readonly fulltext: FullText;
  private readonly needles: NeedleIndex;
  private readonly db: Database;
  private readonly parts: Database;
  /** merges small blocks into parts in the background, once started */
  readonly merger: Merger;
  private readonly turns: TurnCommitter;
  /** blocks read by key, plain or merged into parts, and kept decoded */
  private readonly stored: StoredBlocks;
  /** writes whose ids are drawn but not yet committed: live tails send nothing above the lowest (query/tail-hub.ts) */
  readonly inFlight = new InFlight();
  private readonly deletedListeners: ((tenant: Tenant, beforeMs: number) => void)[] = [];

  /** segmentEntries: entries per full-text and filter segment, filterSegmentEntries per filter segment apart (tests make them tiny) */
  constructor(dbs: EntryDatabases, usage: UsageStore, segmentEntries?: number, filterSegmentEntries = segmentEntries) {
    this.db = dbs.entries;
    this.parts = dbs.parts;
    this.stored = new StoredBlocks(this.db, this.parts);
    this.stats = new StatsStore(dbs.stats);
    this.bounds = new BoundsStore(dbs.bounds);
    this.merger = new Merger(this.db, this.parts, this.stats, this.bounds);
    this.postings = new Postings(dbs.postings, dbs.unindexed);
    this.postings.recover((ws, env, ms, firstId) => {
      const block = this.readBlock({ ws, env }, ms, firstId);
      return block && blockTerms(block.entries());
    });
    this.dictionary = new Dictionary(dbs.dictionary);
    this.fulltext = new FullText(dbs.fulltext, (ws, env, after) => this.blockTextsAfter(ws, env, after), segmentEntries);
    this.needles = new NeedleIndex(dbs.filters, dbs.filtersHeld, filterSegmentEntries);
    this.needles.recover();
    this.turns = new TurnCommitter({
      entries: this.db,
      postings: this.postings,
      dictionary: this.dictionary,
      needles: this.needles,
      usage,
      stats: this.stats,
      bounds: this.bounds,
      disk: dbs.disk,
    });
    // the indexes kept beside the blocks learn of each block once it is committed
    this.onCommitted((b) => this.postings.hold(b.ws, b.env, b.ms, b.firstId, b.terms));
    this.onCommitted((b) => this.needles.hold(b.ws, b.env, { ms: b.ms, firstId: b.firstId, size: b.size, stripes: b.filters }));
    this.onCommitted((b) => this.merger.committed(b.ws, b.env, b.ms, b.firstId, b.size));
    this.onCommitted((b) => this.fulltext.add(b.ws, b.env, { ms: b.ms, firstId: b.firstId, text: b.words, entries: b.size }));
  }

  /**
   * append stores one write's entries, their index entries and their count, atomically, unless that
   * would pass `monthlyLimit` (-1: none); then it stores nothing. Resolves once committed, with the
   * verdict; by then the entries are findable through every index and full text.
   */
  append(tenant: Tenant, serverMs: number, entries: Entry[], monthlyLimit: number, alsoPut?: Write["alsoPut"]): Promise<Verdict> {
    const { ws, env } = tenant;
    return this.enqueue({ ws, env, serverMs, count: entries.length, entries, monthlyLimit, alsoPut });
  }

  /** appendPrepared is append for blocks encoded off the main thread (encode.ts); `ids` ascend across them. */
  appendPrepared(tenant: Tenant, serverMs: number, ids: string[], blocks: EncodedBlock[], monthlyLimit: number, alsoPut?: Write["alsoPut"]): Promise<Verdict> {
    const { ws, env } = tenant;
    return this.enqueue({ ws, env, serverMs, count: ids.length, prepared: { ids, blocks }, monthlyLimit, alsoPut });
  }

  /** onCommitted calls `listener` once with each block after it is committed, before its write is answered. */
  onCommitted(listener: (block: CommittedBlock) => void): void {
    this.turns.onCommitted(listener);
  }

  /** onDeleted calls `listener` after each deletion of blocks older than `beforeMs` commits (retention). */
  onDeleted(listener: (tenant: Tenant, beforeMs: number) => void): void {
    this.deletedListeners.push(listener);
  }

  /** settled ends what a clean stop waits for: a sealed full-text segment is persisted, held postings are stored (a restart has none to recover). */
  async settled(): Promise<void> {
    await this.merger.stop();
    await this.needles.stopMerging();
    await this.fulltext.settled();
    await this.postings.settled();
  }

  /** startMerging merges small blocks into parts, and filter segments into larger ones, in the background until settled (merge.ts, needle-index.ts). */
  startMerging(pace: MergePace = DEFAULT_PACE): void {
    this.merger.start(pace);
    this.needles.startMerging(pace.retireMs);
  }

  /** mergeFilterSegments merges a tenant's filter segments as the background would, until none are due (needle-index.ts). */
  mergeFilterSegments(tenant: Tenant): Promise<number> {
    return this.needles.mergeAll(tenant.ws, tenant.env);
  }

  /** close ends the full-text worker thread; settle first. */
  close(): Promise<void> {
    return this.fulltext.close();
  }

  private enqueue(write: Write): Promise<Verdict> {
    const behind = this.fulltext.caughtUp();
    const first = { ms: write.serverMs, id: write.entries ? write.entries[0].id : write.prepared!.ids[0] };
    return this.inFlight.track(write, first, behind ? behind.then(() => this.turns.commit(write)) : this.turns.commit(write));
  }

  /** get finds one entry by id within a workspace environment. */
  get(tenant: Tenant, id: string): Row | undefined {
    const ref = this.locate(tenant, id);
    if (!ref) return undefined;
    const block = this.readBlock(tenant, ref.ms, ref.firstId)!;
    return { serverMs: ref.ms, entry: block.entry(ref.positions![0]) };
  }

  /** locate finds the block and position of an entry by id. */
  locate(tenant: Tenant, id: string): BlockRef | undefined {
    const { ws, env } = tenant;
    const ms = uuidTimeMs(id);
    if (!(ms >= 0 && ms < 8.64e15)) return undefined;
    for (const { key, value } of this.db.getRange({ start: [ws, env, ms, id], end: [ws, env, ms], reverse: true })) {
      const i = this.stored.decode(tenant, ms, (key as unknown[])[3] as string, value as Uint8Array)?.indexOf(id) ?? -1;
      if (i >= 0) return { ms, firstId: (key as unknown[])[3] as string, positions: [i] };
    }
    return undefined;
  }

  /** blocks yields every block of a range as a reference, newest first: the full scan. */
  *blocks(tenant: Tenant, range: ScanRange): Generator<BlockRef> {
    const { ws, env } = tenant;
    const { start, fromMs } = rangeKeys(range);
    if (!start) return;
    for (const key of resumingKeys(this.db, { start: [ws, env, ...start], end: [ws, env, fromMs], reverse: true })) {
      const k = key as unknown[];
      yield { ms: k[2] as number, firstId: k[3] as string, positions: null };
    }
  }

  /** blocksAscending yields every block of [fromMs, toMs) as a reference, oldest first (live tails and context read forward). */
  *blocksAscending(tenant: Tenant, fromMs: number, toMs: number): Generator<BlockRef> {
    const { ws, env } = tenant;
    for (const key of resumingKeys(this.db, { start: [ws, env, Math.max(0, fromMs)], end: [ws, env, Math.min(toMs, 8.64e15)] })) {
      const k = key as unknown[];
      yield { ms: k[2] as number, firstId: k[3] as string, positions: null };
    }
  }

  /** postingBlocks yields the blocks holding a level, tag or exact action within a range, newest first. */
  postingBlocks(tenant: Tenant, kind: PostingKind, term: string, range: ScanRange): Iterable<BlockRef> {
    const { ws, env } = tenant;
    return this.postings.blocks(ws, env, kind, term, range);
  }

  /** postingSizes yields the blocks holding a level, tag or exact action within a range with how many entries carry it (null: all), in no set order. */
  postingSizes(tenant: Tenant, kind: PostingKind, term: string, range: ScanRange): Iterable<{ ms: number; firstId: string; n: number | null }> {
    const { ws, env } = tenant;
    return this.postings.sizes(ws, env, kind, term, range);
  }

  /** countPostingBlocks counts postingBlocks, stopping at cap (planner estimates). */
  countPostingBlocks(tenant: Tenant, kind: PostingKind, term: string, range: ScanRange, cap: number): number {
    const { ws, env } = tenant;
    return this.postings.count(ws, env, kind, term, range, cap);
  }

  /** actions lists the distinct actions that pass `test`, narrowed by the trigrams of `literal` (dictionary.ts). */
  actions(tenant: Tenant, literal: string, test: (action: string) => boolean): string[] {
    const { ws, env } = tenant;
    return this.dictionary.actions(ws, env, literal, test);
  }

  /** textBlocks yields the blocks that may hold every one of `words` within a range, newest first (full text). */
  textBlocks(tenant: Tenant, words: string[], range: ScanRange): Iterable<BlockRef> {
    const { ws, env } = tenant;
    return this.fulltext.blocks(ws, env, words, range);
  }

  /** estimateTextBlocks estimates textBlocks' count from the segments in memory (planner estimates). */
  estimateTextBlocks(tenant: Tenant, words: string[]): number {
    const { ws, env } = tenant;
    return this.fulltext.estimate(ws, env, words);
  }

  /** needleBlocks yields the blocks within a range whose filter may hold the needle, newest first (needles.ts). */
  needleBlocks(tenant: Tenant, needle: Needle, range: ScanRange): Iterable<BlockRef> {
    return this.needles.blocks(tenant, needle, range);
  }

  /**
   * countBlocks counts a range's blocks, stopping at cap (planner estimates), without decoding their keys; `reach` is
   * the millisecond of the cap-th block when the count stopped there.
   */
  countBlocks(tenant: Tenant, range: ScanRange, cap: number): { n: number; reach?: number } {
    const { ws, env } = tenant;
    const { start, fromMs } = rangeKeys(range);
    if (!start) return { n: 0 };
    const { n, last } = countKeys(this.db, { start: [ws, env, ...start], end: [ws, env, fromMs], reverse: true }, cap);
    return { n, reach: last === undefined ? undefined : ((last as unknown[])[2] as number) };
  }

  /** signature digests which blocks [fromMs, toMs) holds: it differs once a block is stored or deleted there (signature.ts). */
  signature(tenant: Tenant, fromMs: number, toMs: number): string {
    return blockSignature(this.db, tenant, fromMs, toMs);
  }

  /**
   * deleteBefore removes up to `maxBlocks` blocks older than `beforeMs`, with their postings, in one
   * transaction and returns how many entries went; callers loop until it returns 0, so ingestion never waits long.
   */
  async deleteBefore(tenant: Tenant, beforeMs: number, maxBlocks: number): Promise<number> {
    const { ws, env } = tenant;
    await this.postings.flush(); // the postings to remove are stored, none in flight
    const doomed = [...this.db.getKeys({ start: [ws, env, 0], end: [ws, env, beforeMs], limit: maxBlocks, snapshot: false })];
    if (doomed.length === 0) {
      await this.fulltext.dropBefore(ws, env, beforeMs);
      await this.needles.dropBefore(ws, env, beforeMs);
      return 0;
    }
    const counted: [number, number, number] = [0, 0, 0]; // entries, raw, block bytes taken off the stats
    const gone: string[] = []; // blocks' and parts' names
    // a read until the deletion commits may keep a block again: let them go once it has
    const forget = () => this.stored.forget(gone);
    const done = this.db.transaction(() => {
      const postings = new Map<string, { kind: PostingKind; term: string; blocks: { ms: number; firstId: string }[] }>();
      for (const key of doomed) {
        const [, , ms, firstId] = key as [string, Environment, number, string];
        const value = this.db.get(key) as Uint8Array | undefined;
        if (!value) continue;
        const block = this.stored.decode(tenant, ms, firstId, value);
        if (!block) throw new Error(`block ${ms} ${firstId} points into a part that is missing: the data directory is damaged; restore it from a backup`);
        const pointer = pointerOf(value);
        let bytes = value.length;
        if (!pointer) this.bounds.removeSync(ws, env, ms, firstId);
        else if (pointer.last) {
          // the part's other blocks are older: deleted already, or in this batch
          const part = partOf(this.parts, ws, env, ms, firstId)!;
          bytes += (this.parts.get([ws, env, part.ms, part.firstId]) as Uint8Array | undefined)?.length ?? 0;
          this.parts.removeSync([ws, env, part.ms, part.firstId]);
          this.bounds.removeSync(ws, env, part.ms, part.firstId);
          gone.push(partName(ws, env, part.ms, part.firstId));
        }
        for (const [kind, term] of termsOf(block.entries())) {
          const at = `${kind}\u0000${term}`;
          const t = postings.get(at) ?? postings.set(at, { kind, term, blocks: [] }).get(at)!;
          t.blocks.push({ ms, firstId });
        }
        this.needles.removeHeld(ws, env, ms, firstId);
        this.db.removeSync(key);
        gone.push(blockName(ws, env, ms, firstId));
        const raw = block.rawSize();
        this.stats.add(ws, env, -block.size, -raw, -bytes);
        counted[0] += block.size;
        counted[1] += raw;
        counted[2] += bytes;
      }
      for (const { kind, term, blocks } of postings.values()) this.postings.removeBlocks(ws, env, kind, term, blocks);
      this.stats.putSync(ws, env);
      return counted[0];
    });
    return done.then(
      (n) => {
        forget();
        for (const listener of this.deletedListeners) listener(tenant, beforeMs);
        return n;
      },
      (e) => {
        this.stats.add(ws, env, ...counted); // nothing was deleted
        throw e;
      },
    );
  }

  /** clientBounds gives a block's smallest and largest client timestamp; undefined when only reading the block tells. */
  clientBounds(tenant: Tenant, ms: number, firstId: string): ClientBounds | undefined {
    return this.bounds.get(tenant.ws, tenant.env, ms, firstId);
  }

  /** oldestReaching is the oldest block whose latest client time is at least `atLeast`; null when none is; undefined past `cap` such blocks (bounds.ts). */
  oldestReaching(tenant: Tenant, atLeast: number, cap?: number): BlockKey | null | undefined {
    return this.bounds.oldestReaching(tenant.ws, tenant.env, atLeast, cap);
  }

  /** readBlock reads one block by its key; undefined once it is deleted (retention). */
  readBlock(tenant: Tenant, ms: number, firstId: string): Block | undefined {
    return this.stored.read(tenant, ms, firstId);
  }

  /**
   * readBlockTransient is readBlock into lmdb-js's reused buffer instead of a new copy: the block is valid only until
   * the next read of this store, so a caller reads what it needs of it at once (counting reads thousands of blocks).
   * `keep: false` is for a read of many blocks, none read again: a packed one is then not copied out either.
   */
  readBlockTransient(tenant: Tenant, ms: number, firstId: string, keep = true): Block | undefined {
    return this.stored.readTransient(tenant, ms, firstId, keep);
  }

  /** blockSize is the number of entries of a block, read without decoding it; undefined once it is deleted. */
  blockSize(tenant: Tenant, ms: number, firstId: string): number | undefined {
    return this.stored.size(tenant, ms, firstId);
  }

  private *blockTextsAfter(ws: string, env: Environment, after: [number, string] | undefined): Generator<BlockText> {
    const start = after ? [ws, env, after[0], `${after[1]}\u0000`] : [ws, env, 0];
    for (const { key, value } of this.db.getRange({ start, end: [ws, env, 8.64e15], snapshot: false })) {
      const ms = (key as unknown[])[2] as number;
      const block = this.stored.decode({ ws, env }, ms, (key as unknown[])[3] as string, value as Uint8Array);
      if (!block) continue; // retention took it
      const entries = block.entries();
      yield { ms, firstId: entries[0].id, text: blockWords(entries), entries: entries.length };
    }
  }
}
