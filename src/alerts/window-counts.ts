// window-counts: a count rule's counts per group on the server axis, kept between evaluations in cells of server time,
// so that an evaluation counts only the cells no earlier evaluation (of this rule or another with the same query and
// group field) has counted. A cell is counted by POST /logs/hits' engine and dropped as soon as a block is committed
// or deleted inside it, so a window's sum of cells equals what /logs/hits counts over it (contract §16). Once a series
// has been evaluated, the blocks committed after its newest stored one are counted into its cells as they commit
// (block-count.ts), a turn's blocks after its answers: a round under steady writes then finds its newest cells counted.
import type { Query } from "../query/ast.ts";
import { blockMatcher, groupCounter, type BlockMatcher, type Committed, type GroupCounter } from "../query/block-count.ts";
import type { Window } from "../query/explore-request.ts";
import type { GroupField } from "../query/group-field.ts";
import { countHits, MAX_GROUPS } from "../query/hits.ts";
import type { ReadScope } from "../query/page.ts";
import type { Slice } from "../query/slice.ts";
import type { CommittedBlock } from "../storage/commit.ts";
import type { EntryStore } from "../storage/entries.ts";
import { Block } from "../storage/format/block.ts";
import type { Tenant } from "../storage/keys.ts";

/** Counts is a count per group (the null group for entries without a value) and the count of all entries. */
export interface Counts {
  total: number;
  groups: Map<string | null, number>;
}

/** a coarse cell spans this many fine ones: a long window sums few cells, and only its edges need fine ones */
const COARSE = 64;
/** group counts kept in all cells together at most; past it, cells are counted but not kept */
const MAX_KEPT = 2_000_000;
/** a series no evaluation used for this long (of evaluation time, beyond its rules' own period) is dropped */
const IDLE_MS = 10 * 60_000;

interface Cell {
  counts: Counts;
  usedAt: number;
}

/** Series is the cells of one query and group field on one grid: fine cells of `gridMs`, coarse of COARSE × gridMs. */
interface Series {
  gridMs: number;
  fine: Map<number, Cell>;
  coarse: Map<number, Cell>;
  usedAt: number;
  sweptAt: number;
  keepMs: number;
  /** the longest span back from an evaluation's instant its windows reach: fine cells that young are kept for their edges */
  reachMs: number;
  /**
   * blocks committed at or after this server time (a multiple of gridMs) are counted into the fine cells as they
   * commit, so from it on a fine cell not kept holds no match; Infinity: none are
   */
  liveFrom: number;
  /** a block's matches, shared by the series of one query: set once the series is evaluated */
  matcher?: BlockMatcher;
  /** the groups of a block's matches, with a group field */
  groups?: GroupCounter;
}

/** Run is a range being counted: a block committed or deleted inside it meanwhile spoils it, and it is not kept. */
interface Run {
  fromMs: number;
  toMs: number;
  spoiled: boolean;
}

interface TenantCells extends Tenant {
  series: Map<string, Series>;
  /** each query's block matcher, by the query's text */
  matchers: Map<string, BlockMatcher>;
  runs: Set<Run>;
  /** no kept cell (but the fine ones of live series) or run reaches this server time: a block committed at or after it changes none */
  horizon: number;
}

const empty = (): Counts => ({ total: 0, groups: new Map() });

const newSeries = (gridMs: number, usedAt: number, keepMs: number): Series => ({
  gridMs,
  fine: new Map(),
  coarse: new Map(),
  usedAt,
  sweptAt: usedAt,
  keepMs,
  reachMs: 0,
  liveFrom: Number.POSITIVE_INFINITY,
});

/** WindowCounts keeps the cells of every count rule evaluated here; it learns of commits and deletions from the store. */
export class WindowCounts {
  private readonly tenants = new Map<string, TenantCells>();
  private keptCounts = 0;
  /** blocks committed at or after some series' liveFrom, not yet counted into its cells */
  private arrived: CommittedBlock[] = [];
  /** server time counted by /logs/hits' engine rather than taken from kept cells, in all evaluations so far */
  freshMs = 0;
  /** blocks counted into live series' cells as they committed, so far */
  liveBlocks = 0;

  /** kept is the number of group counts in all cells together (each cell counts one more for its total). */
  get kept(): number {
    return this.keptCounts;
  }

  constructor(
    private readonly store: EntryStore,
    private readonly maxKept = MAX_KEPT,
  ) {
    store.onCommitted((b) => this.committed(b));
    store.onDeleted((t, beforeMs) => this.deleted(t, beforeMs));
  }

