// postings: which blocks hold entries with a given level, tag or exact action, and where in the block.
//
// Key layout (db `postings`): [workspaceId, environment, kind, textKey(term), serverMs, firstId] → a group of blocks
// (posting-groups.ts) keyed by its newest, kind "l" level, "t" tag, "a" action. A term of 64+ UTF-16 units
// stands in the key as its hash (keys.ts): raw, the key encoding would misread some of them. A reverse range scan
// yields groups newest first; their blocks are merged into one newest-first order.
//
// A block's postings are not written with it: each of its terms' keys lands in another leaf page, so
// one block dirtied a page per term (~250 pages for 1,000 entries) and its commit wrote and synced them
// all. They are held in memory instead, with the block's key in db `unindexed` (written in the block's
// transaction, at the end of its range: one page), and written a batch of blocks at a time, which
// dirties a term's page once per batch. Reads merge the held postings with the stored ones, so an
// acknowledged block is found at once; at start the blocks of `unindexed` are held again (a crash).
import type { Database, Key } from "lmdb";
import type { Environment } from "../../schema.ts";
import { newer, rangeKeys, textKey, type BlockRef, type ScanRange } from "../keys.ts";
import { readInPlace } from "../in-place.ts";
import { decodePositions, type BlockTerms, type PostingKind } from "./posting-terms.ts";
import { decodeGroup, encodeGroup, GROUP_BLOCKS, GROUP_SPAN_MS, groupExtent, groupsOf, isGroup, type GroupedBlock } from "./posting-groups.ts";

interface HeldBlock {
  ws: string;
  env: Environment;
  ms: number;
  firstId: string;
  terms: BlockTerms;
}
interface HeldRef {
  ms: number;
  firstId: string;
  positions: Uint8Array;
}
/** held postings by `ws \0 env \0 kind \0 term`: the term and its blocks in the order they were held */
type Held = Map<string, { ws: string; env: Environment; kind: PostingKind; term: string; refs: HeldRef[] }>;

/** A flush starts once this many postings are held (about 30 blocks of 1,000 entries), or FLUSH_MS after the first. */
const FLUSH_POSTINGS = 8192;
const FLUSH_MS = 1000;
/** Postings a flush puts in one event turn (one transaction): more would hold up the requests of that turn. */
const FLUSH_TURN = 512;
/**
 * A flush's blocks join a term's newest stored group only while that group's value is at most this long: a term in
 * every block would otherwise have its growing group decoded and written again by every flush, for ten minutes.
 */
const JOIN_MAX_BYTES = 2048;

/** Postings reads posting lists, held and stored, and writes held ones a batch of blocks at a time. */
export class Postings {
  private held: Held = new Map();
  private heldBlocks: HeldBlock[] = [];
  private heldPostings = 0;
  /** the batch being written: still read from memory until its commit */
  private flushing: { held: Held; done: Promise<boolean> } | undefined;
  private timer: Timer | undefined;

  constructor(
    readonly db: Database,
    private readonly unindexed: Database,
  ) {}

  /** mark records, in the block's own transaction, that its postings are not yet stored. */
  mark(ws: string, env: Environment, ms: number, firstId: string): Promise<unknown> {
    return this.unindexed.put([ws, env, ms, firstId], EMPTY);
  }

  /** hold makes a committed block's postings readable and queues them to be stored. */
  hold(ws: string, env: Environment, ms: number, firstId: string, terms: BlockTerms): void {
    this.keep({ ws, env, ms, firstId, terms });
    if (this.heldPostings >= FLUSH_POSTINGS) void this.flush();
    else this.later();
  }

  private keep(b: HeldBlock): void {
    this.heldBlocks.push(b);
    for (const [kind, term, positions] of b.terms) {
      const key = heldKey(b.ws, b.env, kind, term);
      const ref = { ms: b.ms, firstId: b.firstId, positions };
      const t = this.held.get(key);
      if (t) t.refs.push(ref);
      else this.held.set(key, { ws: b.ws, env: b.env, kind, term, refs: [ref] });
      this.heldPostings++;
    }
  }

  private later(): void {
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
  }

