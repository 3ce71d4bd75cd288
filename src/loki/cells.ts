// cells: the client-time ranges of a range aggregation's steps, cut at every range's edges into cells, so that the
// count of a range (t − offset − range, t − offset] is a sum of whole cells: an entry adds one to its cell, and a block
// whose client times all fall in one cell adds its count there without its entries' times being read.
import { floorDiv } from "./params.ts";

/** Cells cuts the steps' ranges (lo, hi] (client ms) at their edges; cell j is (edges[j − 1], edges[j]]. */
export class Cells {
  private readonly edges: number[];
  /** the distance between consecutive edges when it is always the same (steps and ranges in whole ms), else 0 */
  private readonly spacing: number;
  /** per step, the indexes of its range's lower and upper edges */
  private readonly spans: Int32Array;

  constructor(steps: readonly bigint[], offsetNs: bigint, rangeNs: bigint) {
    const ranges = steps.map((t) => [Number(floorDiv(t - offsetNs - rangeNs, 1_000_000n)), Number(floorDiv(t - offsetNs, 1_000_000n))]);
    this.edges = [...new Set(ranges.flat())].sort((a, b) => a - b);
    const d = this.edges.length > 1 ? this.edges[1] - this.edges[0] : 0;
    this.spacing = this.edges.every((e, j) => e === this.edges[0] + j * d) ? d : 0;
    this.spans = new Int32Array(ranges.flatMap(([lo, hi]) => [this.edgeIndex(lo), this.edgeIndex(hi)]));
  }

  /** size is the number of cells a count array needs (index 0 is never a cell). */
  get size(): number {
    return this.edges.length;
  }

  /** cellOf is the cell holding client ms `c`; −1 when no range reaches it. */
  cellOf(c: number): number {
    const { edges } = this;
    if (!(c > edges[0] && c <= edges[edges.length - 1])) return -1;
    if (this.spacing > 0) return Math.ceil((c - edges[0]) / this.spacing);
    let lo = 1;
    let hi = edges.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (edges[mid] >= c) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** edge is the client ms where cell j ends (edge j − 1 is where it starts, exclusive). */
  edge(j: number): number {
    return this.edges[j];
  }

  /** countAt is the count of step k's range, from cumulative counts (sums[j]: the counts of cells 1..j). */
  countAt(sums: Float64Array, k: number): number {
    return sums[this.spans[2 * k + 1]] - sums[this.spans[2 * k]];
  }

  private edgeIndex(e: number): number {
    if (this.spacing > 0) return (e - this.edges[0]) / this.spacing;
    let lo = 0;
    let hi = this.edges.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.edges[mid] >= e) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** cumulative turns per-cell counts into running sums, in place. */
export function cumulative(counts: Float64Array): Float64Array {
  for (let j = 1; j < counts.length; j++) counts[j] += counts[j - 1];
  return counts;
}
