// tail: one live tail (contract §10, GET /logs/tail): optionally the newest matching entries first (backfill) or
// everything after a cursor (resume), then each matching entry as it is committed, oldest first, each exactly once.
// It joins the hub before it reads storage, so that what commits while it catches up waits in its buffer.
import type { EntryStore, Row } from "../storage/entries.ts";
import { compareKeys, type Key } from "../storage/inflight.ts";
import { formatMs, parseRfc3339 } from "../time.ts";
import { isUuid } from "../ids.ts";
import type { Query } from "./ast.ts";
import { ascendingRows } from "./ascending.ts";
import { compileQuery } from "./compile.ts";
import { PAUSE } from "./execute.ts";
import { planFor, runSliced, type ReadScope } from "./page.ts";
import type { Batch, TailHub } from "./tail-hub.ts";
import type { PostingKind } from "../storage/indexes/posting-terms.ts";
import { TimeSlicer } from "./slice.ts";

/** BOTTOM is a cursor below every entry: resuming from it sends everything. */
export const BOTTOM: Key = { ms: 0, id: "00000000-0000-0000-0000-000000000000" };

/** formatCursor writes an entry's cursor: its server_timestamp and id joined by `_`. */
export const formatCursor = (k: Key): string => `${formatMs(k.ms)}_${k.id}`;

/** parseCursor reads a cursor of formatCursor (any RFC 3339 spelling of the time), or undefined when it is not one. */
export function parseCursor(text: string): Key | undefined {
  const at = text.lastIndexOf("_");
  const t = at > 0 ? parseRfc3339(text.slice(0, at)) : null;
  const id = text.slice(at + 1).toLowerCase();
  if (!t || !isUuid(id)) return undefined;
  // an instant inside a millisecond lies after every entry of it (ids are hex, below "g")
  return t.subNs > 0 ? { ms: t.ms, id: "g" } : { ms: t.ms, id };
}

/** Sink is where a tail's events go; `send` returns false when the consumer is too far behind (then the tail overflows). */
export interface Sink {
  send(row: Row): boolean;
  /** sends live rows, oldest first, as one write: a batch reaches a hundred tails as a hundred writes, not one per entry */
  sendAll(rows: readonly Row[]): boolean;
  /** waits until the consumer has room (catching up from storage waits instead of overflowing) */
  room(): Promise<void>;
  overflow(cursor: string): void;
  /** tells the consumer where the stream stands (an id without an event): a reconnect from it loses nothing */
  mark(cursor: string): void;
}

/** TailOptions: where to start and how much may wait while the tail catches up. */
export interface TailOptions {
  after?: Key;
  backfill: number;
  /** live entries held while catching up from storage; one more overflows */
  bufferMax: number;
}

/** Tail is one open tail; close() ends it and leaves the hub. */
export class Tail {
  private cursor: Key = BOTTOM;
  private live = false;
  private held: Row[] = [];
  /** a level= or tag= term of the query: only the rows its postings name can match */
  private readonly narrow: { kind: PostingKind; terms: string[] } | undefined;
  private closed = false;
  private readonly accept: (row: Row) => boolean;
  /** the query alone names the rows a live batch sends: tails of one query share them */
  private readonly shareKey: string;
  /** the narrowing term is the whole query: its candidates are exactly its matches */
  private readonly exact: boolean;
  private leave: () => void = () => {};

  constructor(
    private readonly store: EntryStore,
    private readonly hub: TailHub,
    private readonly scope: ReadScope,
    private readonly query: Query,
    private readonly options: TailOptions,
    private readonly sink: Sink,
  ) {
    this.accept = compileQuery(query, scope.env);
    this.shareKey = JSON.stringify(query);
    for (const t of query.terms) {
      if (t.kind === "enum" && t.facet === "level" && t.op === "=") this.narrow = { kind: "l", terms: t.values.map((v) => v.text) };
      else if (t.kind === "tag" && t.op === "=" && t.values.every((v) => v.kind === "string"))
        this.narrow = { kind: "t", terms: t.values.map((v) => (v.kind === "string" ? v.text : "")) };
      if (this.narrow) break;
    }
    this.exact = this.narrow !== undefined && query.terms.length === 1;
  }

