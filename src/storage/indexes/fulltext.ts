// fulltext: FlexSearch over the words of action and message, one document per block, in time segments.
//
// Each workspace environment has sealed segments, persisted in LMDB and loaded on demand (at most
// MAX_LOADED in memory), and one active segment in memory, rebuilt at start from the blocks written
// after the last sealed one. The indexes live in a worker thread (fulltext-client.ts): a block is posted
// to it right after its commit, before the write is acknowledged, and a search waits for every add
// posted before it, so an acknowledged entry is at once findable.
// A document holds every word of its block, so a search yields a superset of the matching blocks;
// the query engine checks each entry exactly.
//
// Key layout (db `fulltext`):
//   [workspaceId, environment, "s", segmentNo] → SegmentMeta
//   [workspaceId, environment, "c", segmentNo, chunkNo] → [exportKey, exportData] (FlexSearch export, fulltext-chunks.ts)
import type { Database } from "lmdb";
import type { Environment } from "../../schema.ts";
import { FullTextWorker, MAX_BACKLOG } from "./fulltext-client.ts";
import type { Chunk } from "./fulltext-chunks.ts";
import type { DocumentText } from "./fulltext-encoder.ts";
import { rangeKeys, type BlockRef, type ScanRange } from "../keys.ts";

/** BlockText is what the index needs of a block: its key and its document (fulltext-encoder.ts). */
export interface BlockText {
  ms: number;
  firstId: string;
  text: DocumentText;
  entries: number;
}

interface SegmentMeta {
  no: number;
  /** document number → block key, in key order */
  blocks: [ms: number, firstId: string][];
  entries: number;
  /** the index holds words of any length; segments sealed before it was set lack words over LONG_WORD characters */
  longWords?: true;
}

/** FlexSearch's Encoder, which built the segments of older data directories, dropped longer words from the index */
const LONG_WORD = 1024;

interface Segment extends SegmentMeta {
  /** the index in the worker */
  index: number;
  /** the blocks in it, so that one is never added twice (a tenant's first add follows its rebuild) */
  has: Set<string>;
}

interface TenantIndex {
  sealed: SegmentMeta[]; // ascending by no (= by time)
  active: Segment;
}

const MAX_LOADED = 4;

export class FullText {
  private readonly tenants = new Map<string, TenantIndex>();
  private readonly loaded = new Map<string, number>(); // sealed segment → its index in the worker, least recently used first
  private readonly sealing = new Map<string, Promise<unknown>>(); // segments whose export is not yet persisted
  private readonly unsearched = new Set<string>(); // sealed segments no search has asked for since: unloaded once persisted
  private readonly memoryOnly = new Set<string>(); // sealed segments that failed to persist: kept loaded until a restart rebuilds them
  private readonly worker = new FullTextWorker();
  private unpersisted = false; // a sealed segment failed to persist: later ones must not either, so a restart rebuilds them all
  private rebuilt = 0; // blocks read back from storage to rebuild active segments since start

  constructor(
    private readonly db: Database,
    /** blocksAfter yields a tenant's blocks after a key (all when undefined), oldest first */
    private readonly blocksAfter: (ws: string, env: Environment, after: [number, string] | undefined) => Iterable<BlockText>,
    private readonly segmentEntries = 200_000,
  ) {}

  /** add puts a committed block into the active segment, sealing it when full. */
  add(ws: string, env: Environment, block: BlockText): void {
    const t = this.tenant(ws, env);
    this.put(t.active, block);
    if (t.active.entries >= this.segmentEntries) this.seal(ws, env, t);
  }

  /**
   * caughtUp resolves once the worker's backlog is small: writers wait for it, so a slow index slows ingest instead
   * of growing memory. It is undefined when there is nothing to wait for, which spares each write a promise.
   */
  caughtUp(): Promise<void> | undefined {
    if (this.worker.backlog() <= MAX_BACKLOG) return undefined;
    return (async () => {
      while (this.worker.backlog() > MAX_BACKLOG) await Bun.sleep(1);
    })();
  }

