// needle-index: every block's filters (needles.ts, one per stripe), held per block while recent and sealed into
// segments, so that a rare value is found by reading a few kilobytes per segment instead of every block.
//
// Key layout:
//   db `filtersHeld`: [workspaceId, environment, serverMs, firstId] → the block's entry count, its stripes' sizes and
//     filters (Uint32 words), written in the block's own transaction; kept in memory too until its segment is sealed.
//   db `filters`: [workspaceId, environment, 0, topMs, topFirstId] → a sealed segment's directory (msgpack: its
//     stripes, newest block first, each with its block, place, entry count and region count), and
//     [workspaceId, environment, 1, topMs, topFirstId, p] → partition p of its filters. A term of hash h lies in
//     partition h mod P (the segment's partition count), so a needle reads one partition of each segment per term:
//     1/P of the filters. A stripe of fewer than P regions is repeated in each partition its regions fall in.
//     A merged segment of level L > 0 has L after each key: [.., 0, topMs, topFirstId, L] and [.., 1, topMs, topFirstId, p, L].
// A tenant's held filters are sealed once they cover SEAL_ENTRIES entries or SEAL_BLOCKS blocks; the seal writes the
// segment and removes the held keys in one transaction, so a crash leaves either, and the held ones are read again.
// In the background, FAN segments of a level are merged into one of the next (needle-segment.ts mergeRun), so a needle
// reads a few large partitions instead of thousands of small ones. The merged segment names its sources, which stay
// stored for readers that listed them until RETIRE_MS later: a crash before they go leaves both, and the
// next load skips the named ones.
import type { Database } from "lmdb";
import type { Environment } from "../../schema.ts";
import { packr } from "../format/columns.ts";
import { newer, type BlockRef, type ScanRange, type Tenant } from "../keys.ts";
import { readInPlace } from "../in-place.ts";
import { lazyMerge, type Source } from "./newest-first.ts";
import { probesOf, type Needle, type Probes } from "./needles.ts";
import { heldBlocks, segmentBlocks } from "./needle-search.ts";
import {
  SEAL_BLOCKS,
  SEAL_ENTRIES,
  bytesOf,
  mergeRun,
  mergedParts,
  packHeld,
  pageFit,
  sealedParts,
  segmentOf,
  unpackHeld,
  wordsOf,
  type Directory,
  type FilteredBlock,
  type Segment,
  type SegmentName,
} from "./needle-segment.ts";

export type { FilteredBlock } from "./needle-segment.ts";

/** How often the segments are looked over for a run to merge, and the pause after a merge before the next look. */
const MERGE_PASS_MS = 1_000;
const MERGE_PAUSE_MS = 50;
/** A merged segment's sources stay stored this long, for readers that listed them before the merge. */
const RETIRE_MS = 10_000;

interface TenantFilters {
  ws: string;
  env: Environment;
  held: FilteredBlock[];
  heldEntries: number;
  sealing: boolean;
  /** sealed segments, newest top first; loaded at the first read */
  segments?: Segment[];
  /** a merge of segments under way, or retention dropping some: one at a time */
  busy?: Promise<unknown>;
  /** merged segments' sources, to remove from storage once `at` has passed */
  retired: { segments: Segment[]; at: number }[];
}

/** Named is what a sealed segment's keys are made of. */
type Named = { topMs: number; topId: string; level: number };
const directoryKey = (t: TenantFilters, s: Named) => (s.level === 0 ? [t.ws, t.env, 0, s.topMs, s.topId] : [t.ws, t.env, 0, s.topMs, s.topId, s.level]);
const partitionKey = (t: TenantFilters, s: Named, p: number) =>
  s.level === 0 ? [t.ws, t.env, 1, s.topMs, s.topId, p] : [t.ws, t.env, 1, s.topMs, s.topId, p, s.level];
const nameOf = ([topMs, topId, level]: SegmentName) => `${topMs}\u0000${topId}\u0000${level}`;