  /**
   * count gives the matches of `query` per value of `field` over a server-axis window, from kept cells where it can:
   * `gridMs` divides the window's ends (the rule's every, window and delay), `atMs` is the evaluation's instant and
   * `periodMs` its rule's every. A grouped count over more than MAX_GROUPS groups throws hits' own error.
   */
  async count(req: CountRequest, slice: Slice): Promise<Counts> {
    const { scope, window, gridMs } = req;
    const fromMs = Math.max(window.fromMs, scope.floorMs);
    const toMs = window.toMs;
    const out = empty();
    if (fromMs >= toMs) return out;
    this.drain();
    const tenant = this.tenantOf(scope);
    const series = this.seriesOf(tenant, req);
    const whole = async (from: number, to: number) => add(out, sum((await this.fresh(req, tenant, from, to, to - from, slice)).cells.values()));
    const a = Math.ceil(fromMs / gridMs) * gridMs;
    const b = Math.floor(toMs / gridMs) * gridMs;
    if (a >= b) {
      await whole(fromMs, toMs);
      return out;
    }
    if (fromMs < a) await whole(fromMs, a); // the retention floor cut a cell: its rest, not kept
    if (b < toMs) await whole(b, toMs);
    const coarseMs = COARSE * gridMs;
    const A = Math.ceil(a / coarseMs) * coarseMs;
    const B = Math.floor(b / coarseMs) * coarseMs;
    const cells = (level: Map<number, Cell>, from: number, to: number, cellMs: number) => this.cells(req, tenant, series, level, from, to, cellMs, out, slice);
    if (A < B) {
      await cells(series.coarse, A, B, coarseMs);
      await cells(series.fine, a, A, gridMs);
      await cells(series.fine, B, b, gridMs);
    } else await cells(series.fine, a, b, gridMs);
    return out;
  }

  /** cells adds to `out` the cells of `level` over [fromMs, toMs), counting each run of missing ones in one pass. */
  private async cells(
    req: CountRequest,
    tenant: TenantCells,
    series: Series,
    level: Map<number, Cell>,
    fromMs: number,
    toMs: number,
    cellMs: number,
    out: Counts,
    slice: Slice,
  ) {
    let missingFrom: number | undefined;
    for (let at = fromMs; at <= toMs; at += cellMs) {
      const cell = at < toMs ? this.known(tenant, series, level, at, req.atMs) : undefined;
      if (cell) {
        cell.usedAt = req.atMs;
        add(out, cell.counts);
      }
      if (cell || at === toMs) {
        if (missingFrom !== undefined) {
          const { cells, spoiled } = await this.fresh(req, tenant, missingFrom, at, cellMs, slice);
          for (const [start, counts] of cells) {
            add(out, counts);
            if (!spoiled) this.keep(tenant, level, start, cellMs, counts, req.atMs);
          }
        }
        missingFrom = undefined;
      } else missingFrom ??= at;
    }
  }

  /**
   * known is the cell of `level` at `start` if its count is known without reading: kept; a fine one of the live range
   * (none kept: no match); or a coarse one summed from its fine cells, each known.
   */
  private known(tenant: TenantCells, series: Series, level: Map<number, Cell>, start: number, atMs: number): Cell | undefined {
    this.drain(); // blocks that committed while this count paused, before their cells are read
    const kept = level.get(start);
    if (kept || level === series.fine) return kept ?? (start >= series.liveFrom ? { counts: empty(), usedAt: atMs } : undefined);
    const counts = empty();
    for (let at = start, end = start + COARSE * series.gridMs; at < end; at += series.gridMs) {
      const fine = series.fine.get(at);
      if (fine) add(counts, fine.counts);
      else if (at < series.liveFrom) return undefined;
    }
    this.keep(tenant, level, start, COARSE * series.gridMs, counts, atMs);
    return { counts, usedAt: atMs };
  }