  /** blocks yields the blocks that may hold every one of `words`, newest first, within a range. */
  *blocks(ws: string, env: Environment, words: string[], range: ScanRange): Generator<BlockRef> {
    const t = this.tenant(ws, env);
    const { start } = rangeKeys(range);
    if (!start) return;
    const top: [number, string] = start.length === 2 ? [start[0] as number, start[1] as string] : [start[0] as number, ""];
    for (const seg of [t.active, ...[...t.sealed].reverse()]) {
      if (seg.blocks.length === 0) continue;
      const [lastMs] = seg.blocks[seg.blocks.length - 1];
      const [firstMs] = seg.blocks[0];
      if (lastMs < range.fromMs) break; // this and every older segment end before the range
      if (firstMs > top[0]) continue;
      const docs = this.lacksWords(seg, words)
        ? seg.blocks.map((_, d) => d)
        : this.worker.search(this.indexOf(ws, env, seg), words.join(" "), seg.blocks.length);
      const hits = docs.map((d) => seg.blocks[d]).sort(([am, ai], [bm, bi]) => bm - am || (ai < bi ? 1 : ai > bi ? -1 : 0));
      for (const [ms, firstId] of hits) {
        if (ms < range.fromMs) break;
        if (ms > top[0] || (ms === top[0] && start.length === 2 && firstId > top[1])) continue;
        yield { ms, firstId, positions: null };
      }
    }
  }

  /**
   * estimate counts candidate blocks in the segments already in memory (the active one and the loaded sealed
   * ones; no I/O) and scales the count to every segment by entries (planner use). A segment a search would have to
   * load adds its blocks: reading its index costs about what reading them would.
   */
  estimate(ws: string, env: Environment, words: string[]): number {
    const t = this.tenant(ws, env);
    const query = words.join(" ");
    let hits = 0;
    let sampled = 0;
    let total = t.active.entries;
    let toLoad = 0;
    const inMemory: { index: number; blocks: unknown[]; entries: number; lacksWords?: boolean }[] = [t.active];
    for (const seg of t.sealed) {
      total += seg.entries;
      const index = this.loaded.get(`${ws}\u0000${env}\u0000${seg.no}`);
      if (index) inMemory.push({ index, blocks: seg.blocks, entries: seg.entries, lacksWords: this.lacksWords(seg, words) });
      else toLoad += seg.blocks.length;
    }
    for (const seg of inMemory) {
      if (seg.blocks.length === 0) continue;
      hits += seg.lacksWords ? seg.blocks.length : this.worker.search(seg.index, query, seg.blocks.length).length;
      sampled += seg.entries;
    }
    return toLoad + (sampled === 0 ? 0 : Math.ceil((hits * total) / sampled));
  }

  /** lacksWords tells whether a segment's index may lack some of the words: then every block of it is a candidate. */
  private lacksWords(seg: SegmentMeta, words: string[]): boolean {
    return !seg.longWords && words.some((w) => w.length > LONG_WORD);
  }

  /** dropBefore forgets sealed segments whose every block is older than ms (retention). */
  async dropBefore(ws: string, env: Environment, ms: number): Promise<void> {
    const t = this.tenant(ws, env);
    const gone = t.sealed.filter((s) => s.blocks[s.blocks.length - 1][0] < ms);
    if (gone.length === 0) return;
    t.sealed = t.sealed.filter((s) => !gone.includes(s));
    await this.db.transaction(() => {
      for (const s of gone) {
        this.unload(`${ws}\u0000${env}\u0000${s.no}`);
        this.db.removeSync([ws, env, "s", s.no]);
        for (const key of this.db.getKeys({ start: [ws, env, "c", s.no], end: [ws, env, "c", s.no + 1] })) this.db.removeSync(key);
      }
    });
  }

  /** stats tells how the index stands: segments sealed and loaded, and what the active segments hold (for /metrics and tests). */
  stats(): { tenants: number; sealed: number; loaded: number; activeBlocks: number; activeEntries: number; rebuiltBlocks: number } {
    let sealed = 0;
    let activeBlocks = 0;
    let activeEntries = 0;
    for (const t of this.tenants.values()) {
      sealed += t.sealed.length;
      activeBlocks += t.active.blocks.length;
      activeEntries += t.active.entries;
    }
    return { tenants: this.tenants.size, sealed, loaded: this.loaded.size, activeBlocks, activeEntries, rebuiltBlocks: this.rebuilt };
  }

  /** close ends the worker thread that holds the indexes; settle first. */
  close(): Promise<void> {
    return this.worker.close();
  }

  /** settled resolves once every segment being sealed is persisted. */
  async settled(): Promise<void> {
    await Promise.all([...this.sealing.values()]);
  }