/** NeedleIndex keeps the blocks' filters and finds the blocks a needle may be in. */
export class NeedleIndex {
  private readonly tenants = new Map<string, TenantFilters>();
  private merging = false;
  private retireMs = RETIRE_MS;
  private timer: Timer | undefined;

  constructor(
    private readonly db: Database,
    private readonly heldDb: Database,
    private readonly sealEntries = SEAL_ENTRIES,
  ) {}

  /** recover holds again the filters of blocks whose segment was not sealed when the process stopped. */
  recover(): void {
    for (const { key, value } of this.heldDb.getRange({ snapshot: false })) {
      const [ws, env, ms, firstId] = key as [string, Environment, number, string];
      const block = unpackHeld(ms, firstId, wordsOf((value as Uint8Array).slice()));
      const t = this.tenant(ws, env);
      t.held.push(block);
      t.heldEntries += block.size;
    }
    for (const t of this.tenants.values()) t.held.sort((a, b) => (newer(a, b) ? 1 : newer(b, a) ? -1 : 0));
  }

  /** mark stores a block's filter in the block's own transaction. */
  mark(ws: string, env: Environment, block: FilteredBlock): Promise<unknown> {
    return this.heldDb.put([ws, env, block.ms, block.firstId], bytesOf(packHeld(block)));
  }

  /** hold makes a committed block's filter readable, and seals the tenant's held filters once there are enough. */
  hold(ws: string, env: Environment, block: FilteredBlock): void {
    const t = this.tenant(ws, env);
    t.held.push(block);
    t.heldEntries += block.size;
    if (!t.sealing && (t.heldEntries >= this.sealEntries || t.held.length >= SEAL_BLOCKS)) this.seal(ws, env, t);
  }

  private seal(ws: string, env: Environment, t: TenantFilters): void {
    const blocks = t.held.slice(0, pageFit(t.held));
    const { key, directory, partitions } = sealedParts(blocks);
    const name = { topMs: key[0], topId: key[1], level: 0 };
    const puts: Promise<unknown>[] = [this.db.put(directoryKey(t, name), packr.pack(directory))];
    for (const [p, words] of partitions.entries()) puts.push(this.db.put(partitionKey(t, name, p), bytesOf(words)));
    for (const b of blocks) puts.push(this.heldDb.remove([ws, env, b.ms, b.firstId]));
    t.sealing = true;
    Promise.all(puts).then(
      () => {
        const sealed = new Set(blocks);
        t.held = t.held.filter((b) => !sealed.has(b));
        t.heldEntries = t.held.reduce((n, b) => n + b.size, 0);
        t.segments?.push(segmentOf(key, directory));
        t.segments?.sort(newestTop);
        t.sealing = false;
      },
      (e) => {
        t.sealing = false; // the filters stay held; the next block tries again
        console.error(JSON.stringify({ level: "error", msg: "sealing a filter segment failed; its filters stay held", error: String(e) }));
      },
    );
  }

  /** blocks yields, newest first, the blocks of a range that may hold the needle. */
  blocks(tenant: Tenant, needle: Needle, range: ScanRange): Generator<BlockRef> {
    const t = this.tenant(tenant.ws, tenant.env);
    const segments = this.segmentsOf(t);
    const held = t.held.slice().sort((a, b) => (newer(a, b) ? -1 : newer(b, a) ? 1 : 0));
    const probes = probesOf(needle); // once a query: every stripe of every segment is tested with them
    const copies: Uint8Array[] = []; // a needle of several partitions copies them here, one buffer each, reused by each segment
    const sources: Source[] = [];
    if (held.length > 0) sources.push({ top: held[0], open: () => heldBlocks(held, probes, range) });
    for (const s of segments) {
      if (s.topMs < range.fromMs) break; // sorted by top: every later one is older still
      if (s.bottomMs >= range.toMs || (range.after && s.bottomMs > range.after.ms)) continue;
      sources.push({ top: { ms: s.topMs, firstId: s.topId }, open: () => this.segmentCandidates(t, s, probes, range, copies) });
    }
    sources.sort((a, b) => (newer(a.top, b.top) ? -1 : newer(b.top, a.top) ? 1 : 0));
    return lazyMerge(sources);
  }

