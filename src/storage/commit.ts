// commit: the writes of one event-loop turn, stored together in one LMDB transaction.
// Writes to one tenant at one millisecond share blocks, so many single-entry requests cost one block,
// one set of postings and one full-text add. Everything that can fail (the quota, block encoding) runs
// before the first put; then nothing awaits: lmdb-js commits every put of one event turn in one
// transaction, on its write thread, so each write is all or nothing (and a failed commit fails the
// turn's writes together). The key layout is at the top of entries.ts.
import { ownCopy } from "../ids.ts";
import { TurnQueue } from "../turn.ts";
import type { Database } from "lmdb";
import type { Environment } from "../schema.ts";
import { BLOCK_MAX, Block, type Entry } from "./format/block.ts";
import { assembleBlock } from "./format/block-encode.ts";
import type { Dictionary } from "./indexes/dictionary.ts";
import type { DiskSpace } from "./disk.ts";
import { encodeEntries, type EncodedBlock } from "./format/encode.ts";
import type { DocumentText } from "./indexes/fulltext-encoder.ts";
import type { NeedleIndex } from "./indexes/needle-index.ts";
import type { Postings } from "./indexes/postings.ts";
import type { BlockTerms } from "./indexes/posting-terms.ts";
import { clientBoundsOf, type BoundsStore, type ClientBounds } from "./indexes/bounds.ts";
import type { StatsStore } from "./stats.ts";
import { monthOf, type UsageStore } from "./usage.ts";

/** Write is one request's entries for one tenant and server millisecond, with its monthly limit (-1: none). */
export interface Write {
  ws: string;
  env: Environment;
  serverMs: number;
  count: number;
  /** entries to store in blocks shared with the turn's other writes... */
  entries?: Entry[];
  /** ...or blocks encoded already (EncodedBlock), with their ids, stored as they are */
  prepared?: { ids: string[]; blocks: EncodedBlock[] };
  monthlyLimit: number;
  /** a put to make in the same transaction, stored or refused (cluster: the log sequence this write applies) */
  alsoPut?: () => Promise<unknown>;
}

/** Verdict is a write's outcome: stored, or refused by the monthly limit; `used` is the month's count after it. */
export interface Verdict {
  stored: boolean;
  used: number;
}

interface PendingWrite extends Write {
  used?: number;
  resolve: (verdict: Verdict) => void;
  reject: (e: unknown) => void;
}

/** Stores are what a turn writes to, in its transaction. */
export interface Stores {
  entries: Database;
  postings: Postings;
  dictionary: Dictionary;
  needles: NeedleIndex;
  usage: UsageStore;
  stats: StatsStore;
  bounds: BoundsStore;
  disk: DiskSpace;
}

/** CommittedBlock is a block as it is announced once committed: what the indexes kept beside storage need of it. */
export interface CommittedBlock {
  ws: string;
  env: Environment;
  ms: number;
  firstId: string;
  size: number;
  terms: BlockTerms;
  /** the full-text document (blockWords, or its terms) */
  words: DocumentText;
  /** the filters of its rare values, one per stripe (needles.ts) */
  filters: Uint32Array[];
  /** its entries' raw JSON in bytes, without the environment's name (raw-size.ts) */
  raw: number;
  /** its entries' smallest and largest clientMs (bounds.ts) */
  clientBounds: ClientBounds;
  /** the block as stored (Block.decode reads it) */
  value: Uint8Array;
  /** the entries it was encoded from, when the write brought entries rather than blocks encoded elsewhere */
  entries?: readonly Entry[];
}

/** TurnCommitter gathers the writes of one event-loop turn and commits them together. */
export class TurnCommitter {
  private readonly pending = new TurnQueue<PendingWrite>((writes) => this.commitPending(writes));
  private readonly listeners: ((block: CommittedBlock) => void)[] = [];
  constructor(private readonly to: Stores) {}

  /** onCommitted calls `listener` with each block once it is committed, before its write is answered. */
  onCommitted(listener: (block: CommittedBlock) => void): void {
    this.listeners.push(listener);
  }

  /** commit resolves once the write is committed (or refused by its limit), with its verdict. */
  commit(write: Write): Promise<Verdict> {
    return new Promise((resolve, reject) => {
      this.pending.push({ ...write, resolve, reject });
    });
  }