  /** fresh counts [fromMs, toMs) by POST /logs/hits' engine per cell of `cellMs`; spoiled: a block was committed or deleted inside it meanwhile. */
  private async fresh(req: CountRequest, tenant: TenantCells, fromMs: number, toMs: number, cellMs: number, slice: Slice) {
    const { scope, query, field } = req;
    const run: Run = { fromMs, toMs, spoiled: false };
    this.freshMs += toMs - fromMs;
    tenant.runs.add(run);
    tenant.horizon = Math.max(tenant.horizon, toMs);
    let hits: Awaited<ReturnType<typeof countHits>>;
    try {
      hits = await countHits(this.store, scope, { query, window: { axis: "server", fromMs, toMs }, stepMs: cellMs, groupBy: field, limit: MAX_GROUPS }, slice);
    } finally {
      tenant.runs.delete(run);
    }
    const first = Math.floor(fromMs / cellMs) * cellMs;
    const cells = new Map<number, Counts>();
    for (let k = 0; k < hits.buckets.length; k++) cells.set(first + k * cellMs, empty());
    for (const s of hits.series) {
      const text = field ? (s.group?.[field.name] ?? null) : undefined;
      s.counts.forEach((n, k) => {
        if (n === 0) return;
        const c = cells.get(first + k * cellMs)!;
        c.total += n;
        if (text !== undefined) c.groups.set(text, (c.groups.get(text) ?? 0) + n);
      });
    }
    return { cells, spoiled: run.spoiled };
  }

  /** keep stores a counted cell, unless the cells kept already hold as many counts as they may. */
  private keep(tenant: TenantCells, level: Map<number, Cell>, start: number, cellMs: number, counts: Counts, atMs: number): void {
    const size = counts.groups.size + 1;
    if (this.keptCounts + size > this.maxKept) return;
    const had = level.get(start);
    if (had) this.keptCounts -= had.counts.groups.size + 1;
    level.set(start, { counts, usedAt: atMs });
    this.keptCounts += size;
    tenant.horizon = Math.max(tenant.horizon, start + cellMs); // a block committed inside it from now on drops it
  }

  /** keptCells lists every cell kept, with what names its series, for a clean stop to save. */
  *keptCells(): Generator<KeptCell> {
    this.drain();
    for (const [name, tenant] of this.tenants) {
      const [ws, env] = name.split("\u0000") as [string, Tenant["env"]];
      const newest = this.newestMs(tenant);
      for (const [series, s] of tenant.series) {
        for (const [coarse, level] of [
          [false, s.fine],
          [true, s.coarse],
        ] as const) {
          const cellMs = coarse ? COARSE * s.gridMs : s.gridMs;
          for (const [startMs, cell] of level)
            yield { ws, env, series, gridMs: s.gridMs, keepMs: s.keepMs, coarse, startMs, cellMs, counts: cell.counts, usedAt: cell.usedAt };
        }
        // a live range's cells without a match are not kept, and after a start nothing is live: they are saved as
        // empty ones, from the oldest a window still reaches to the one holding the newest block
        const from = Math.max(s.liveFrom, Math.floor((s.usedAt - s.reachMs) / s.gridMs) * s.gridMs);
        for (let startMs = from; startMs <= newest; startMs += s.gridMs) {
          if (!s.fine.has(startMs))
            yield { ws, env, series, gridMs: s.gridMs, keepMs: s.keepMs, coarse: false, startMs, cellMs: s.gridMs, counts: empty(), usedAt: s.usedAt };
        }
      }
    }
  }

  /** newestMs is the server time of a tenant's newest stored block (its floor of 0 without one). */
  private newestMs(t: Tenant): number {
    for (const newest of this.store.blocks(t, { fromMs: 0, toMs: 8.64e15 })) return newest.ms;
    return 0;
  }

  /** adopt keeps a cell an earlier run saved, once its caller has checked that no block inside it changed since. */
  adopt(c: KeptCell): void {
    const tenant = this.tenantOf(c);
    let series = tenant.series.get(c.series);
    if (!series) tenant.series.set(c.series, (series = newSeries(c.gridMs, c.usedAt, c.keepMs)));
    series.usedAt = Math.max(series.usedAt, c.usedAt);
    this.keep(tenant, c.coarse ? series.coarse : series.fine, c.startMs, c.cellMs, c.counts, c.usedAt);
  }

  /** committed drops what a committed block makes wrong and, if a series counts blocks as they commit, queues it for them. */
  private committed(b: CommittedBlock): void {
    const tenant = this.tenants.get(tenantKey(b));
    if (!tenant) return;
    // past the horizon a commit changes no kept cell or run; the live cells it reaches are the block's count's
    if (b.ms < tenant.horizon) this.changed(tenant, b.ms, b.ms + 1);
    for (const series of tenant.series.values()) {
      if (b.ms < series.liveFrom) continue;
      this.arrived.push(b);
      if (this.arrived.length === 1) setImmediate(() => this.drain()); // after the turn's answers
      return;
    }
  }