  /** removeHeld drops a deleted block's held filter, inside the deletion's transaction. */
  removeHeld(ws: string, env: Environment, ms: number, firstId: string): void {
    this.heldDb.removeSync([ws, env, ms, firstId]);
    const t = this.tenants.get(tenantKey(ws, env));
    if (t) t.held = t.held.filter((b) => b.ms !== ms || b.firstId !== firstId);
  }

  /** dropBefore removes the segments whose every block is older than `beforeMs` (retention). */
  async dropBefore(ws: string, env: Environment, beforeMs: number): Promise<void> {
    const t = this.tenant(ws, env);
    while (t.busy) await t.busy;
    const doomed = this.segmentsOf(t).filter((s) => s.topMs < beforeMs);
    if (doomed.length === 0) return;
    const removed = Promise.all(doomed.map((s) => this.remove(t, s)));
    t.busy = removed.finally(() => (t.busy = undefined));
    await removed;
    t.segments = t.segments?.filter((s) => !doomed.includes(s));
  }

  /** startMerging merges sealed segments in the background, FAN of one level into one of the next, until stopMerging. */
  startMerging(retireMs = RETIRE_MS): void {
    this.merging = true;
    this.retireMs = retireMs;
    clearTimeout(this.timer);
    this.nextPass(MERGE_PASS_MS);
  }

  /** stopMerging ends the background merges once the one under way is stored. */
  async stopMerging(): Promise<void> {
    this.merging = false;
    clearTimeout(this.timer);
    await Promise.all([...this.tenants.values()].map((t) => t.busy));
  }

  /** mergeAll merges a tenant's segments until no run is left, and says how many merges it made. */
  async mergeAll(ws: string, env: Environment): Promise<number> {
    const t = this.tenant(ws, env);
    for (let merges = 0; ; merges++) {
      while (t.busy) await t.busy;
      this.mergeSome(t);
      if (!t.busy) return merges;
    }
  }

  private nextPass(ms: number): void {
    if (!this.merging) return;
    this.timer = setTimeout(() => {
      try {
        this.pass();
      } catch (e) {
        console.error(JSON.stringify({ level: "error", msg: "looking for filter segments to merge failed", error: String(e) }));
        this.nextPass(MERGE_PASS_MS);
      }
    }, ms);
    this.timer.unref();
  }

  /** pass merges one run of each tenant's segments, and removes the retired segments whose time has come. */
  private pass(): void {
    let busy = false;
    for (const t of this.tenants.values()) {
      const now = Date.now();
      for (const r of t.retired) if (r.at <= now) for (const s of r.segments) void this.remove(t, s);
      t.retired = t.retired.filter((r) => r.at > now);
      if (!t.busy) this.mergeSome(t);
      busy ||= t.busy !== undefined;
    }
    this.nextPass(busy ? MERGE_PAUSE_MS : MERGE_PASS_MS);
  }

  /** mergeSome writes one run of a tenant's segments as one segment of the next level, in one transaction. */
  private mergeSome(t: TenantFilters): void {
    const run = mergeRun(this.segmentsOf(t));
    if (!run) return;
    const parts = mergedParts(run, (k, p) => {
      const value = readInPlace(this.db, partitionKey(t, run[k], p));
      return value ? wordsOf(value) : null;
    });
    if (!parts) return; // a source went with retention
    const merged = segmentOf(parts.key, parts.directory);
    const puts = [this.db.put(directoryKey(t, merged), packr.pack(parts.directory))];
    for (const [p, words] of parts.partitions.entries()) puts.push(this.db.put(partitionKey(t, merged, p), bytesOf(words)));
    t.busy = Promise.all(puts)
      .then(
        () => {
          for (const s of run) s.replacedBy = merged;
          t.segments = (t.segments ?? [])
            .filter((s) => !run.includes(s))
            .concat(merged)
            .sort(newestTop);
          t.retired.push({ segments: run, at: Date.now() + this.retireMs });
        },
        (e) => console.error(JSON.stringify({ level: "error", msg: "merging filter segments failed; they stay as they were", error: String(e) })),
      )
      .finally(() => (t.busy = undefined));
  }

