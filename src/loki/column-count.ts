// column-count: a count or rate grouped by column labels (environment, level, action) counted from the blocks' level
// and action columns into cells (cells.ts): no entry object is built, and a block whose client times fall in one cell
// is counted without reading them.
import type { Block } from "../storage/format/block.ts";
import type { Matcher } from "./ast.ts";
import { type Cells, cumulative } from "./cells.ts";
import { type Labels, labelsKey } from "./labels.ts";
import { matcherTest } from "./pipeline.ts";

/** ColumnSeries is one group's labels and its count per cell. */
export interface ColumnSeries {
  labels: Labels;
  counts: Float64Array;
}

/** ColumnCounter counts the entries a selector of column labels selects, per group of `by` and per cell. */
export class ColumnCounter {
  readonly series = new Map<string, ColumnSeries>();
  private readonly levelTests: ((v: string) => boolean)[];
  private readonly actionTests: ((v: string) => boolean)[];
  private readonly byAction: boolean;

  constructor(
    private readonly cells: Cells,
    selector: Matcher[],
    private readonly by: string[],
    private readonly env: string,
  ) {
    // environment matchers are settled by the push-down (another environment selects nothing)
    this.levelTests = selector.filter((m) => m.name === "level" || m.name === "detected_level").map(matcherTest);
    this.actionTests = selector.filter((m) => m.name === "action").map(matcherTest);
    this.byAction = by.includes("action");
  }

  /** seriesOf is the counts of the group of an entry with this level and action; null when the selector drops it. */
  private seriesOf(level: string, action: string): Float64Array | null {
    if (!this.levelTests.every((t) => t(level)) || !this.actionTests.every((t) => t(action))) return null;
    const labels: Labels = {};
    for (const name of this.by) labels[name] = name === "environment" ? this.env : name === "action" ? action : level;
    const key = labelsKey(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels, counts: new Float64Array(this.cells.size) }));
    return s.counts;
  }

  /** entry counts entry i of `block`, read one at a time. */
  entry(block: Block, i: number): void {
    const cell = this.cells.cellOf(block.clientMs(i));
    if (cell < 0) return;
    const counts = this.seriesOf(block.level(i), block.action(i));
    if (counts) counts[cell]++;
  }

  /** block counts the entries of `block` at `positions` (null: all), whose client times lie in [lo, hi]; false when its format has no code columns. */
  block(block: Block, positions: readonly number[] | null, lo: number, hi: number): boolean {
    const needsAction = this.byAction || this.actionTests.length > 0;
    const levels = block.codes("level");
    const actions = needsAction ? block.codes("action") : undefined;
    if (!levels || (needsAction && !actions)) return false;
    const width = actions ? actions.values.length : 1;
    // an entry's group is one of the (level, action) pairs the block holds: counted by pair, looked up once a pair
    const pairs = new Uint32Array(levels.values.length * width);
    const pairOf = (i: number) => levels.codes[i] * width + (actions ? actions.codes[i] : 0);
    const groupOf = (g: number) => this.seriesOf(levels.values[Math.floor(g / width)], actions ? actions.values[g % width] : "");
    const n = positions ? positions.length : block.size;
    const first = this.cells.cellOf(lo);
    if (first >= 0 && first === this.cells.cellOf(hi)) {
      // every entry is in one cell: its client time need not be read
      if (positions) for (let p = 0; p < n; p++) pairs[pairOf(positions[p])]++;
      else for (let i = 0; i < n; i++) pairs[pairOf(i)]++;
      for (let g = 0; g < pairs.length; g++) {
        const counts = pairs[g] > 0 ? groupOf(g) : null;
        if (counts) counts[first] += pairs[g];
      }
      return true;
    }
    const times = block.clientTimes();
    if (!times) return false;
    const groups: (Float64Array | null | undefined)[] = new Array(pairs.length);
    // the cell (after, upTo] of the entry before: entries close in time share it, so most need no look-up
    let cell = -1;
    let after = Number.NaN;
    let upTo = Number.NaN;
    for (let p = 0; p < n; p++) {
      const i = positions ? positions[p] : p;
      const c = times[i];
      if (!(c > after && c <= upTo)) {
        cell = this.cells.cellOf(c);
        after = cell > 0 ? this.cells.edge(cell - 1) : Number.NaN;
        upTo = cell > 0 ? this.cells.edge(cell) : Number.NaN;
      }
      if (cell < 0) continue;
      const g = pairOf(i);
      let counts = groups[g];
      if (counts === undefined) counts = groups[g] = groupOf(g);
      if (counts) counts[cell]++;
    }
    return true;
  }

  /** sums turns every series' counts into cumulative sums (cells.ts countAt reads them); call once, after counting. */
  sums(): ColumnSeries[] {
    return [...this.series.values()].map((s) => ({ labels: s.labels, counts: cumulative(s.counts) }));
  }
}