  /** commitPending stores the writes of the turn that just ended (see the top of this file). */
  private commitPending(writes: PendingWrite[]): void {
    const stored: PendingWrite[] = [];
    let blocks: ReadyBlock[];
    try {
      for (const w of writes) {
        const taken = this.to.usage.take(w.ws, monthOf(w.serverMs), w.count, w.monthlyLimit); // in arrival order
        if (taken.ok) {
          w.used = taken.used;
          stored.push(w);
        } else w.resolve({ stored: false, used: taken.used });
      }
      blocks = readyBlocks(stored);
    } catch (e) {
      this.giveBack(stored);
      for (const w of writes) w.reject(e); // a write answered already stays answered
      return;
    }
    const puts: Promise<unknown>[] = [];
    for (const w of writes) if (w.alsoPut) puts.push(w.alsoPut());
    if (stored.length === 0) return;
    for (const w of new Map(stored.map((w) => [`${w.ws}\u0000${monthOf(w.serverMs)}`, w])).values()) puts.push(this.to.usage.put(w.ws, monthOf(w.serverMs)));
    for (const b of blocks) this.to.stats.add(b.ws, b.env, b.size, b.raw, b.value.length);
    for (const b of new Map(blocks.map((b) => [`${b.ws}\u0000${b.env}`, b])).values()) puts.push(this.to.stats.put(b.ws, b.env));
    for (const b of blocks) {
      puts.push(this.to.entries.put([b.ws, b.env, b.ms, b.firstId], b.value));
      puts.push(this.to.bounds.put(b.ws, b.env, b.ms, b.firstId, b.clientBounds));
      puts.push(this.to.postings.mark(b.ws, b.env, b.ms, b.firstId)); // its postings are held, then stored in batches (postings.ts)
      puts.push(this.to.needles.mark(b.ws, b.env, { ms: b.ms, firstId: b.firstId, size: b.size, stripes: b.filters }));
      this.to.dictionary.add(b.ws, b.env, b.actions, puts);
    }
    const bytes = blocks.reduce((n, b) => n + b.value.length, 0);
    Promise.all(puts).then(
      () => {
        this.to.disk.stored(bytes);
        for (const b of blocks) for (const listener of this.listeners) listener(b);
        for (const w of stored) w.resolve({ stored: true, used: w.used! });
      },
      async (e) => {
        const refused = await this.to.disk.refused(e, bytes);
        this.giveBack(stored);
        this.uncount(blocks);
        for (const w of stored) w.reject(refused);
      },
    );
  }

  /** uncount takes blocks that were not stored off the stats; later turns may have put figures that counted them, so the corrected ones are put after them. */
  private uncount(blocks: ReadyBlock[]): void {
    for (const b of blocks) this.to.stats.add(b.ws, b.env, -b.size, -b.raw, -b.value.length);
    for (const b of new Map(blocks.map((b) => [`${b.ws}\u0000${b.env}`, b])).values()) this.to.stats.put(b.ws, b.env).catch(() => {});
  }

  /** giveBack returns the counts of writes that were not stored; at worst usage stays over-counted for a while, so the quota never overshoots. */
  private giveBack(writes: PendingWrite[]): void {
    for (const w of writes) this.to.usage.giveBack(w.ws, monthOf(w.serverMs), w.count).catch(() => {});
  }
}

/** sizedFrom gives a prepared block's raw size and client bounds, read from the block when a cluster write from before them lacks them. */
function sizedFrom(b: EncodedBlock, ms: number, value: Uint8Array): { raw: number; clientBounds: ClientBounds } {
  if (b.raw !== undefined && b.clientBounds !== undefined) return { raw: b.raw, clientBounds: b.clientBounds };
  const block = Block.decode(ms, value);
  return { raw: block.rawSize(), clientBounds: clientBoundsOf(block.size, (i) => block.clientMs(i)) };
}

/** ReadyBlock is one block of a turn's writes, encoded, with what its puts and its announcement need. */
interface ReadyBlock extends CommittedBlock {
  actions: Iterable<string>;
}

/** readyBlocks encodes the blocks of a turn's stored writes: entries of one tenant and millisecond together, prepared blocks as they are. */
function readyBlocks(writes: PendingWrite[]): ReadyBlock[] {
  const out: ReadyBlock[] = [];
  const groups = new Map<string, (PendingWrite & { entries: Entry[] })[]>();
  for (const w of writes) {
    if (w.prepared) {
      let at = 0;
      for (const b of w.prepared.blocks) {
        const ids = w.prepared.ids.slice(at, (at += b.size));
        const value = assembleBlock(ids, b.columns);
        out.push({
          ws: w.ws,
          env: w.env,
          ms: w.serverMs,
          firstId: ownCopy(ids[0]), // indexes keep it as long as the block lives
          size: b.size,
          value,
          terms: b.terms,
          actions: b.actions,
          words: b.text,
          filters: b.filters,
          ...sizedFrom(b, w.serverMs, value),
        });
      }
    } else {
      const key = `${w.ws}\u0000${w.env}\u0000${w.serverMs}`;
      const group = w as PendingWrite & { entries: Entry[] };
      groups.get(key)?.push(group) ?? groups.set(key, [group]);
    }
  }
  for (const group of groups.values()) {
    const { ws, env, serverMs } = group[0];
    // ids ascend within a block: each write's ids do, and writes' id ranges never interleave
    if (group.length > 1) group.sort((a, b) => (a.entries[0].id < b.entries[0].id ? -1 : 1));
    const entries = group.length === 1 ? group[0].entries : group.flatMap((w) => w.entries);
    for (let i = 0; i < entries.length; i += BLOCK_MAX) {
      const block = entries.length <= BLOCK_MAX ? entries : entries.slice(i, i + BLOCK_MAX);
      const b = encodeEntries(block); // on the main thread: the full-text worker splits the words
      out.push({
        ws,
        env,
        ms: serverMs,
        firstId: ownCopy(block[0].id),
        size: b.size,
        value: assembleBlock(
          block.map((e) => e.id),
          b.columns,
        ),
        terms: b.terms,
        actions: b.actions,
        words: b.text,
        filters: b.filters,
        raw: b.raw!,
        clientBounds: b.clientBounds!,
        entries: block,
      });
    }
  }
  return out;
}