  /** recover holds again the postings of blocks whose key `unindexed` still lists (the process stopped before storing them). */
  recover(termsOfBlock: (ws: string, env: Environment, ms: number, firstId: string) => BlockTerms | undefined): void {
    for (const key of this.unindexed.getKeys({ snapshot: false })) {
      const [ws, env, ms, firstId] = key as [string, Environment, number, string];
      const terms = termsOfBlock(ws, env, ms, firstId);
      if (terms) this.hold(ws, env, ms, firstId, terms);
      else this.unindexed.removeSync(key); // the block went (retention) before its postings were stored
    }
  }

  /**
   * flush stores every held posting, term by term (each term's page is dirtied once), FLUSH_TURN an event turn,
   * then clears the blocks' marks; a crash before that holds them again and the next flush puts the same keys.
   * It resolves to true once all is committed, false when it failed (the postings stay held, to be tried again) or
   * storage is closed. One runs at a time.
   */
  async flush(): Promise<boolean> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.flushing) await this.flushing.done;
    if (this.flushing) return this.flushing.done; // another caller started the next one meanwhile
    if (this.heldBlocks.length === 0) return true;
    // closed without settling, as a test's crash is (lmdb-js zeroes the address): the marks hold the blocks again at the next open
    if (!(this.db as Database & { env: { address: number } }).env.address) return false;
    const blocks = this.heldBlocks;
    const held = this.held;
    this.heldBlocks = [];
    this.held = new Map();
    this.heldPostings = 0;
    const write = async () => {
      const puts: Promise<unknown>[] = [];
      for (const { ws, env, kind, term, refs } of held.values()) {
        const key = textKey(term);
        const sorted = refs.map((r) => ({ ms: r.ms, firstId: r.firstId, positions: decodePositions(r.positions) })).sort(byNewest);
        const newestFirst = sorted.filter((b, i) => i === 0 || newer(sorted[i - 1], b)); // a block held twice (a restart holds its marks again) is stored once
        const groups = groupsOf(newestFirst);
        // the term's newest stored group takes the oldest of these when they fit in one: a term that comes once a flush
        // then costs a key a group, not a key a flush (its old key goes in the same transaction as the group's new one)
        const top = this.newestGroup(ws, env, kind, key);
        const oldest = groups[groups.length - 1];
        let replaced: unknown[] | undefined;
        // not when a group of these is keyed where the stored one is: that one stores the two together already
        if (top && !groups.some((g) => g[0].ms === top.at[4] && g[0].firstId === top.at[5])) {
          const both = [...oldest, ...top.blocks].sort(byNewest).filter((b, i, all) => i === 0 || newer(all[i - 1], b));
          if (both.length <= GROUP_BLOCKS && both[0].ms - both[both.length - 1].ms <= GROUP_SPAN_MS) {
            groups[groups.length - 1] = both;
            if (both[0].ms !== top.at[4] || both[0].firstId !== top.at[5]) replaced = top.at;
          }
        }
        for (const group of groups) {
          const at = [ws, env, kind, key, group[0].ms, group[0].firstId];
          if (group === groups[groups.length - 1] && replaced) puts.push(this.db.remove(replaced as Key));
          puts.push(this.db.put(at, encodeGroup(withStored(at, this.db.get(at) as Uint8Array | undefined, group))));
          if (puts.length >= FLUSH_TURN) await Promise.all(puts.splice(0)); // committed: the next puts are the next turn's
        }
      }
      for (const b of blocks) puts.push(this.unindexed.remove([b.ws, b.env, b.ms, b.firstId]));
      await Promise.all(puts);
    };
    const done = write().then(
      () => {
        this.flushing = undefined;
        return true;
      },
      (e) => {
        this.flushing = undefined;
        console.error(JSON.stringify({ level: "error", msg: "storing postings failed; they stay held and are tried again in a second", error: String(e) }));
        for (const b of blocks) this.keep(b);
        this.later();
        return false;
      },
    );
    this.flushing = { held, done };
    return done;
  }

  /** newestGroup is a term's newest stored group, with its key; undefined when it has none (or only the layout before groups). */
  private newestGroup(ws: string, env: Environment, kind: PostingKind, key: string): { at: unknown[]; blocks: GroupedBlock[] } | undefined {
    for (const { key: at, value } of this.db.getRange({
      start: [ws, env, kind, key, MAX_MS],
      end: [ws, env, kind, key, -1],
      reverse: true,
      limit: 1,
      snapshot: false,
    })) {
      const k = at as unknown[];
      const v = value as Uint8Array;
      return isGroup(v) && v.length <= JOIN_MAX_BYTES ? { at: k, blocks: blocksOf(k, v, true) } : undefined;
    }
    return undefined;
  }

  /** settled stores everything held (a clean stop), so that a restart has nothing to recover; after a failed flush the marks do that. */
  async settled(): Promise<void> {
    while (this.flushing || this.heldBlocks.length > 0) if (!(await this.flush())) return;
  }

  /**
   * removeBlocks takes blocks out of a term's stored groups, inside the caller's transaction (retention, which flushes
   * first: old blocks are not held); a group left empty goes, one that lost its newest block is keyed by its next.
   */
  removeBlocks(ws: string, env: Environment, kind: PostingKind, term: string, blocks: readonly { ms: number; firstId: string }[]): void {
    const key = textKey(term);
    const doomed = new Set(blocks.map((b) => `${b.ms}\u0000${b.firstId}`));
    const lo = Math.min(...blocks.map((b) => b.ms));
    const hi = Math.max(...blocks.map((b) => b.ms));
    const changed: [Key, GroupedBlock[]][] = [];
    for (const { key: k, value } of this.db.getRange({ start: [ws, env, kind, key, lo], end: [ws, env, kind, key, hi + GROUP_SPAN_MS + 1], snapshot: false })) {
      const grouped = blocksOf(k as unknown[], value as Uint8Array, true);
      const kept = grouped.filter((b) => !doomed.has(`${b.ms}\u0000${b.firstId}`));
      if (kept.length < grouped.length) changed.push([k, kept]);
    }
    // a group keyed anew by its next block may land on a key that holds a group already: it joins that one
    const gone = new Set(changed.map(([k]) => JSON.stringify(k)));
    const rekeyed = new Map<string, { at: Key; blocks: GroupedBlock[] }>();
    for (const [, kept] of changed) {
      if (kept.length === 0) continue;
      const at: Key = [ws, env, kind, key, kept[0].ms, kept[0].firstId];
      const name = JSON.stringify(at);
      let into = rekeyed.get(name);
      if (!into) {
        const stored = gone.has(name) ? undefined : (this.db.get(at) as Uint8Array | undefined);
        into = { at, blocks: stored ? blocksOf(at as unknown[], stored, true) : [] };
        rekeyed.set(name, into);
      }
      into.blocks.push(...kept);
    }
    for (const [stored] of changed) this.db.removeSync(stored);
    for (const { at, blocks: all } of rekeyed.values()) {
      const sorted = all.sort(byNewest).filter((b, i, list) => i === 0 || newer(list[i - 1], b));
      this.db.putSync(at, encodeGroup(sorted));
    }
  }

  /** blocks yields the blocks holding a term within a range, newest first: held and stored ones merged. */
  *blocks(ws: string, env: Environment, kind: PostingKind, rawTerm: string, range: ScanRange): Generator<BlockRef> {
    const held = this.heldIn(ws, env, kind, rawTerm, range);
    let h = 0;
    for (const ref of this.stored(ws, env, kind, rawTerm, range)) {
      while (h < held.length && newer(held[h], ref)) yield held[h++];
      yield { ms: ref.ms, firstId: ref.firstId, positions: ref.positions }; // decoded now: a page reads a few blocks of a group
    }
    while (h < held.length) yield held[h++];
  }

  /**
   * sizes yields the blocks holding a term within a range, newest first, each with how many of its entries carry the
   * term (null: all of them) and without decoding positions; a block being stored may come twice (held and stored).
   */
  *sizes(ws: string, env: Environment, kind: PostingKind, rawTerm: string, range: ScanRange): Generator<{ ms: number; firstId: string; n: number | null }> {
    const size = (positions: Uint8Array) => (positions.byteLength === 0 ? null : positions.byteLength / 2);
    const held: { ms: number; firstId: string; n: number | null }[] = [];
    this.eachHeld(ws, env, kind, rawTerm, range, (r) => held.push({ ms: r.ms, firstId: r.firstId, n: size(r.positions) }));
    yield* held;
    for (const b of this.stored(ws, env, kind, rawTerm, range, false))
      yield { ms: b.ms, firstId: b.firstId, n: b.positions === null ? null : b.positions.length };
  }

  /** count counts the blocks holding a term within a range, stopping at `cap`. */
  count(ws: string, env: Environment, kind: PostingKind, rawTerm: string, range: ScanRange, cap: number): number {
    let n = 0;
    this.eachHeld(ws, env, kind, rawTerm, range, () => n++);
    if (n >= cap) return cap;
    // each stored value keyed within the range names a block of its own in it (its newest): counted by LMDB, unread
    const { start, fromMs } = rangeKeys(range);
    if (!start) return n;
    const term = textKey(rawTerm);
    if (n + this.db.getKeysCount({ start: [ws, env, kind, term, fromMs], end: [ws, env, kind, term, start[0] as number] }) >= cap) return cap;
    return Math.min(cap, n + this.countStored(ws, env, kind, rawTerm, range, cap - n));
  }

  /**
   * countStored counts a term's stored blocks in a range, stopping at `cap`, reading values in place: a group wholly
   * inside the range by how many blocks it lists, one at the range's edges block by block. Groups that may share
   * blocks (a flush after a crash) are counted as reads see them, each block once.
   */
  private countStored(ws: string, env: Environment, kind: PostingKind, rawTerm: string, range: ScanRange, cap: number): number {
    const { start, fromMs } = rangeKeys(range);
    if (!start) return 0;
    const [topMs, topId] = start as [number, string | undefined];
    const inRange = (b: { ms: number; firstId: string }) => b.ms >= fromMs && (b.ms < topMs || (topId !== undefined && b.ms === topMs && b.firstId <= topId));
    const term = textKey(rawTerm);
    let n = 0;
    let floor = Number.POSITIVE_INFINITY; // the oldest millisecond of the groups counted so far
    const keys = this.db.getKeys({
      start: [ws, env, kind, term, topMs + GROUP_SPAN_MS + 1],
      end: [ws, env, kind, term, fromMs],
      reverse: true,
      snapshot: false,
    });
    for (const key of keys) {
      const k = key as unknown[];
      const ms = k[4] as number;
      if (ms >= floor) return this.countRead(ws, env, kind, rawTerm, range, cap);
      const value = readInPlace(this.db, key);
      if (!value) continue;
      if (!isGroup(value)) {
        n += inRange({ ms, firstId: k[5] as string }) ? 1 : 0;
        floor = ms;
      } else {
        const { blocks, oldestBelow } = groupExtent(value);
        floor = ms - oldestBelow;
        if (ms < topMs && floor >= fromMs) n += blocks;
        else if (floor <= topMs) for (const b of decodeGroup(ms, value, false)) if (inRange(b)) n++; // else every block is above the range
      }
      if (n >= cap) return cap;
    }
    return n;
  }

  /** countRead counts a term's stored blocks in a range as a read yields them, stopping at `cap`. */
  private countRead(ws: string, env: Environment, kind: PostingKind, rawTerm: string, range: ScanRange, cap: number): number {
    let n = 0;
    for (const _ of this.stored(ws, env, kind, rawTerm, range, false)) if (++n >= cap) return cap;
    return n;
  }

  /**
   * stored yields a term's stored blocks within a range, newest first, each once: a group may hold blocks older than
   * the next group's newest (groups of a flush after a crash overlap), so a block is yielded only once no later group
   * can hold a newer one. When `positions` is false, a block's positions are an array of their count only.
   */
  private *stored(ws: string, env: Environment, kind: PostingKind, rawTerm: string, range: ScanRange, positions = true): Generator<BlockRef> {
    const { start, fromMs } = rangeKeys(range);
    if (!start) return;
    const term = textKey(rawTerm);
    const [topMs, topId] = start as [number, string | undefined];
    const inRange = (b: GroupedBlock) => b.ms >= fromMs && (b.ms < topMs || (topId !== undefined && b.ms === topMs && b.firstId <= topId));
    let pending: GroupedBlock[] = [];
    let last: GroupedBlock | undefined;
    const keys = this.db.getKeys({
      start: [ws, env, kind, term, topMs + GROUP_SPAN_MS + 1],
      end: [ws, env, kind, term, fromMs],
      reverse: true,
      snapshot: false,
    });
    for (const key of keys) {
      const k = key as unknown[];
      const bound = { ms: k[4] as number, firstId: k[5] as string };
      let i = 0;
      for (; i < pending.length && newer(pending[i], bound); i++) if (!last || newer(last, pending[i])) yield (last = pending[i]);
      pending = pending.slice(i);
      // keyed above a past window: its extent, read in place, most often shows none of its blocks is in it
      if (bound.ms > topMs && aboveRange(bound.ms, readInPlace(this.db, key), topMs)) continue;
      const value = this.db.get(key) as Uint8Array | undefined; // a copy: its blocks read their ids from it later
      if (!value) continue;
      for (const b of blocksOf(k, value, positions)) if (inRange(b)) pending.push(b);
      if (pending.length > 1) pending.sort(byNewest);
    }
    for (const b of pending) if (!last || newer(last, b)) yield (last = b);
  }

  /** heldIn lists the held blocks of a term within the range's milliseconds, newest first (rows() applies a cursor, as it does to stored ones). */
  private heldIn(ws: string, env: Environment, kind: PostingKind, term: string, range: ScanRange): BlockRef[] {
    const out: BlockRef[] = [];
    this.eachHeld(ws, env, kind, term, range, (r) => out.push({ ms: r.ms, firstId: r.firstId, positions: decodePositions(r.positions) }));
    return out.sort((a, b) => (newer(a, b) ? -1 : newer(b, a) ? 1 : 0));
  }

  private eachHeld(ws: string, env: Environment, kind: PostingKind, term: string, range: ScanRange, f: (r: HeldRef) => void): void {
    const key = heldKey(ws, env, kind, term);
    for (const held of [this.flushing?.held, this.held]) {
      for (const r of held?.get(key)?.refs ?? []) if (r.ms >= range.fromMs && r.ms < range.toMs) f(r);
    }
  }
}

