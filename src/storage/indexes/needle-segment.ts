// needle-segment: how a tenant's block filters are laid out in storage: a held block's filters as one value, and a
// sealed segment's directory and partitions (the key layout is at the top of needle-index.ts).
import { STRIPE, REGION_WORDS, regionsOf } from "./needles.ts";
import { newer } from "../keys.ts";

const MAX_PARTITIONS = 256;
/** A tenant's held filters are sealed into a segment once they cover this many entries or blocks. */
export const SEAL_ENTRIES = 65_536;
export const SEAL_BLOCKS = 1024;
/** A merge joins this many sealed segments of one level, up to MAX_LEVEL: a segment covers at most FAN^MAX_LEVEL seals. */
export const FAN = 4;
export const MAX_LEVEL = 2;

/** FilteredBlock is one block's filters (one per stripe of STRIPE entries) with its key and entry count. */
export interface FilteredBlock {
  ms: number;
  firstId: string;
  size: number;
  stripes: Uint32Array[];
}

/** SegmentName names a sealed segment: its newest block and its level (how many merges made it). */
export type SegmentName = [topMs: number, topId: string, level: number];

/** Segment is a sealed segment as a reader keeps it: its directory, with each stripe's place in the partitions. */
export interface Segment {
  topMs: number;
  topId: string;
  bottomMs: number;
  logP: number;
  level: number;
  /** the segments merged into this one, which a crash may have left stored */
  from: SegmentName[];
  /** the segment this one was merged into: a reader that listed it before the merge finds its stripes there */
  replacedBy?: Segment;
  /** the stripes, newest block first: its key, the stripe's place in it and entry count, its filter's regions */
  ms: number[];
  ids: string[];
  s: number[];
  n: number[];
  regions: number[];
  /** where each stripe's regions start in every partition, in regions */
  offsets: number[];
}

/**
 * Directory is a sealed segment's directory as stored: log2 of its partition count, and its stripes (see Segment),
 * their region counts as `rc`, or as `r` (log2: every count a power of two) in segments written before `rc`.
 */
export interface Directory {
  p: number;
  ms: number[];
  ids: string[];
  s: number[];
  n: number[];
  rc?: number[];
  r?: number[];
  /** level, absent for a seal's */
  l?: number;
  /** the segments merged into it */
  from?: SegmentName[];
}

/** sealedParts lays out blocks' filters as one segment: its key (its newest block), directory and partitions. */
export function sealedParts(blocks: readonly FilteredBlock[]): { key: [number, string]; directory: Directory; partitions: Uint32Array[] } {
  const sorted = blocks.slice().sort((a, b) => (newer(a, b) ? -1 : newer(b, a) ? 1 : 0));
  const rc: number[] = [];
  const directory: Directory = { p: 0, ms: [], ids: [], s: [], n: [], rc };
  const filters: Uint32Array[] = [];
  for (const b of sorted) {
    for (const [s, words] of b.stripes.entries()) {
      directory.ms.push(b.ms);
      directory.ids.push(b.firstId);
      directory.s.push(s);
      directory.n.push(Math.min(STRIPE, b.size - s * STRIPE));
      rc.push(regionsOf(words));
      filters.push(words);
    }
  }
  const logP = partitionsLog(rc);
  directory.p = logP;
  const { offsets, total } = offsetsOf(rc, logP);
  const P = 1 << logP;
  const partitions = Array.from({ length: P }, () => new Uint32Array(total * REGION_WORDS));
  for (const [j, words] of filters.entries()) {
    const g = partitionStep(rc[j], P);
    for (let p = 0; p < P; p++) {
      for (let i = 0, r = p % g; r < rc[j]; i++, r += g) {
        partitions[p].set(words.subarray(r * REGION_WORDS, (r + 1) * REGION_WORDS), (offsets[j] + i) * REGION_WORDS);
      }
    }
  }
  return { key: [sorted[0].ms, sorted[0].firstId], directory, partitions };
}

