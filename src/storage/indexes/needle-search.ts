// needle-search: which blocks of a tenant's filters (needle-index.ts) may hold a needle, and which of their stripes.
import type { BlockRef, ScanRange } from "../keys.ts";
import { REGION_WORDS, STRIPE, probeHolds, probesHold, regionOf, type Probes } from "./needles.ts";
import { partitionStep, stripePositions, type FilteredBlock, type Segment } from "./needle-segment.ts";

/** countKey numbers a region count, 2^i or 3·2^i, as 2i or 2i + 1: below COUNT_KEYS for any count of 32 bits. */
const countKey = (regions: number): number => {
  const low = regions & -regions;
  return 2 * (31 - Math.clz32(low)) + (low === regions ? 0 : 1);
};
const COUNT_KEYS = 64;

/**
 * segmentBlocks lists, newest first, the blocks of a sealed segment in range whose stripes may hold the needle, from
 * the segment's partitions the probes fall in; `own`, when given, keeps only the blocks it names ("ms\u0000firstId").
 */
export function segmentBlocks(s: Segment, partitions: Map<number, Uint32Array>, probes: Probes, range: ScanRange, own?: Set<string>): BlockRef[] {
  const P = 1 << s.logP;
  // each term's place within a stripe's slice of its partition, by the stripe's region count (countKey), worked out
  // once a count: a segment's stripes take a few counts, often alternating from one stripe to the next
  const terms = probes.map((alternative) =>
    alternative.map((probe) => ({ probe, words: partitions.get(probe.h & (P - 1))!, places: new Int32Array(COUNT_KEYS).fill(-1) })),
  );
  const { regions, offsets } = s;
  type Term = (typeof terms)[number][number];
  // the word at which a term's region of stripe j starts in the term's partition
  const baseOf = (term: Term, j: number): number => {
    const R = regions[j];
    const key = countKey(R);
    let place = term.places[key];
    if (place < 0) place = term.places[key] = Math.floor(regionOf(term.probe.h, R) / partitionStep(R, P));
    return (offsets[j] + place) * REGION_WORDS;
  };
  const only = terms.length === 1 && terms[0].length === 1 ? terms[0][0] : undefined;
  // one term, as a path value's needle is: no loops over alternatives and terms around its test
  const holds = only
    ? (j: number) => {
        // baseOf written out: this runs once a stripe, hundreds of thousands of times a query at 100M
        const R = regions[j];
        const key = countKey(R);
        let place = only.places[key];
        if (place < 0) place = only.places[key] = Math.floor(regionOf(only.probe.h, R) / partitionStep(R, P));
        return probeHolds(only.words, (offsets[j] + place) * REGION_WORDS, only.probe);
      }
    : anyHolds;
  function anyHolds(j: number): boolean {
    for (const alternative of terms) {
      let all = true;
      for (const term of alternative) if (!(all = probeHolds(term.words, baseOf(term, j), term.probe))) break;
      if (all) return true;
    }
    return false;
  }
  const out: BlockRef[] = [];
  const top = Math.min(range.toMs - 1, range.after ? range.after.ms : Number.POSITIVE_INFINITY);
  // a block's stripes lie next to each other: one reference a block, all of it when every stripe may hold the needle
  const { ms: mss, ids } = s;
  for (let j = 0; j < mss.length; ) {
    const ms = mss[j];
    const id = ids[j];
    let end = j + 1;
    while (end < mss.length && mss[end] === ms && ids[end] === id) end++;
    if (ms < range.fromMs) break;
    if (ms <= top && (!own || own.has(`${ms}\u0000${id}`))) {
      // most blocks have no stripe that may hold the needle: nothing is allocated for them, and no stripe is tested twice
      let held = 0;
      let first = -1;
      let more: number[] | undefined; // the stripes held, once there are two
      for (let u = j; u < end; u++)
        if (holds(u)) {
          if (held++ === 0) first = u;
          else (more ??= [first]).push(u);
        }
      if (held === end - j) out.push({ ms, firstId: id, positions: null });
      else if (held === 1) out.push({ ms, firstId: id, positions: stripePositions(s.s[first], s.n[first]) });
      else if (more) out.push({ ms, firstId: id, positions: more.flatMap((u) => stripePositions(s.s[u], s.n[u])) });
    }
    j = end;
  }
  return out;
}

/** heldBlocks yields, newest first, the held blocks (given newest first) in range whose stripes may hold the needle. */
export function* heldBlocks(held: FilteredBlock[], probes: Probes, range: ScanRange): Generator<BlockRef> {
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
