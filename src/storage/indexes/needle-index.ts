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
// A tenant's held filters are sealed once they cover SEAL_ENTRIES entries or SEAL_BLOCKS blocks; the seal writes the
// segment and removes the held keys in one transaction, so a crash leaves either, and the held ones are read again.
import type { Database } from "lmdb";
import type { Environment } from "../../schema.ts";
import { packr } from "../format/columns.ts";
import { newer, type BlockRef, type ScanRange, type Tenant } from "../keys.ts";
import { storedBlock } from "../format/part.ts";
import { REGION_WORDS, STRIPE, blockFilters, probeHolds, probesHold, probesOf, type Needle, type Probes } from "./needles.ts";
import {
  bytesOf,
  packHeld,
  pageFit,
  sealedParts,
  segmentOf,
  stripePositions,
  unpackHeld,
  wordsOf,
  type Directory,
  type FilteredBlock,
  type Segment,
} from "./needle-segment.ts";

export type { FilteredBlock } from "./needle-segment.ts";

const SEAL_ENTRIES = 65_536;
const SEAL_BLOCKS = 1024;

interface TenantFilters {
  held: FilteredBlock[];
  heldEntries: number;
  sealing: boolean;
  /** sealed segments, newest top first; loaded at the first read */
  segments?: Segment[];
}

/** NeedleIndex keeps the blocks' filters and finds the blocks a needle may be in. */
export class NeedleIndex {
  private readonly tenants = new Map<string, TenantFilters>();

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
    const puts: Promise<unknown>[] = [this.db.put([ws, env, 0, ...key], packr.pack(directory))];
    for (const [p, words] of partitions.entries()) puts.push(this.db.put([ws, env, 1, ...key, p], bytesOf(words)));
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
    const segments = this.segmentsOf(tenant, t);
    const held = t.held.slice().sort((a, b) => (newer(a, b) ? -1 : newer(b, a) ? 1 : 0));
    const probes = probesOf(needle); // once a query: every stripe of every segment is tested with them
    const sources: Source[] = [];
    if (held.length > 0) sources.push({ top: held[0], open: () => heldCandidates(held, probes, range) });
    for (const s of segments) {
      if (s.topMs < range.fromMs) break; // sorted by top: every later one is older still
      if (s.bottomMs >= range.toMs || (range.after && s.bottomMs > range.after.ms)) continue;
      sources.push({ top: { ms: s.topMs, firstId: s.topId }, open: () => this.segmentCandidates(tenant, s, probes, range) });
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
    const doomed = this.segmentsOf({ ws, env }, t).filter((s) => s.topMs < beforeMs);
    if (doomed.length === 0) return;
    const puts: Promise<unknown>[] = [];
    for (const s of doomed) {
      puts.push(this.db.remove([ws, env, 0, s.topMs, s.topId]));
      for (let p = 0; p < 1 << s.logP; p++) puts.push(this.db.remove([ws, env, 1, s.topMs, s.topId, p]));
    }
    await Promise.all(puts);
    t.segments = t.segments?.filter((s) => !doomed.includes(s));
  }

  /**
   * segmentCandidates lists, newest first, the blocks of a sealed segment in range that may hold the needle. A segment
   * is tested whole as soon as it is opened: a needle's single partition is then read in place, with no copy, as
   * nothing else reads storage before the test ends. A needle whose terms fall in several partitions copies them.
   */
  private segmentCandidates(tenant: Tenant, s: Segment, probes: Probes, range: ScanRange): Iterator<BlockRef> {
    const mask = (1 << s.logP) - 1;
    const wanted = new Set<number>();
    for (const alternative of probes) for (const p of alternative) wanted.add(p.h & mask);
    const partitions = new Map<number, Uint32Array | null>(); // null: the segment went (retention)
    for (const p of wanted) partitions.set(p, this.partition(tenant, s, p, wanted.size > 1));
    const terms = probes.map((alternative) => alternative.map((probe) => ({ probe, words: partitions.get(probe.h & mask)! })));
    const holds = (j: number) => {
      const logR = s.logR[j];
      const at = s.offsets[j];
      for (const alternative of terms) {
        let all = true;
        for (const { probe, words } of alternative) {
          const region = logR >= s.logP ? (probe.h & ((1 << logR) - 1)) >>> s.logP : 0;
          if (words === null || !probeHolds(words, (at + region) * REGION_WORDS, probe)) {
            all = false;
            break;
          }
        }
        if (all) return true;
      }
      return false;
    };
    const out: BlockRef[] = [];
    const top = Math.min(range.toMs - 1, range.after ? range.after.ms : Number.POSITIVE_INFINITY);
    // a block's stripes lie next to each other: one reference a block, all of it when every stripe may hold the needle
    for (let j = 0; j < s.ms.length; ) {
      const ms = s.ms[j];
      let end = j + 1;
      while (end < s.ms.length && s.ms[end] === ms && s.ids[end] === s.ids[j]) end++;
      if (ms < range.fromMs) break;
      if (ms <= top) {
        const held: number[] = [];
        for (let u = j; u < end; u++) if (holds(u)) held.push(u);
        if (held.length === end - j) out.push({ ms, firstId: s.ids[j], positions: null });
        else if (held.length === 1) out.push({ ms, firstId: s.ids[j], positions: stripePositions(s.s[held[0]], s.n[held[0]]) });
        else if (held.length > 0) out.push({ ms, firstId: s.ids[j], positions: held.flatMap((u) => stripePositions(s.s[u], s.n[u])) });
      }
      j = end;
    }
    return out.values();
  }

