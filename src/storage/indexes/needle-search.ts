// needle-search: which blocks of a tenant's filters (needle-index.ts) may hold a needle, and which of their stripes.
import type { BlockRef, ScanRange } from "../keys.ts";
import { REGION_WORDS, STRIPE, probeHolds, probesHold, regionOf, type Probes } from "./needles.ts";
import { partitionStep, stripePositions, type FilteredBlock, type Segment } from "./needle-segment.ts";

/**
 * segmentBlocks lists, newest first, the blocks of a sealed segment in range whose stripes may hold the needle, from
 * the segment's partitions the probes fall in; `own`, when given, keeps only the blocks it names ("ms\u0000firstId").
 */
export function segmentBlocks(s: Segment, partitions: Map<number, Uint32Array>, probes: Probes, range: ScanRange, own?: Set<string>): BlockRef[] {
  const P = 1 << s.logP;
  // each term's place within a stripe's slice of its partition, worked out again only when the region count changes
  const terms = probes.map((alternative) => alternative.map((probe) => ({ probe, words: partitions.get(probe.h & (P - 1))!, regions: 0, place: 0 })));
  const { regions, offsets } = s;
  const holds = (j: number) => {
    const R = regions[j];
    const at = offsets[j];
    for (const alternative of terms) {
      let all = true;
      for (const term of alternative) {
        if (term.regions !== R) [term.regions, term.place] = [R, Math.floor(regionOf(term.probe.h, R) / partitionStep(R, P))];
        if (!probeHolds(term.words, (at + term.place) * REGION_WORDS, term.probe)) {
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
    if (ms <= top && (!own || own.has(`${ms}\u0000${s.ids[j]}`))) {
      const held: number[] = [];
      for (let u = j; u < end; u++) if (holds(u)) held.push(u);
      if (held.length === end - j) out.push({ ms, firstId: s.ids[j], positions: null });
      else if (held.length === 1) out.push({ ms, firstId: s.ids[j], positions: stripePositions(s.s[held[0]], s.n[held[0]]) });
      else if (held.length > 0) out.push({ ms, firstId: s.ids[j], positions: held.flatMap((u) => stripePositions(s.s[u], s.n[u])) });
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