  /** start joins the hub, sends the backfill or what follows the cursor, then goes live. */
  async start(): Promise<void> {
    this.leave = this.hub.subscribe(this.scope, (batch) => this.onBatch(batch));
    const frontier = this.hub.frontier(this.scope) ?? BOTTOM;
    const slice = new TimeSlicer(Number.POSITIVE_INFINITY);
    if (this.options.after) {
      this.cursor = this.options.after;
      if (compareKeys(this.cursor, frontier) < 0) {
        const floor = { ms: this.scope.floorMs, id: "" };
        const from = compareKeys(this.cursor, floor) < 0 ? floor : this.cursor;
        for (const row of ascendingRows(this.store, this.scope, from, frontier, this.accept, slice.due)) {
          if (this.closed) return;
          if (row === PAUSE) await slice.pause();
          else if (!(await this.deliver(row))) return;
        }
      }
    } else if (this.options.backfill > 0 && frontier !== BOTTOM) {
      this.cursor = frontier; // an overflow during the backfill resumes with the live entries
      const range = { fromMs: this.scope.floorMs, toMs: 8.64e15, after: { ms: frontier.ms, id: `${frontier.id}\u0000` } };
      const req = { query: this.query, range, pageSize: this.options.backfill };
      const plan = planFor(this.store, this.scope, req);
      const { rows } = await runSliced(this.store, this.scope, this.query, plan.range, plan.chosen, req.pageSize, slice);
      for (const row of rows.reverse()) if (this.closed || !(await this.deliver(row))) return;
    }
    if (compareKeys(frontier, this.cursor) > 0) this.cursor = frontier;
    this.sink.mark(formatCursor(this.cursor));
    const held = this.held;
    this.held = [];
    this.live = true;
    this.onLive(held);
  }

  /** close ends the tail. */
  close(): void {
    this.closed = true;
    this.held = [];
    this.leave();
  }

  /** deliver sends one row from storage, waiting for room; false when the tail has closed meanwhile. */
  private async deliver(row: Row): Promise<boolean> {
    if (!this.sink.send(row)) await this.sink.room();
    if (compareKeys(keyOf(row), this.cursor) > 0) this.cursor = keyOf(row);
    return !this.closed;
  }

  /** candidates are the rows of a batch that may match: those its postings name for the query's level or tag term, or all */
  private candidates(batch: Batch): readonly Row[] {
    if (!this.narrow) return batch.rows;
    const { kind, terms } = this.narrow;
    const at = terms.length === 1 ? batch.candidates(kind, terms[0]) : [...new Set(terms.flatMap((t) => batch.candidates(kind, t)))].sort((a, b) => a - b);
    return at.map((k) => batch.rows[k]);
  }

  /** onBatch takes a live batch: once live and past the cursor, every row the query accepts is sent, as for any tail of the query */
  private onBatch(batch: Batch): void {
    if (this.closed) return;
    const first = batch.rows[0];
    if (!this.live || !first || !isAfter(first, this.cursor.ms, this.cursor.id)) return this.onLive(this.candidates(batch));
    const out = batch.matching(this.shareKey, () => (this.exact ? this.candidates(batch) : this.candidates(batch).filter(this.accept)));
    if (out.length === 0) return;
    const last = out[out.length - 1];
    this.cursor = { ms: last.serverMs, id: last.entry.id };
    if (!this.sink.sendAll(out)) this.overflow();
  }

  private onLive(rows: readonly Row[]): void {
    if (this.closed) return;
    const out: Row[] = [];
    let { ms, id } = this.cursor;
    for (const row of rows) {
      if (!isAfter(row, ms, id) || !this.accept(row)) continue;
      if (!this.live) {
        if (this.held.push(row) > this.options.bufferMax) return this.overflow();
        continue;
      }
      out.push(row);
      ms = row.serverMs;
      id = row.entry.id;
    }
    if (out.length === 0) return;
    this.cursor = { ms, id };
    if (!this.sink.sendAll(out)) this.overflow();
  }

  private overflow(): void {
    this.sink.overflow(formatCursor(this.cursor));
    this.close();
  }
}

const keyOf = (r: Row): Key => ({ ms: r.serverMs, id: r.entry.id });
// whether a row lies after the cursor (ms, id), without building its key: once per row of every live batch
const isAfter = (r: Row, ms: number, id: string): boolean => r.serverMs > ms || (r.serverMs === ms && r.entry.id > id);