  /** deleted drops the cells and spoils the runs a deletion of every block before `beforeMs` makes wrong. */
  private deleted(t: Tenant, beforeMs: number): void {
    const tenant = this.tenants.get(tenantKey(t));
    if (!tenant) return;
    this.drain(); // what committed before the deletion is in the cells it drops
    for (const series of tenant.series.values()) {
      if (series.liveFrom < beforeMs) series.liveFrom = Math.ceil(beforeMs / series.gridMs) * series.gridMs;
    }
    this.changed(tenant, Number.NEGATIVE_INFINITY, beforeMs);
  }

  /** drain counts the queued blocks into the cells of each series live at their server time. */
  private drain(): void {
    const blocks = this.arrived;
    if (blocks.length === 0) return;
    this.arrived = [];
    try {
      for (const b of blocks) {
        const tenant = this.tenants.get(tenantKey(b));
        if (!tenant) continue;
        let block: Committed | undefined;
        const matched = new Map<BlockMatcher, readonly number[] | null>(); // series of one query test the block once
        for (const series of tenant.series.values()) {
          const matcher = series.matcher;
          if (b.ms < series.liveFrom || !matcher) continue;
          block ??= b.entries ?? Block.decode(b.ms, b.value);
          let at = matched.get(matcher);
          if (at === undefined) matched.set(matcher, (at = matcher(block, b.ms)));
          this.countInto(series, block, b.ms, at);
        }
        if (block) this.liveBlocks++;
      }
    } catch (e) {
      // a block left uncounted would leave its cells short: every live cell goes, to be counted when asked
      for (const tenant of this.tenants.values()) for (const series of tenant.series.values()) this.stopLive(series);
      console.error(JSON.stringify({ level: "warn", msg: "alert counts of committed blocks failed; counting windows when evaluated", error: String(e) }));
    }
  }

  /** countInto adds a committed block's matches to its fine cell; past maxKept the series stops counting as blocks commit. */
  private countInto(series: Series, block: Committed, ms: number, at: readonly number[] | null): void {
    const n = at ? at.length : Array.isArray(block) ? block.length : (block as Block).size;
    if (n === 0) return;
    const start = Math.floor(ms / series.gridMs) * series.gridMs;
    const had = series.fine.get(start);
    const counts = had?.counts ?? empty();
    let grew = had ? 0 : 1;
    if (series.groups)
      series.groups(block, at, (text, k) => {
        const was = counts.groups.get(text);
        if (was === undefined) grew++;
        counts.groups.set(text, (was ?? 0) + k);
        counts.total += k; // grouped, the total is the groups' sum, as fresh() adds it up
      });
    else counts.total += n;
    if (!had) series.fine.set(start, { counts, usedAt: ms });
    this.keptCounts += grew;
    if (this.keptCounts > this.maxKept) this.stopLive(series);
  }

  /** stopLive drops a series' live cells, so that from now on each is counted when an evaluation asks for it. */
  private stopLive(series: Series): void {
    for (const at of [...series.fine.keys()]) if (at >= series.liveFrom) this.forget(series.fine, at);
    series.liveFrom = Number.POSITIVE_INFINITY;
  }

  /**
   * changed drops the cells that a block committed or deleted at a server time in [fromMs, toMs) makes wrong, and
   * spoils such runs; a live series' fine cells are left to the block's count (committed) or to deleted().
   */
  private changed(tenant: TenantCells, fromMs: number, toMs: number): void {
    for (const run of tenant.runs) if (run.fromMs < toMs && fromMs < run.toMs) run.spoiled = true;
    for (const series of tenant.series.values()) {
      this.drop(series.fine, series.gridMs, fromMs, Math.min(toMs, series.liveFrom));
      this.drop(series.coarse, COARSE * series.gridMs, fromMs, toMs);
    }
  }

  private drop(level: Map<number, Cell>, cellMs: number, fromMs: number, toMs: number): void {
    if (fromMs >= toMs || level.size === 0) return;
    if (toMs - fromMs <= cellMs) {
      // one block's millisecond: the one or two cells it may fall in, looked up
      const first = Math.floor(fromMs / cellMs) * cellMs;
      const last = Math.floor((toMs - 1) / cellMs) * cellMs;
      this.forget(level, first);
      if (last !== first) this.forget(level, last);
      return;
    }
    for (const start of [...level.keys()]) if (start < toMs && fromMs < start + cellMs) this.forget(level, start);
  }

  private forget(level: Map<number, Cell>, start: number): void {
    const cell = level.get(start);
    if (!cell) return;
    level.delete(start);
    this.keptCounts -= cell.counts.groups.size + 1;
  }

