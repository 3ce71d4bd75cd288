// tail: one Loki tail (contract §17) on a store and its live-tail hub: every entry the query keeps with a client time at
// or after `start`, oldest first, then each new one as it is committed, each once. It joins the hub before it reads
// storage, so an entry committed meanwhile is either read or held, and one found both ways is sent once.
import { TimeSlicer } from "../query/slice.ts";
import { Tail } from "../query/tail.ts";
import type { TailHub } from "../query/tail-hub.ts";
import type { ReadScope } from "../query/page.ts";
import type { EntryStore, Row } from "../storage/entries.ts";
import type { LogExpr } from "./ast.ts";
import { type LokiEntry, lokiEntry } from "./labels.ts";
import { nsOf, toStreams } from "./logs.ts";
import { compileLog } from "./pipeline.ts";
import { pushDown, type Selected, selectEntries } from "./select.ts";

const FRAME = 1000;
/** the most stored entries a tail sends before it goes live; more closes it (1008) rather than leave any out */
const MAX_BACKFILL = 50_000;

/** TailOut is where a Loki tail's frames go: the client's WebSocket, or a stream relayed to the node holding it. */
export interface TailOut {
  /** one frame, Loki's JSON `{streams, dropped_entries}` */
  frame(text: string): void;
  /** ends the tail with a WebSocket close code and its reason */
  close(code: number, reason: string): void;
}

/** LokiTail is one open Loki tail; close() ends it and leaves the hub. */
export class LokiTail {
  private tail: Tail | undefined;
  private closed = false;

  constructor(
    private readonly store: EntryStore,
    private readonly hub: TailHub,
    private readonly scope: ReadScope,
    private readonly expr: LogExpr,
    private readonly startNs: bigint,
    private readonly out: TailOut,
  ) {}

  /** start sends the stored entries from start, then goes live; a selector that selects nothing here stays silent. */
  async start(): Promise<void> {
    const { store, scope, expr, startNs, out } = this;
    const compiled = compileLog(expr);
    const query = pushDown(expr.selector, scope.env);
    if (query === null || this.closed) return;
    const sent = new Set<string>();
    let pending: Row[] | undefined = [];
    const frame = (selected: Selected[]) => {
      if (selected.length > 0 && !this.closed) out.frame(JSON.stringify({ streams: toStreams(selected, false), dropped_entries: null }));
    };
    const keep = (rows: readonly Row[]): Selected[] => {
      const kept: Selected[] = [];
      for (const row of rows) {
        if (sent.has(row.entry.id)) continue; // read from storage already
        const entry: LokiEntry = lokiEntry(row.entry, scope.env);
        if (BigInt(nsOf(entry.clientMs)) < startNs) continue;
        const processed = compiled.run(entry);
        if (processed) kept.push({ entry, out: processed });
      }
      return kept;
    };
    const deliver = (rows: readonly Row[]) => {
      if (pending) pending.push(...rows);
      else frame(keep(rows));
      return true;
    };
    this.tail = new Tail(
      store,
      this.hub,
      scope,
      query,
      { backfill: 0, bufferMax: 100_000 },
      {
        send: (row) => deliver([row]),
        sendAll: deliver,
        room: () => Promise.resolve(),
        overflow: () => out.close(1011, "the tail fell too far behind; reconnect with start set to the last entry's time"),
        mark: () => {},
      },
    );
    await this.tail.start();
    const stored: Selected[] = [];
    const fromMs = Number((startNs + 999_999n) / 1_000_000n);
    const tooMany = new Error("backfill over its bound");
    try {
      await selectEntries(
        store,
        scope,
        expr,
        { fromMs, toMs: 8.64e15 },
        new TimeSlicer(Number.POSITIVE_INFINITY),
        (s) => {
          if (stored.push(s) > MAX_BACKFILL) throw tooMany; // held in memory to be sorted: bounded, and said so, never cut silently
        },
        compiled,
      );
    } catch (e) {
      if (e !== tooMany) throw e;
      out.close(1008, `more than ${MAX_BACKFILL} entries since start; reconnect with a later start or a narrower query`);
      return;
    }
    stored.sort((a, b) => a.entry.clientMs - b.entry.clientMs || (a.entry.id < b.entry.id ? -1 : 1));
    for (const s of stored) sent.add(s.entry.id);
    for (let i = 0; i < stored.length; i += FRAME) frame(stored.slice(i, i + FRAME));
    const held = pending ?? [];
    pending = undefined;
    frame(keep(held));
  }

  /** close ends the tail: it leaves the hub and sends nothing more. */
  close(): void {
    this.closed = true;
    this.tail?.close();
  }
}