  /** open loads a tenant's sealed segment list and rebuilds its active segment from storage. */
  private tenant(ws: string, env: Environment): TenantIndex {
    const id = `${ws}\u0000${env}`;
    let t = this.tenants.get(id);
    if (t) return t;
    const sealed = [...this.db.getRange({ start: [ws, env, "s"], end: [ws, env, "s\u0000"] }).map(({ value }) => value as SegmentMeta)];
    const last = sealed[sealed.length - 1];
    const active: Segment = { no: (last?.no ?? 0) + 1, blocks: [], entries: 0, longWords: true, index: this.worker.newIndex(), has: new Set() };
    t = { sealed, active };
    this.tenants.set(id, t);
    for (const block of this.blocksAfter(ws, env, last ? last.blocks[last.blocks.length - 1] : undefined)) {
      this.rebuilt++;
      this.put(t.active, block);
      if (t.active.entries >= this.segmentEntries) this.seal(ws, env, t);
    }
    return t;
  }

  private put(seg: Segment, block: BlockText): void {
    const key = `${block.ms}/${block.firstId}`;
    if (seg.has.has(key)) return;
    seg.has.add(key);
    this.worker.add(seg.index, seg.blocks.length, block.text, block.entries);
    seg.blocks.push([block.ms, block.firstId]);
    seg.entries += block.entries;
  }

  /**
   * seal starts a new active segment and persists the full one once the worker has exported it; it stays loaded
   * meanwhile, and after only if a search asked for it (an ingest would otherwise keep the last MAX_LOADED in memory).
   */
  private seal(ws: string, env: Environment, t: TenantIndex): void {
    const seg = t.active;
    const meta: SegmentMeta = { no: seg.no, blocks: seg.blocks, entries: seg.entries, longWords: seg.longWords };
    const id = `${ws}\u0000${env}\u0000${seg.no}`;
    t.sealed.push(meta);
    t.active = { no: seg.no + 1, blocks: [], entries: 0, longWords: true, index: this.worker.newIndex(), has: new Set() };
    // segments persist in order (one after the other), so a failed one never leaves a later one on disk
    const write = Promise.all([...this.sealing.values()])
      .then(() => this.worker.export(seg.index))
      .then((chunks) => {
        if (this.unpersisted) throw new Error(`segment ${seg.no} follows one that was not persisted`);
        return this.db.transaction(() => {
          for (const [i, c] of chunks.entries()) this.db.put([ws, env, "c", seg.no, i], c);
          this.db.put([ws, env, "s", seg.no], meta);
        });
      })
      .catch((e) => {
        this.unpersisted = true;
        this.memoryOnly.add(id);
        console.error(JSON.stringify({ level: "error", msg: "a full-text segment could not be persisted; it is rebuilt at the next start", error: String(e) }));
      });
    this.sealing.set(id, write);
    this.loaded.set(id, seg.index);
    this.unsearched.add(id);
    void write.finally(() => {
      this.sealing.delete(id);
      if (this.unsearched.delete(id) && !this.memoryOnly.has(id)) this.unload(id);
      this.trim(); // it may be unloaded now, as the segments loaded beside it
    });
  }

  private indexOf(ws: string, env: Environment, seg: SegmentMeta | Segment): number {
    if ("index" in seg) return seg.index;
    const id = `${ws}\u0000${env}\u0000${seg.no}`;
    let index = this.loaded.get(id);
    if (index === undefined) {
      index = this.worker.newIndex();
      const chunks = this.db.getRange({ start: [ws, env, "c", seg.no], end: [ws, env, "c", seg.no + 1] }).map(({ value }) => value as Chunk);
      this.worker.import(index, [...chunks]);
    }
    this.remember(id, index);
    return index;
  }

  /** remember marks a segment most recently used; it stays loaded, however many others are being persisted, for the search at hand. */
  private remember(id: string, index: number): void {
    this.unsearched.delete(id);
    this.loaded.delete(id);
    this.loaded.set(id, index);
    this.trim(id);
  }

  /** trim unloads the least recently used sealed segments past MAX_LOADED, but for `inUse`. */
  private trim(inUse?: string): void {
    for (const old of this.loaded.keys()) {
      if (this.loaded.size <= MAX_LOADED) break;
      // a segment not yet persisted, or that failed to be, can only be searched in memory
      if (!this.sealing.has(old) && !this.memoryOnly.has(old) && old !== inUse) this.unload(old);
    }
  }

  private unload(id: string): void {
    this.unsearched.delete(id);
    this.memoryOnly.delete(id);
    const index = this.loaded.get(id);
    if (index === undefined) return;
    this.loaded.delete(id);
    this.worker.drop(index);
  }
}