  private tenantOf(t: Tenant): TenantCells {
    const key = tenantKey(t);
    let tenant = this.tenants.get(key);
    if (!tenant)
      this.tenants.set(key, (tenant = { ws: t.ws, env: t.env, series: new Map(), matchers: new Map(), runs: new Set(), horizon: Number.NEGATIVE_INFINITY }));
    return tenant;
  }

  /** seriesOf finds the cells of the request's query, field and grid, letting go of cells and series left unused. */
  private seriesOf(tenant: TenantCells, req: CountRequest): Series {
    const key = JSON.stringify([req.queryText, req.field?.name ?? null, req.gridMs]);
    let series = tenant.series.get(key);
    if (!series) tenant.series.set(key, (series = newSeries(req.gridMs, req.atMs, 0)));
    series.keepMs = Math.max(series.keepMs, IDLE_MS + 2 * req.periodMs);
    series.reachMs = Math.max(series.reachMs, req.atMs - req.window.fromMs);
    series.usedAt = req.atMs;
    if (Math.abs(req.atMs - series.sweptAt) >= series.keepMs / 4) {
      for (const [key, other] of tenant.series) {
        if (other !== series && Math.abs(req.atMs - other.usedAt) > other.keepMs) this.dropSeries(tenant, key, other);
      }
      for (const [start, cell] of series.coarse) if (Math.abs(req.atMs - cell.usedAt) > series.keepMs) this.forget(series.coarse, start);
      for (const [start, cell] of series.fine) {
        // a fine cell serves the start of a window until the window has moved past it
        const idle = req.atMs - Math.max(cell.usedAt, start + series.reachMs);
        if (idle <= series.keepMs && cell.usedAt - req.atMs <= series.keepMs) continue;
        if (start >= series.liveFrom) {
          series.liveFrom = Math.max(series.liveFrom, start + series.gridMs); // no longer "none kept: no match"
          tenant.horizon = Math.max(tenant.horizon, series.liveFrom); // the counted cells below it are kept ones now
        }
        this.forget(series.fine, start);
      }
      series.sweptAt = req.atMs;
    }
    if (series.liveFrom === Number.POSITIVE_INFINITY && this.keptCounts < this.maxKept / 2) {
      // blocks are counted as they commit from past the newest stored one on: none of them is in a cell yet
      const from = Math.max(req.window.fromMs, this.newestMs(tenant) + 1);
      series.liveFrom = Math.ceil(from / req.gridMs) * req.gridMs;
      let matcher = tenant.matchers.get(req.queryText);
      if (!matcher) tenant.matchers.set(req.queryText, (matcher = blockMatcher(req.query, req.scope.env)));
      series.matcher = matcher;
      if (req.field) series.groups ??= groupCounter(req.field, req.scope.env);
    }
    return series;
  }

  private dropSeries(tenant: TenantCells, key: string, series: Series): void {
    for (const level of [series.fine, series.coarse]) for (const start of [...level.keys()]) this.forget(level, start);
    tenant.series.delete(key);
    // a query no series counts with any more lets go of its matcher
    const used = new Set([...tenant.series.values()].map((s) => s.matcher));
    for (const [text, matcher] of tenant.matchers) if (!used.has(matcher)) tenant.matchers.delete(text);
  }
}

/** KeptCell is one kept cell with the names of its tenant and series, as a clean stop saves it. */
export interface KeptCell extends Tenant {
  /** the series' name: its query's text, group field and grid */
  series: string;
  gridMs: number;
  keepMs: number;
  coarse: boolean;
  startMs: number;
  cellMs: number;
  counts: Counts;
  usedAt: number;
}

/** CountRequest is what one count rule's evaluation asks of its cells. */
export interface CountRequest {
  scope: ReadScope;
  query: Query;
  queryText: string;
  field: GroupField | undefined;
  window: Window;
  /** the cell size: divides the window's ends at every evaluation of the rule */
  gridMs: number;
  /** the evaluation's instant: when its cells were last used */
  atMs: number;
  /** the rule's every: its cells are let go once unused for longer than a few of these */
  periodMs: number;
}

const tenantKey = (t: Tenant) => `${t.ws}\u0000${t.env}`;

function add(to: Counts, from: Counts): void {
  to.total += from.total;
  for (const [text, n] of from.groups) to.groups.set(text, (to.groups.get(text) ?? 0) + n);
}

function sum(all: Iterable<Counts>): Counts {
  const out = empty();
  for (const c of all) add(out, c);
  return out;
}
