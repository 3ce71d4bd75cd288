// tail route: GET /logs/tail as Server-Sent Events (contract §10). Each open tail is a stream with a bounded queue:
// a consumer that lets it grow past its bound gets `event: overflow` and the stream ends. Heartbeats keep proxies
// open, at most a set number of tails per key are open, and a key that is revoked or expires has its tails closed.
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { fieldError } from "../query/explore-request.ts";
import { parseQuery } from "../query/parser.ts";
import { Tail, formatCursor, parseCursor, type Sink } from "../query/tail.ts";
import type { TailHub } from "../query/tail-hub.ts";
import type { EntryStore, Row } from "../storage/entries.ts";
import type { Environment } from "../schema.ts";
import { TailQuery } from "./explore-schema.ts";
import type { Gate } from "./guard.ts";
import { operation } from "./openapi.ts";
import { scopeOf } from "./read.ts";
import { requestUrl } from "./respond.ts";
import { logEntryText } from "./wire.ts";

/** TailSettings bound the open tails. */
export interface TailSettings {
  /** SLUICE_TAIL_HEARTBEAT_SECONDS in ms (default 15 s) */
  heartbeatMs: number;
  /** SLUICE_TAIL_MAX_PER_KEY (default 10) */
  maxPerKey: number;
  /** bytes an open tail's stream may hold beyond what the consumer has taken before it overflows (default 4 MiB) */
  bufferBytes: number;
  /** live entries one tail holds while it catches up from storage (default 10,000) */
  bufferRows: number;
  /** how often open tails recheck their key (default 1 s: a revoked key's tails close well within 5 s) */
  recheckMs: number;
}

export const DEFAULT_TAIL_SETTINGS: TailSettings = { heartbeatMs: 15_000, maxPerKey: 10, bufferBytes: 4 << 20, bufferRows: 10_000, recheckMs: 1000 };

const encoder = new TextEncoder();
const HIGH_WATER = 64 * 1024;
/** an entry's event, encoded once however many tails of its tenant send it (the hub hands them the same rows) */
const rendered = new WeakMap<Row, Uint8Array>();
const eventOf = (env: Environment, row: Row): Uint8Array => {
  let bytes = rendered.get(row);
  if (bytes === undefined) {
    const cursor = formatCursor({ ms: row.serverMs, id: row.entry.id });
    bytes = encoder.encode(`id: ${cursor}\nevent: entry\ndata: ${logEntryText(env, row.serverMs, row.entry)}\n\n`);
    rendered.set(row, bytes);
  }
  return bytes;
};

/** the events of rows sent together, joined once however many tails of one query send them (Batch.matching shares the array) */
const chunks = new WeakMap<readonly Row[], Uint8Array>();
const chunkOf = (env: Environment, rows: readonly Row[]): Uint8Array => {
  if (rows.length === 1) return eventOf(env, rows[0]);
  let bytes = chunks.get(rows);
  if (bytes === undefined) chunks.set(rows, (bytes = Buffer.concat(rows.map((r) => eventOf(env, r)))));
  return bytes;
};

interface Open {
  keyId: string;
  /** the request that opened it: its key (or session, or the key a front admitted it as) is rechecked */
  request: Request;
  end(): void;
}

/** TailStreams keeps the open tails of one server: their count per key, the key rechecks and the shutdown. */
export class TailStreams {
  private readonly open = new Set<Open>();
  private readonly perKey = new Map<string, number>();
  private recheck: Timer | undefined;

  constructor(
    private readonly gate: Gate,
    private readonly store: EntryStore,
    private readonly hub: TailHub,
    private readonly settings: TailSettings = DEFAULT_TAIL_SETTINGS,
  ) {}

