// loki-tail: GET /loki/api/v1/tail over WebSocket (contract §17). One process runs the tail on its own store (loki/tail.ts);
// a cluster front hands it, as a stream of frames, to the copy that answers its partition's live tails, as it does
// GET /logs/tail, so the tail starts once that copy has applied every write acknowledged before it opened.
import { Elysia } from "elysia";
import type { Caller } from "../auth/authenticate.ts";
import { ApiError } from "../errors.ts";
import { rangeOf } from "../loki/params.ts";
import { parseLogQL } from "../loki/parse.ts";
import { LokiTail, type TailOut } from "../loki/tail.ts";
import type { LogExpr } from "../loki/ast.ts";
import type { TailHub } from "../query/tail-hub.ts";
import type { EntryStore } from "../storage/entries.ts";
import type { Gate } from "./guard.ts";
import { scopeOf } from "./read.ts";
import { requestUrl } from "./respond.ts";

const HOUR_NS = 3_600_000_000_000n;
/** how often an open tail's key is checked again: a revoked or expired key's tails close within it */
const RECHECK_MS = 1000;
/** where a front hands a tail to a copy: frames one a line, then a last line `{"close":{code,reason}}` */
export const RELAYED_TAIL = "/loki/api/v1/tail/relayed";
/** the WebSocket close code when the node answering a tail stopped: the client reconnects with start */
const RESTART = 1012;

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
  const open = new Map<Request, { end: () => void; socket: Socket; keyId: string }>();
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
  // admitted here, on the node the client reached: a cluster front relays the tail itself once the socket is open
  const admit = gate.guarded<Record<string, string>, string>(
    "logs:read",
    ({ request, caller, now }) => {
      admitted.set(request, { caller, now });
      return "";
    },
    "other",
    true,
  );
  const relayed = gate.guarded<Record<string, string>, Response>(
    "logs:read",
    ({ request, caller, now }) => {
      if (!gate.fromFront(request))
        throw new ApiError(404, "VALIDATION_INVALID_REQUEST", `no route GET ${RELAYED_TAIL}; tail at /loki/api/v1/tail over WebSocket`);
      const q = requestUrl(request).searchParams;
      return relayedTail(store, hub, logExpr(q.get("query") ?? ""), scopeOf(caller, now), rangeOf(q, now, HOUR_NS).startNs);
    },
    "other",
    true,
  );
  return new Elysia().get(RELAYED_TAIL, relayed, { detail: { hide: true } }).ws("/loki/api/v1/tail", {
    detail: { hide: true }, // Loki's own API, documented by Loki; the push route is hidden alike
    async beforeHandle(ctx) {
      try {
        await admit(ctx as unknown as Parameters<typeof admit>[0]);
        const q = requestUrl(ctx.request).searchParams;
        logExpr(q.get("query") ?? "");
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
      const expr = logExpr(q.get("query") ?? "");
      const { startNs } = rangeOf(q, now, HOUR_NS);
      const out: TailOut = { frame: (text) => socket.send(text), close: (code, reason) => socket.close(code, reason) };
      const handed = gate.handOff(relayRequest(request, startNs), caller);
      if (handed) {
        const ended = { now: false, cancel: () => {} };
        const end = () => {
          ended.now = true;
          ended.cancel();
        };
        open.set(request, { end, socket, keyId: caller.key.id });
        watch();
        await followRelayed(handed, out, ended);
        return;
      }
      const tail = new LokiTail(store, hub, scopeOf(caller, now), expr, startNs, out);
      open.set(request, { end: () => tail.close(), socket, keyId: caller.key.id });
      watch();
      await tail.start();
    },
    close(ws) {
      const request = (ws as unknown as Socket).data.request;
      open.get(request)?.end();
      open.delete(request);
    },
  });
}

/** logExpr parses a tail's query, which must be a log query. */
function logExpr(text: string): LogExpr {
  const expr = parseLogQL(text);
  if (expr.kind !== "log") throw new ApiError(400, "VALIDATION_QUERY_INVALID", 'tail takes a log query such as {level="error"}, not a metric query');
  return expr;
}

/** relayRequest is the upgrade request as a copy answers it: the relayed route, with the start this node resolved. */
function relayRequest(request: Request, startNs: bigint): Request {
  const url = requestUrl(request);
  url.pathname = RELAYED_TAIL;
  url.searchParams.set("start", startNs.toString());
  const headers = new Headers(request.headers);
  for (const name of ["upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-protocol"])
    headers.delete(name);
  return new Request(url.href, { method: "GET", headers });
}

/** relayedTail runs a tail on this copy and answers its frames one a line, the close last. */
function relayedTail(store: EntryStore, hub: TailHub, expr: LogExpr, scope: ReturnType<typeof scopeOf>, startNs: bigint): Response {
  const encoder = new TextEncoder();
  let end = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let ended = false;
      end = () => {
        if (ended) return;
        ended = true;
        tail.close();
        try {
          controller.close();
        } catch {
          // the asker cancelled first
        }
      };
      const tail = new LokiTail(store, hub, scope, expr, startNs, {
        frame: (text) => {
          if (!ended) controller.enqueue(encoder.encode(`${text}\n`));
        },
        close: (code, reason) => {
          if (!ended) controller.enqueue(encoder.encode(`${JSON.stringify({ close: { code, reason } })}\n`));
          end();
        },
      });
      void tail.start().catch(() => {
        if (!ended) controller.enqueue(encoder.encode(`${JSON.stringify({ close: { code: 1011, reason: "the tail failed; reconnect with start" } })}\n`));
        end();
      });
    },
    cancel: () => end(),
  });
  return new Response(body, { headers: { "content-type": "application/x-ndjson" } });
}

/** followRelayed sends a relayed tail's frames to the socket and closes it as the copy said, or as a restart when its stream ends. */
async function followRelayed(handed: Promise<Response>, out: TailOut, ended: { now: boolean; cancel: () => void }): Promise<void> {
  let response: Response;
  try {
    response = await handed;
  } catch (e) {
    return out.close(1011, e instanceof ApiError ? e.message.slice(0, 120) : "no copy answered the tail; reconnect");
  }
  if (!response.ok || !response.body) {
    const message = ((await response.json().catch(() => ({}))) as { message?: string }).message;
    return out.close(1011, (message ?? `the tail was refused (${response.status})`).slice(0, 120));
  }
  const reader = response.body.getReader();
  ended.cancel = () => void reader.cancel().catch(() => {});
  if (ended.now) return ended.cancel();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let at = buffered.indexOf("\n");
    while (at >= 0) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      if (line.startsWith('{"close"')) {
        const { code, reason } = (JSON.parse(line) as { close: { code: number; reason: string } }).close;
        return out.close(code, reason);
      }
      out.frame(line);
      at = buffered.indexOf("\n");
    }
  }
  if (!ended.now) out.close(RESTART, "the node answering this tail stopped; reconnect with start set to the last entry's time");
}