const EMPTY = new Uint8Array(0);
/** above every block's millisecond */
const MAX_MS = 8.64e15 + 1;
const byNewest = (a: { ms: number; firstId: string }, b: { ms: number; firstId: string }) => (newer(a, b) ? -1 : newer(b, a) ? 1 : 0);

/** aboveRange tells whether every block of a stored value keyed at `ms` lies above `topMs`, by the group's extent alone. */
function aboveRange(ms: number, value: Uint8Array | undefined, topMs: number): boolean {
  return value === undefined || !isGroup(value) || ms - groupExtent(value).oldestBelow > topMs;
}

/**
 * withStored is a group to store under a key that may already hold one (a block held again, as a restart does with
 * the blocks its marks list): the blocks of both, each once, so that storing it again never drops a block.
 */
function withStored(key: unknown[], stored: Uint8Array | undefined, group: GroupedBlock[]): GroupedBlock[] {
  if (stored === undefined) return group;
  const all = [...group, ...blocksOf(key, stored, true)].sort(byNewest);
  return all.filter((b, i) => i === 0 || newer(all[i - 1], b));
}

/** blocksOf reads a stored posting value: a group, or (the layout before groups) one block's positions under its own key. */
function blocksOf(key: unknown[], value: Uint8Array, positions: boolean): GroupedBlock[] {
  const ms = key[4] as number;
  return isGroup(value) ? decodeGroup(ms, value, positions) : [{ ms, firstId: key[5] as string, positions: decodePositions(value) }];
}
const heldKey = (ws: string, env: Environment, kind: PostingKind, term: string) => `${ws}\u0000${env}\u0000${kind}\u0000${term}`;