/**
 * partitionStep is gcd(R, P) for a stripe of R regions in a segment of P partitions (a power of two): a term of hash
 * h lies in region h mod R and partition h mod P, so partition p holds the stripe's regions p mod g, p mod g + g, …
 * (R / g of them), and a term's is the (h mod R) / g-th, rounded down. A stripe of fewer regions than P, or of three
 * times a power of two below P, is repeated in P / g partitions.
 */
export const partitionStep = (regions: number, partitions: number): number => Math.min(regions & -regions, partitions);

/** PAGE and PAGE_HEAD: LMDB stores a large value on whole pages of PAGE bytes, PAGE_HEAD of the first one its header. */
const PAGE = 4096;
const PAGE_HEAD = 16;

/**
 * pageFit is how many of `blocks` (oldest first) to seal so that each partition fills the pages LMDB gives it: a
 * partition of 128 stripes of one region is 8,192 bytes and takes three pages with its header, one of 127 takes two.
 * It keeps at least one block, and all when even one page is not filled.
 */
export function pageFit(blocks: readonly FilteredBlock[]): number {
  const bytes = (k: number) => {
    const rc = blocks.slice(0, k).flatMap((b) => b.stripes.map(regionsOf));
    return PAGE_HEAD + offsetsOf(rc, partitionsLog(rc)).total * REGION_WORDS * 4;
  };
  const pages = Math.floor(bytes(blocks.length) / PAGE);
  if (pages === 0) return blocks.length;
  let k = blocks.length;
  while (k > 1 && bytes(k) > pages * PAGE) k--;
  return k;
}

/** the share of a segment's own regions that repeating small stripes in every partition may add */
const MAX_REPEATED = 1 / 8;

/**
 * partitionsLog is log2 of a segment's partition count: the largest power of two dividing the median stripe's region
 * count, at most MAX_PARTITIONS, so that a needle reads about one region of each stripe; halved while the stripes it
 * repeats (those of fewer regions, or of three times a smaller power of two) would add over MAX_REPEATED to the
 * segment: at 256 partitions, a stripe of 192 regions among stripes of 256 would be stored four times over.
 */
export function partitionsLog(rc: readonly number[]): number {
  const median = rc.slice().sort((a, b) => a - b)[rc.length >> 1];
  const regions = rc.reduce((n, r) => n + r, 0);
  let logP = Math.log2(Math.min(MAX_PARTITIONS, median & -median));
  while (logP > 0 && offsetsOf(rc, logP).total * 2 ** logP > regions * (1 + MAX_REPEATED)) logP--;
  return logP;
}

/** stripePositions lists the positions of stripe s of a block, which holds n entries; a full stripe's list is shared (readers never change one). */
export function stripePositions(s: number, n: number): number[] {
  if (n === STRIPE) return (FULL_STRIPES[s] ??= Array.from({ length: n }, (_, i) => s * STRIPE + i));
  return Array.from({ length: n }, (_, i) => s * STRIPE + i);
}
const FULL_STRIPES: number[][] = [];

/** offsetsOf places stripes of `rc` regions in each of a segment's 2^logP partitions: where each starts, in regions. */
export function offsetsOf(rc: readonly number[], logP: number): { offsets: number[]; total: number } {
  const offsets: number[] = [];
  let total = 0;
  for (const r of rc) {
    offsets.push(total);
    total += r / partitionStep(r, 1 << logP);
  }
  return { offsets, total };
}

export function segmentOf([topMs, topId]: [number, string], d: Directory): Segment {
  const { ms, ids, s, n } = d;
  const level = d.l ?? 0;
  const regions = d.rc ?? (d.r ?? []).map((r) => 2 ** r);
  return { topMs, topId, bottomMs: ms[ms.length - 1], logP: d.p, level, from: d.from ?? [], ms, ids, s, n, regions, offsets: offsetsOf(regions, d.p).offsets };
}

/** mergeRun picks, oldest first, FAN segments next to each other (newest top first) of one level under MAX_LEVEL and one partition count. */
export function mergeRun(segments: readonly Segment[]): Segment[] | undefined {
  for (let i = segments.length - FAN; i >= 0; i--) {
    const run = segments.slice(i, i + FAN);
    if (run[0].level < MAX_LEVEL && run.every((s) => s.level === run[0].level && s.logP === run[0].logP)) return run;
  }
  return undefined;
}