  /** remove deletes a sealed segment's directory and partitions. */
  private remove(t: TenantFilters, s: Segment): Promise<unknown> {
    const removes = [this.db.remove(directoryKey(t, s))];
    for (let p = 0; p < 1 << s.logP; p++) removes.push(this.db.remove(partitionKey(t, s, p)));
    return Promise.all(removes);
  }

  /**
   * segmentCandidates lists, newest first, the blocks of a sealed segment in range that may hold the needle. A segment
   * is tested whole as soon as it is opened: a needle's single partition is then read in place, with no copy, as
   * nothing else reads storage before the test ends. A needle whose terms fall in several partitions copies them.
   * A segment merged and removed since the query listed it is read in the segment it went into, its own blocks only.
   */
  private segmentCandidates(t: TenantFilters, listed: Segment, probes: Probes, range: ScanRange, copies: Uint8Array[]): Iterator<BlockRef> {
    let into = listed;
    let read = this.partitionsOf(t, into, probes, copies);
    while (!read && into.replacedBy) {
      into = into.replacedBy;
      read = this.partitionsOf(t, into, probes, copies);
    }
    if (!read) return [].values(); // gone with retention
    const own = into === listed ? undefined : new Set(listed.ms.map((ms, j) => `${ms}\u0000${listed.ids[j]}`));
    return segmentBlocks(into, read, probes, range, own).values();
  }

  /**
   * partitionsOf reads the partitions of a segment the probes fall in, undefined once the segment is gone. One is read
   * in place (valid until the next read); several are copied into `copies`, which grow to the largest.
   */
  private partitionsOf(t: TenantFilters, s: Segment, probes: Probes, copies: Uint8Array[]): Map<number, Uint32Array> | undefined {
    const mask = (1 << s.logP) - 1;
    const wanted = new Set<number>();
    for (const alternative of probes) for (const probe of alternative) wanted.add(probe.h & mask);
    const out = new Map<number, Uint32Array>();
    for (const p of wanted) {
      const value = readInPlace(this.db, partitionKey(t, s, p));
      if (!value) return undefined;
      if (wanted.size === 1) out.set(p, wordsOf(value));
      else {
        const i = out.size;
        if (!copies[i] || copies[i].length < value.length) copies[i] = new Uint8Array(value.length);
        copies[i].set(value);
        out.set(p, new Uint32Array(copies[i].buffer, 0, value.length / 4));
      }
    }
    return out;
  }

  /** segmentsOf loads a tenant's sealed segments at the first use, skipping (and retiring) those a merged one names. */
  private segmentsOf(t: TenantFilters): Segment[] {
    if (!t.segments) {
      const stored: Segment[] = [];
      for (const { key, value } of this.db.getRange({ start: [t.ws, t.env, 0], end: [t.ws, t.env, 1], snapshot: false })) {
        const k = key as unknown[];
        stored.push(segmentOf([k[3] as number, k[4] as string], packr.unpack(value as Uint8Array) as Directory));
      }
      const named = new Set(stored.flatMap((s) => s.from.map(nameOf)));
      const left = stored.filter((s) => named.has(nameOf([s.topMs, s.topId, s.level])));
      if (left.length > 0) t.retired.push({ segments: left, at: 0 });
      t.segments = stored.filter((s) => !left.includes(s)).sort(newestTop);
    }
    return t.segments;
  }

  private tenant(ws: string, env: Environment): TenantFilters {
    const key = tenantKey(ws, env);
    let t = this.tenants.get(key);
    if (!t) this.tenants.set(key, (t = { ws, env, held: [], heldEntries: 0, sealing: false, retired: [] }));
    return t;
  }
}

const newestTop = (a: Segment, b: Segment) => (a.topMs !== b.topMs ? b.topMs - a.topMs : a.topId < b.topId ? 1 : a.topId > b.topId ? -1 : 0);
const tenantKey = (ws: string, env: Environment) => `${ws}\u0000${env}`;
