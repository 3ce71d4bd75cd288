// loki-tail: GET /loki/api/v1/tail over WebSocket (contract §17): every entry the query keeps with a client time at or
// after `start`, oldest first, then each new one as it is committed, each once. It joins the live-tail hub before it
// reads storage, so an entry committed meanwhile is either read or held, and one found both ways is sent once.
import { Elysia } from "elysia";
import type { Caller } from "../auth/authenticate.ts";
import { ApiError } from "../errors.ts";
import type { LokiEntry } from "../loki/labels.ts";
import { lokiEntry } from "../loki/labels.ts";
import { nsOf, toStreams } from "../loki/logs.ts";
import { rangeOf } from "../loki/params.ts";
import { parseLogQL } from "../loki/parse.ts";
import { compileLog } from "../loki/pipeline.ts";
import { pushDown, type Selected, selectEntries } from "../loki/select.ts";
import { TimeSlicer } from "../query/slice.ts";
import { Tail } from "../query/tail.ts";
import type { TailHub } from "../query/tail-hub.ts";
import type { EntryStore, Row } from "../storage/entries.ts";
import type { Gate } from "./guard.ts";
import { scopeOf } from "./read.ts";
import { requestUrl } from "./respond.ts";

const HOUR_NS = 3_600_000_000_000n;
const FRAME = 1000;
/** the most stored entries a tail sends before it goes live; more closes it (1008) rather than leave any out */
const MAX_BACKFILL = 50_000;
/** how often an open tail's key is checked again: a revoked or expired key's tails close within it */
const RECHECK_MS = 1000;

interface Socket {
  send(text: string): unknown;
  close(code?: number, reason?: string): void;
  data: { request: Request };
}

/** lokiTailRoutes mounts the WebSocket tail; the key is checked on the upgrade request, as on every read. */
export function lokiTailRoutes(gate: Gate, store: EntryStore, hub: TailHub, bounds: { maxPerKey: number; recheckMs?: number } = { maxPerKey: 10 }) {
  const recheckMs = bounds.recheckMs ?? RECHECK_MS;
  const admitted = new WeakMap<Request, { caller: Caller; now: number }>();
  // by the upgrade request: the socket object of open and close may differ
  const open = new Map<Request, { tail: Tail; socket: Socket; keyId: string }>();
  const perKey = (keyId: string) => [...open.values()].filter((o) => o.keyId === keyId).length;
  let recheck: Timer | undefined;
  const watch = () => {
    recheck ??= setInterval(() => {
      for (const [request, o] of open) if (!gate.stillValid(request)) o.socket.close(1008, "the API key was revoked or has expired");
      if (open.size === 0) {
        clearInterval(recheck);
        recheck = undefined;
      }
    }, recheckMs);
  };
  const admit = gate.guarded<Record<string, string>, string>("logs:read", ({ request, caller, now }) => {
    admitted.set(request, { caller, now });
    return "";
  });
  return new Elysia().ws("/loki/api/v1/tail", {
    detail: { hide: true }, // Loki's own API, documented by Loki; the push route is hidden alike
    async beforeHandle(ctx) {
      try {
        await admit(ctx as unknown as Parameters<typeof admit>[0]);
        const q = requestUrl(ctx.request).searchParams;
        const expr = parseLogQL(q.get("query") ?? "");
        if (expr.kind !== "log") throw new ApiError(400, "VALIDATION_QUERY_INVALID", 'tail takes a log query such as {level="error"}, not a metric query');
        const { caller, now } = admitted.get(ctx.request)!;
        rangeOf(q, now, HOUR_NS);
        if (perKey(caller.key.id) >= bounds.maxPerKey) {
          throw new ApiError(429, "RATE_LIMIT_PLAN_EXCEEDED", `this key has ${bounds.maxPerKey} tails open already (SLUICE_TAIL_MAX_PER_KEY); close one first`);
        }
        return undefined;
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        const errorType = e.status === 400 ? "bad_data" : e.status === 429 ? "too_many_requests" : "unauthorized";
        const body = { status: "error", errorType, error: e.message, message: e.message };
        return new Response(JSON.stringify(body), { status: e.status, headers: { "content-type": "application/json" } });
      }
    },
    async open(ws) {
      const socket = ws as unknown as Socket;
      const request = socket.data.request;
      const { caller, now } = admitted.get(request)!;
      const q = requestUrl(request).searchParams;
      const expr = parseLogQL(q.get("query") ?? "");
      if (expr.kind !== "log") return;
      const { startNs } = rangeOf(q, now, HOUR_NS);
      const scope = scopeOf(caller, now);
      const compiled = compileLog(expr);
      const query = pushDown(expr.selector, scope.env);
      if (query === null) return; // selects nothing here: the socket stays open and silent
      const sent = new Set<string>();
      let pending: Row[] | undefined = [];
      const frame = (selected: Selected[]) => {
        if (selected.length > 0) socket.send(JSON.stringify({ streams: toStreams(selected, false), dropped_entries: null }));
      };
      const keep = (rows: readonly Row[]): Selected[] => {
        const out: Selected[] = [];
        for (const row of rows) {
          if (sent.has(row.entry.id)) continue; // read from storage already
          const entry: LokiEntry = lokiEntry(row.entry, scope.env);
          if (BigInt(nsOf(entry.clientMs)) < startNs) continue;
          const processed = compiled.run(entry);
          if (processed) out.push({ entry, out: processed });
        }
        return out;
      };
      const deliver = (rows: readonly Row[]) => {
        if (pending) pending.push(...rows);
        else frame(keep(rows));
        return true;
      };
      const tail = new Tail(
        store,
        hub,
        scope,
        query,
        { backfill: 0, bufferMax: 100_000 },
        {
          send: (row) => deliver([row]),
          sendAll: deliver,
          room: () => Promise.resolve(),
          overflow: () => socket.close(1011, "the tail fell too far behind; reconnect with start set to the last entry's time"),
          mark: () => {},
        },
      );
      open.set(request, { tail, socket, keyId: caller.key.id });
      watch();
      await tail.start();
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
        socket.close(1008, `more than ${MAX_BACKFILL} entries since start; reconnect with a later start or a narrower query`);
        return;
      }
      stored.sort((a, b) => a.entry.clientMs - b.entry.clientMs || (a.entry.id < b.entry.id ? -1 : 1));
      for (const s of stored) sent.add(s.entry.id);
      for (let i = 0; i < stored.length; i += FRAME) frame(stored.slice(i, i + FRAME));
      const held = pending ?? [];
      pending = undefined;
      frame(keep(held));
    },
    close(ws) {
      const request = (ws as unknown as Socket).data.request;
      open.get(request)?.tail.close();
      open.delete(request);
    },
  });
}
