// observe: Prometheus metrics (prom-client) and one structured access-log line per request.
// Neither ever holds a key, a token or a body: only routes, statuses, sizes and timings.
import { statSync } from "node:fs";
import { Elysia } from "elysia";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { ApiError, CLIENT_CLOSED, ClientClosed } from "../errors.ts";
import type { FullText } from "../storage/indexes/fulltext.ts";
import type { StorageReport } from "../storage/report.ts";
import { requestUrl } from "./respond.ts";

/** Metrics holds every series Sluice exports at /metrics. */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: "sluice_http_requests_total",
    help: "HTTP requests by route, method and status",
    labelNames: ["route", "method", "status"],
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: "sluice_http_request_duration_seconds",
    help: "HTTP request latency by route and method",
    labelNames: ["route", "method"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly entries = new Counter({ name: "sluice_entries_ingested_total", help: "log entries stored (answered 201)", registers: [this.registry] });
  readonly bytes = new Counter({
    name: "sluice_request_body_bytes_total",
    help: "bytes of request bodies read, by route",
    labelNames: ["route"],
    registers: [this.registry],
  });
  readonly rejected = new Counter({
    name: "sluice_rate_limit_rejections_total",
    help: "requests answered 429, by error code",
    labelNames: ["code"],
    registers: [this.registry],
  });

  readonly shipped = new Counter({
    name: "sluice_shipper_entries_total",
    help: "entries received from standard shippers (contract §11), by protocol, outcome (received, stored, rejected) and reason of rejection",
    labelNames: ["protocol", "outcome", "reason"],
    registers: [this.registry],
  });
  readonly shippedRequests = new Counter({
    name: "sluice_shipper_requests_refused_total",
    help: "shipper requests refused whole (nothing stored), by protocol and reason: undecodable (400), quota or rate (429), auth (401, 403)",
    labelNames: ["protocol", "reason"],
    registers: [this.registry],
  });

  constructor(dataFile: string, fulltext: FullText, storage: () => StorageReport) {
    collectDefaultMetrics({ register: this.registry, prefix: "sluice_" });
    new Gauge({
      name: "sluice_lmdb_file_bytes",
      help: "size of the LMDB data file",
      registers: [this.registry],
      collect() {
        this.set(statSync(dataFile, { throwIfNoEntry: false })?.size ?? 0);
      },
    });
    // one report a scrape serves both storage gauges: it stats the data directory's files
    let report: StorageReport | undefined;
    new Gauge({
      name: "sluice_storage_disk_bytes",
      help: "bytes the stored entries and every index of them take in the data directory (its allocated size)",
      registers: [this.registry],
      collect() {
        report = storage();
        this.set(report.total.disk_bytes);
      },
    });
    new Gauge({
      name: "sluice_storage_raw_bytes",
      help: "bytes of the stored entries' JSON as GET /logs/{id} returns it",
      registers: [this.registry],
      collect() {
        this.set((report ?? storage()).total.raw_bytes);
        report = undefined;
      },
    });
    new Gauge({
      name: "sluice_fulltext_segments",
      help: "full-text segments: sealed (persisted), loaded (sealed and in memory), active (in memory, one per workspace environment)",
      labelNames: ["state"],
      registers: [this.registry],
      collect() {
        const s = fulltext.stats();
        this.set({ state: "sealed" }, s.sealed);
        this.set({ state: "loaded" }, s.loaded);
        this.set({ state: "active" }, s.tenants);
      },
    });
  }
}

/** AfterResponse is what the recorder reads of Elysia's after-response context. */
interface AfterResponse {
  request: Request;
  set: { headers: Record<string, unknown>; status?: unknown };
  route?: string;
  /** the request's path without its query, as Elysia has it */
  path?: string;
  responseValue?: unknown;
  error?: unknown;
  code?: unknown;
}

// kept on the request itself: a WeakMap entry per request lengthened garbage collection pauses
const STARTED = Symbol("sluice.started");
const BODY_BYTES = Symbol("sluice.bodyBytes");
type Observed = Request & { [STARTED]?: number; [BODY_BYTES]?: number };

/** noteBodyBytes records how many body bytes a request carried, for metrics and the access log. */
export const noteBodyBytes = (request: Request, n: number): void => void ((request as Observed)[BODY_BYTES] = n);

/** observe measures every request and writes its access-log line (log undefined: no access log). */
export function observe(metrics: Metrics, log: ((line: Record<string, unknown>) => void) | undefined) {
  return (
    new Elysia({ name: "observe" })
      .onRequest(({ request }) => void ((request as Observed)[STARTED] = performance.now()))
      // destructured, not taken whole: Elysia then knows this hook needs no cookies, query or body parsed
      .onAfterResponse({ as: "global" }, (({ request, set, route, path, responseValue, error, code }: AfterResponse) => {
        try {
          record({ request, set, route, path, responseValue, error, code });
        } catch (e) {
          console.error(JSON.stringify({ level: "error", msg: "BUG: recording a request failed", error: String(e) })); // never fatal
        }
      }) as () => void)
  );

  function record({ request, set, route = "unmatched", path, responseValue, error, code }: AfterResponse) {
    const status = responseValue instanceof Response ? responseValue.status : statusOf(error, code, set.status);
    const seconds = (performance.now() - ((request as Observed)[STARTED] ?? performance.now())) / 1000;
    metrics.requests.inc({ route, method: request.method, status });
    metrics.latency.observe({ route, method: request.method }, seconds);
    const bytes = (request as Observed)[BODY_BYTES] ?? 0;
    if (bytes) metrics.bytes.inc({ route }, bytes);
    if (error instanceof ApiError && error.status === 429) metrics.rejected.inc({ code: error.code });
    log?.({
      msg: "request",
      request_id: set.headers["x-request-id"],
      method: request.method,
      route,
      path: path ?? requestUrl(request).pathname,
      status,
      duration_ms: Number((seconds * 1000).toFixed(3)),
      body_bytes: bytes,
    });
  }
}

function statusOf(error: unknown, code: unknown, fallback: unknown): number {
  if (error instanceof ApiError) return error.status;
  if (error instanceof ClientClosed) return CLIENT_CLOSED;
  if (code === "NOT_FOUND") return 404;
  if (error) return 500;
  return typeof fallback === "number" ? fallback : 200;
}