/**
 * mergedParts lays out segments of one partition count as one segment of the next level: their stripes newest first
 * (blocks of one segment may interleave with another's), each partition the sources' slices of that partition.
 * `read(k, p)` reads partition p of sources[k], valid until the next read, or null once it is gone: then no merge (undefined).
 */
export function mergedParts(
  sources: readonly Segment[],
  read: (k: number, p: number) => Uint32Array | null,
): { key: [number, string]; directory: Directory; partitions: Uint32Array[] } | undefined {
  const logP = sources[0].logP;
  const stripes = sources.flatMap((s, k) => s.ms.map((_, j) => [k, j] as const));
  const block = ([k, j]: readonly [number, number]) => ({ ms: sources[k].ms[j], firstId: sources[k].ids[j] });
  stripes.sort((a, b) => (newer(block(a), block(b)) ? -1 : newer(block(b), block(a)) ? 1 : 0)); // stable: a block's stripes keep their order
  const rc: number[] = [];
  const directory: Directory = {
    p: logP,
    ms: [],
    ids: [],
    s: [],
    n: [],
    rc,
    l: sources[0].level + 1,
    from: sources.map((s) => [s.topMs, s.topId, s.level]),
  };
  for (const [k, j] of stripes) {
    const s = sources[k];
    directory.ms.push(s.ms[j]);
    directory.ids.push(s.ids[j]);
    directory.s.push(s.s[j]);
    directory.n.push(s.n[j]);
    rc.push(s.regions[j]);
  }
  // runs of stripes next to each other in one source lie next to each other in each of its partitions too
  const runs: { k: number; from: number; to: number }[] = [];
  for (const [k, j] of stripes) {
    const last = runs[runs.length - 1];
    if (last && last.k === k && last.to === j) last.to++;
    else runs.push({ k, from: j, to: j + 1 });
  }
  const words = (s: Segment, j: number) => (s.regions[j] / partitionStep(s.regions[j], 1 << logP)) * REGION_WORDS;
  const { total } = offsetsOf(rc, logP);
  const partitions: Uint32Array[] = [];
  for (let p = 0; p < 1 << logP; p++) {
    const into = new Uint32Array(total * REGION_WORDS);
    let at = 0;
    for (const { k, from, to } of runs) {
      const s = sources[k];
      const part = read(k, p);
      if (!part) return undefined;
      const start = s.offsets[from] * REGION_WORDS;
      const end = s.offsets[to - 1] * REGION_WORDS + words(s, to - 1);
      into.set(part.subarray(start, end), at);
      at += end - start;
    }
    partitions.push(into);
  }
  return { key: [directory.ms[0], directory.ids[0]], directory, partitions };
}

/** packHeld stores a held block as words: its entry count, its stripe count, each stripe's length, then the stripes. */
export function packHeld(b: FilteredBlock): Uint32Array {
  const head = 2 + b.stripes.length;
  const out = new Uint32Array(head + b.stripes.reduce((n, w) => n + w.length, 0));
  out[0] = b.size;
  out[1] = b.stripes.length;
  let at = head;
  for (const [s, words] of b.stripes.entries()) {
    out[2 + s] = words.length;
    out.set(words, at);
    at += words.length;
  }
  return out;
}

export function unpackHeld(ms: number, firstId: string, stored: Uint32Array): FilteredBlock {
  const stripes: Uint32Array[] = [];
  let at = 2 + stored[1];
  for (let s = 0; s < stored[1]; s++) {
    stripes.push(stored.subarray(at, at + stored[2 + s]));
    at += stored[2 + s];
  }
  return { ms, firstId, size: stored[0], stripes };
}

/** bytesOf views words as the bytes LMDB stores. */
export function bytesOf(words: Uint32Array): Uint8Array {
  return new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
}

/** wordsOf reads stored bytes as words (copied when LMDB's buffer is not aligned). */
export function wordsOf(value: Uint8Array): Uint32Array {
  const aligned = value.byteOffset % 4 === 0 ? value : value.slice();
  return new Uint32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4);
}