  /** routes mounts GET /logs/tail. */
  routes() {
    return new Elysia().get(
      "/logs/tail",
      this.gate.guarded("logs:read", ({ request, caller, now, set, server }) => {
        const q = requestUrl(request).searchParams;
        const query = parseQuery(q.get("query") ?? "");
        const backfillText = q.get("backfill") ?? "0";
        if (!/^\d{1,4}$/.test(backfillText) || Number(backfillText) > 1000) {
          throw fieldError("backfill", `backfill must be a whole number from 0 to 1000 (got ${JSON.stringify(backfillText)})`);
        }
        const header = request.headers.get("last-event-id");
        const afterText = header ?? q.get("after");
        const after = afterText === null ? undefined : parseCursor(afterText.trim());
        if (afterText !== null && !after) {
          throw fieldError(
            header !== null ? "Last-Event-ID" : "after",
            `a cursor is an event id: <server_timestamp>_<id>, e.g. 2026-11-22T10:00:00.000Z_0193…; got ${JSON.stringify(afterText)}`,
          );
        }
        const keyId = caller.key.id;
        if ((this.perKey.get(keyId) ?? 0) >= this.settings.maxPerKey) {
          throw new ApiError(
            429,
            "RATE_LIMIT_PLAN_EXCEEDED",
            `this key has ${this.settings.maxPerKey} tails open already (SLUICE_TAIL_MAX_PER_KEY); close one first`,
            { reason: "tails", limit: this.settings.maxPerKey },
            { "retry-after": "1" },
          );
        }
        server?.timeout?.(request, 0); // a tail is silent between heartbeats: the idle timeout must not end it
        const stream = this.stream(keyId, request, caller.key.environment, (sink) => {
          const tail = new Tail(
            this.store,
            this.hub,
            scopeOf(caller, now),
            query,
            { after, backfill: Number(backfillText), bufferMax: this.settings.bufferRows },
            sink,
          );
          return tail;
        });
        return new Response(stream, {
          status: 200,
          headers: { ...(set.headers as Record<string, string>), "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" },
        });
      }),
      {
        detail: operation({
          summary: "Live tail of matching entries (Server-Sent Events)",
          description:
            "Each matching entry is one event: `id: <server_timestamp>_<id>`, `event: entry`, `data: <LogEntry JSON>`, in ascending (server_timestamp, id) order. " +
            "The stream starts after the newest stored entry; backfill first sends that many of the newest matching entries. Last-Event-ID (or after=) resumes: " +
            "every matching entry after that cursor is sent once. `: ping` every SLUICE_TAIL_HEARTBEAT_SECONDS (15). A consumer too slow gets `event: overflow` " +
            "with the cursor to resume from, and the stream ends. At most SLUICE_TAIL_MAX_PER_KEY (10) tails per key (then 429 RATE_LIMIT_PLAN_EXCEEDED).",
          permission: "logs:read",
          query: TailQuery,
          responses: { 200: { description: "text/event-stream" } },
          errors: [400, 401, 403, 429, 500],
        }),
      },
    );
  }

  /** closeAll ends every open tail (a clean stop: in-flight requests, tails included, must finish). */
  closeAll(): void {
    for (const o of [...this.open]) o.end();
  }

  private stream(keyId: string, request: Request, env: Environment, makeTail: (sink: Sink) => Tail): ReadableStream<Uint8Array> {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let tail: Tail | undefined;
    let heartbeat: Timer | undefined;
    let wake: (() => void) | undefined;
    let ended = false;
    const write = (text: string | Uint8Array): boolean => {
      if (ended) return false;
      controller.enqueue(typeof text === "string" ? encoder.encode(text) : text);
      return (controller.desiredSize ?? 0) > -this.settings.bufferBytes;
    };
    const end = () => {
      if (ended) return;
      ended = true;
      tail?.close();
      clearInterval(heartbeat);
      wake?.();
      this.open.delete(open);
      const n = (this.perKey.get(keyId) ?? 1) - 1;
      if (n === 0) this.perKey.delete(keyId);
      else this.perKey.set(keyId, n);
      if (this.open.size === 0) {
        clearInterval(this.recheck);
        this.recheck = undefined;
      }
      try {
        controller.close();
      } catch {
        // the consumer went away: the stream is closed already
      }
    };
    const open: Open = { keyId, request, end };
    const sink: Sink = {
      send: (row: Row) => write(eventOf(env, row)),
      sendAll: (rows: readonly Row[]) => write(chunkOf(env, rows)),
      room: () => (ended || (controller.desiredSize ?? 0) > 0 ? Promise.resolve() : new Promise<void>((r) => (wake = r))),
      mark: (cursor: string) => void write(`id: ${cursor}\n\n`), // EventSource keeps it as its last event id, and dispatches nothing
      overflow: (cursor: string) => {
        write(`id: ${cursor}\nevent: overflow\ndata: ${JSON.stringify({ cursor })}\n\n`);
        end();
      },
    };
    this.open.add(open);
    this.perKey.set(keyId, (this.perKey.get(keyId) ?? 0) + 1);
    this.recheck ??= setInterval(() => {
      for (const o of [...this.open]) if (!this.gate.stillValid(o.request)) o.end();
    }, this.settings.recheckMs);
    return new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          controller = c;
          controller.enqueue(encoder.encode(": open\n\n")); // the headers go out with the first bytes
          heartbeat = setInterval(() => write(": ping\n\n"), this.settings.heartbeatMs);
          tail = makeTail(sink);
          tail.start().catch(() => end());
        },
        pull: () => {
          const w = wake;
          wake = undefined;
          w?.();
        },
        cancel: () => end(),
      },
      { highWaterMark: HIGH_WATER, size: (chunk) => chunk?.byteLength ?? 0 },
    );
  }
}