  /** partition reads a sealed segment's partition p, in place unless `copy`; null once the segment is gone. */
  private partition(tenant: Tenant, s: Segment, p: number, copy: boolean): Uint32Array | null {
    const key = [tenant.ws, tenant.env, 1, s.topMs, s.topId, p];
    const value = (copy ? this.db.get(key) : this.db.getBinaryFast(key)) as Uint8Array | undefined;
    return value ? wordsOf(value) : null;
  }

  private segmentsOf(tenant: Tenant, t: TenantFilters): Segment[] {
    if (!t.segments) {
      const out: Segment[] = [];
      for (const { key, value } of this.db.getRange({ start: [tenant.ws, tenant.env, 0], end: [tenant.ws, tenant.env, 1], snapshot: false })) {
        const k = key as unknown[];
        out.push(segmentOf([k[3] as number, k[4] as string], packr.unpack(value as Uint8Array) as Directory));
      }
      t.segments = out.sort(newestTop);
    }
    return t.segments;
  }

  private tenant(ws: string, env: Environment): TenantFilters {
    const key = tenantKey(ws, env);
    let t = this.tenants.get(key);
    if (!t) this.tenants.set(key, (t = { held: [], heldEntries: 0, sealing: false }));
    return t;
  }
}

function* heldCandidates(held: FilteredBlock[], probes: Probes, range: ScanRange): Generator<BlockRef> {
  const top = Math.min(range.toMs - 1, range.after ? range.after.ms : Number.POSITIVE_INFINITY);
  for (const b of held) {
    if (b.ms > top) continue;
    if (b.ms < range.fromMs) return;
    // positions are listed only for a block some of whose stripes cannot hold the needle: a common term names whole blocks
    const held: number[] = [];
    for (let s = 0; s < b.stripes.length; s++) if (probesHold(b.stripes[s], probes)) held.push(s);
    if (held.length === 0) continue;
    const positions = held.length === b.stripes.length ? null : held.flatMap((s) => stripePositions(s, Math.min(STRIPE, b.size - s * STRIPE)));
    yield { ms: b.ms, firstId: b.firstId, positions };
  }
}

interface Source {
  top: { ms: number; firstId: string };
  open(): Iterator<BlockRef>;
}

/** lazyMerge merges sources (sorted by their newest possible reference) newest first, opening each only when it can be next. */
function* lazyMerge(sources: Source[]): Generator<BlockRef> {
  const heap: { ref: BlockRef; it: Iterator<BlockRef> }[] = [];
  const before = (i: number, j: number) => newer(heap[i].ref, heap[j].ref);
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(i, parent)) return;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      let m = i;
      if (l < heap.length && before(l, m)) m = l;
      if (l + 1 < heap.length && before(l + 1, m)) m = l + 1;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m], heap[i]];
      i = m;
    }
  };
  const push = (it: Iterator<BlockRef>) => {
    const first = it.next();
    if (first.done) return;
    heap.push({ ref: first.value, it });
    up(heap.length - 1);
  };
  let next = 0;
  for (;;) {
    while (next < sources.length && (heap.length === 0 || !newer(heap[0].ref, sources[next].top))) push(sources[next++].open());
    if (heap.length === 0) return;
    const top = heap[0];
    yield top.ref;
    const following = top.it.next();
    if (following.done) {
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        down(0);
      }
    } else {
      top.ref = following.value;
      down(0);
    }
  }
}

const newestTop = (a: Segment, b: Segment) => (a.topMs !== b.topMs ? b.topMs - a.topMs : a.topId < b.topId ? 1 : a.topId > b.topId ? -1 : 0);
const tenantKey = (ws: string, env: Environment) => `${ws}\u0000${env}`;

/** rebuildFilters drops every filter and builds them anew from the blocks, sealed a segment at a time (a layout upgrade). */
export function rebuildFilters(dbs: { entries: Database; parts: Database; filters: Database; filtersHeld: Database }): number {
  dbs.filters.clearSync();
  dbs.filtersHeld.clearSync();
  let batch: FilteredBlock[] = [];
  let tenant: [string, Environment] | undefined;
  let entries = 0;
  let blocks = 0;
  const seal = (fit: boolean) => {
    if (batch.length === 0) return;
    const [ws, env] = tenant!;
    const sealed = fit ? batch.slice(0, pageFit(batch)) : batch;
    const { key, directory, partitions } = sealedParts(sealed);
    dbs.filters.transactionSync(() => {
      dbs.filters.putSync([ws, env, 0, ...key], packr.pack(directory));
      for (const [p, words] of partitions.entries()) dbs.filters.putSync([ws, env, 1, ...key, p], bytesOf(words));
    });
    blocks += sealed.length;
    batch = batch.slice(sealed.length);
    entries = batch.reduce((n, b) => n + b.size, 0);
  };
  for (const { key, value } of dbs.entries.getRange({ snapshot: false })) {
    const [ws, env, ms, firstId] = key as [string, Environment, number, string];
    if (tenant && (tenant[0] !== ws || tenant[1] !== env)) seal(false);
    tenant = [ws, env];
    const block = storedBlock(dbs.parts, ws, env, ms, firstId, value as Uint8Array)!;
    batch.push({ ms, firstId, size: block.size, stripes: blockFilters(block.entries()) });
    entries += block.size;
    if (entries >= SEAL_ENTRIES || batch.length >= SEAL_BLOCKS) seal(true);
  }
  seal(false);
  return blocks;
}
