// app: builds the Elysia app from its parts and maps every failure to the JSON error body (contract §7).
import { dirname } from "node:path";
import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import { AdminService } from "./admin/service.ts";
import { Authenticator } from "./auth/authenticate.ts";
import { Sessions } from "./auth/sessions.ts";
import { Gate } from "./http/guard.ts";
import type { Handoff } from "./http/handoff.ts";
import { RateLimiter } from "./limits/rate.ts";
import { ApiError, CLIENT_CLOSED, ClientClosed } from "./errors.ts";
import { accountRoutes } from "./http/account.ts";
import { adminRoutes } from "./http/admin.ts";
import { healthRoutes } from "./http/health.ts";
import { ingestRoutes } from "./http/ingest.ts";
import { Metrics, observe } from "./http/observe.ts";
import { openapiConfig } from "./http/openapi.ts";
import { exploreRoutes } from "./http/explore.ts";
import { readRoutes } from "./http/read.ts";
import { rejectionRoutes } from "./http/rejections.ts";
import { esRoutes } from "./http/es.ts";
import { lokiRoutes } from "./http/loki.ts";
import { lokiReadRoutes } from "./http/loki-read.ts";
import { lokiTailRoutes } from "./http/loki-tail.ts";
import { otlpRoutes } from "./http/otlp.ts";
import { uiRoutes } from "./http/ui.ts";
import { RejectionLog, type RejectedBatch } from "./ingest/rejections.ts";
import { DEFAULT_TAIL_SETTINGS, TailStreams, type TailSettings } from "./http/tail.ts";
import { TailHub } from "./query/tail-hub.ts";
import { errorReply, requestUrl } from "./http/respond.ts";
import { IngestService, type WriteSink } from "./ingest/ingest.ts";
import type { PlanTable } from "./limits/plans.ts";
import type { Databases } from "./storage/db.ts";
import { EntryStore } from "./storage/entries.ts";
import { MetaStore } from "./storage/records/meta.ts";
import { allocatedBytes, storageReport } from "./storage/report.ts";
import { SessionStore } from "./storage/records/sessions.ts";
import { AlertStore } from "./storage/records/alerts.ts";
import { AlertService } from "./alerts/service.ts";
import { AlertEvaluator } from "./alerts/evaluator.ts";
import { SavedCells } from "./storage/records/cells.ts";
import { Deliverer } from "./alerts/deliver.ts";
import { sendMail } from "./alerts/email.ts";
import type { Channel } from "./alerts/channels.ts";
import type { Placement } from "./alerts/placement.ts";
import { alertRoutes } from "./http/alerts.ts";
import { adminAlertRoutes } from "./http/alerts-admin.ts";
import { UsageStore } from "./storage/usage.ts";

export interface AppDeps {
  dbs: Databases;
  plans: PlanTable;
  /** epoch ms; injected by tests so that minutes and months pass without sleeping */
  clock?: () => number;
  /** requests per minute per client IP; -1 for none (SLUICE_IP_RATE_PER_MIN, default 6,000); a cluster node's share changes */
  ipRatePerMinute?: number | (() => number);
  /** proxies in front whose X-Forwarded-For entries are trusted (SLUICE_TRUST_PROXY) */
  trustProxyHops?: number;
  /** entries per full-text segment before it is sealed and persisted (tests make it small) */
  segmentEntries?: number;
  /** SLUICE_ADMIN_TOKEN, when set; otherwise the stored hash of the generated token is used */
  adminToken: string | undefined;
  /** where errors are logged (default: JSON lines on stderr) */
  log?: (line: Record<string, unknown>) => void;
  /** where access-log lines go; undefined: no access log */
  accessLog?: (line: Record<string, unknown>) => void;
  /** how long a request body may take to arrive (default 30 s) */
  bodyTimeoutMs?: number;
  /** how long a read may run before it answers 400 (default 30 s) */
  queryTimeoutMs?: number;
  /** bounds of live tails (SLUICE_TAIL_*); tests shorten them */
  tail?: Partial<TailSettings>;
  /** where writes go instead of this data directory's entry store (cluster mode: the partition logs) */
  writeTo?: WriteSink;
  /** where the shipper routes' rejections go instead of this process's list (cluster mode: the partition logs) */
  forwardRejections?: (batch: RejectedBatch) => Promise<void>;
  /** cluster mode: where admitted reads are answered, and which reads a front admitted (http/handoff.ts) */
  handoff?: Handoff;
  /** the smallest `every` of an alert rule, ms (SLUICE_ALERT_MIN_EVERY, default 10 s) */
  alertMinEveryMs?: number;
  /** the address users reach the server at, for links in notices (SLUICE_EXTERNAL_URL; default: where it listens) */
  externalUrl?: () => string;
  /** which alert rules this Sluice evaluates and whose notices it sends (cluster mode; default all) */
  alertPlacement?: Placement;
  /** whether a preview may read this Sluice's entries (false on a cluster front, whose entries are the copies') */
  previewsHere?: boolean;
}

/** Services are the parts the routes share; built once per data directory. */
export function services(deps: AppDeps) {
  const clock = deps.clock ?? Date.now;
  const meta = new MetaStore(deps.dbs.meta);
  const usage = new UsageStore(deps.dbs.usage);
  const entries = new EntryStore(deps.dbs, usage, deps.segmentEntries);
  const limiter = new RateLimiter(deps.ipRatePerMinute ?? 6000);
  const auth = new Authenticator(meta, deps.plans);
  const sessions = new Sessions(new SessionStore(deps.dbs.meta), (hash) => meta.keyByHash(hash) !== undefined);
  const gate = new Gate(auth, limiter, clock, deps.trustProxyHops ?? 0, deps.bodyTimeoutMs, sessions, deps.handoff);
  const storage = () => storageReport(entries.stats.all(), allocatedBytes(dirname(deps.dbs.dataFile)));
  const alertStore = new AlertStore(deps.dbs.alerts);
  const externalUrl = deps.externalUrl ?? (() => "http://localhost:8080");
  const deliverer = new Deliverer(alertStore, (n) => alertStore.get<Channel>("channel", n, n.channelId), clock, externalUrl, sendMail, deps.alertPlacement);
  // evaluates alert rules on a timer once started (the server starts it; tests may call tick())
  const evaluator = new AlertEvaluator({
    store: alertStore,
    entries,
    clock,
    floorOf: (ws, nowMs) => {
      const w = meta.workspace(ws);
      return w && deps.plans.has(w.plan) ? deps.plans.retentionFloor(w.plan, nowMs) : undefined;
    },
    externalUrl,
    notify: () => deliverer.pass(),
    resend: (channel, payload) => deliverer.resend(channel, payload),
    placement: deps.alertPlacement,
    cells: new SavedCells(deps.dbs.cells),
  });
  const hub = new TailHub(entries);
  return {
    meta,
    usage,
    entries,
    limiter,
    metrics: new Metrics(deps.dbs.dataFile, entries.fulltext, storage),
    /** what storage costs, per workspace environment and in total (GET /api/v1/admin/storage) */
    storage,
    auth,
    sessions,
    clock,
    gate,
    hub,
    tails: new TailStreams(gate, entries, hub, { ...DEFAULT_TAIL_SETTINGS, ...deps.tail }),
    ingest: new IngestService(deps.writeTo ?? entries, clock, deps.writeTo !== undefined),
    admin: new AdminService(meta, deps.plans),
    /** the last entries each workspace environment's shippers had rejected */
    rejections: new RejectionLog(deps.forwardRejections),
    alerts: new AlertService(alertStore, entries, {
      minEveryMs: deps.alertMinEveryMs ?? 10_000,
      externalUrl,
      sendMail,
      retire: (t, r) => evaluator.retire(t, r),
      previewsHere: deps.previewsHere ?? true,
    }),
    evaluator,
    deliverer,
  };
}

/** buildApp assembles health, admin, OpenAPI, the workspace endpoints and the shipper routes (contract §11). */
export function buildApp(deps: AppDeps, s = services(deps)) {
  const log = deps.log ?? ((line) => console.error(JSON.stringify(line)));
  return new Elysia()
    .onRequest(({ set }) => {
      set.headers["x-request-id"] = crypto.randomUUID();
    })
    .use(observe(s.metrics, deps.accessLog))
    .onError(({ error, code, request, set }) => {
      const requestId = String(set.headers["x-request-id"] ?? crypto.randomUUID());
      if (error instanceof ApiError) return errorReply(set, error, requestId);
      if (error instanceof ClientClosed) {
        set.status = CLIENT_CLOSED; // recorded as such; nobody is left to read an answer
        return "";
      }
      if (code === "NOT_FOUND") {
        const { pathname } = requestUrl(request);
        return errorReply(
          set,
          new ApiError(404, "VALIDATION_INVALID_REQUEST", `no route ${request.method} ${pathname}; the API is described at /api/v1/workspace/openapi.json`),
          requestId,
        );
      }
      if (code === "PARSE" || code === "VALIDATION") {
        return errorReply(
          set,
          new ApiError(400, "VALIDATION_FAILED", "the request could not be read; check it against /api/v1/workspace/openapi.json"),
          requestId,
        );
      }
      // Never a stack trace to the client: the details go to the server log under the request id.
      const cause = error instanceof Error ? (error.cause ?? error) : error;
      log({
        level: "error",
        request_id: requestId,
        method: request.method,
        path: requestUrl(request).pathname,
        error: String(cause),
        stack: (cause as Error)?.stack,
      });
      return errorReply(set, new ApiError(500, "INTERNAL_SERVER_ERROR", "internal error; retry later, and report the request_id if it persists"), requestId);
    })
    .use(healthRoutes(deps.dbs, s.metrics))
    .use(openapi(openapiConfig))
    .use(adminRoutes(s.admin, s.meta, deps.adminToken, s.storage))
    .use(adminAlertRoutes(s.alerts, s.meta, deps.plans, deps.adminToken, s.clock, deps.queryTimeoutMs ?? 30_000))
    .use(otlpRoutes(s))
    .use(lokiRoutes(s))
    .use(lokiReadRoutes(s.gate, s.entries, deps.queryTimeoutMs ?? 30_000))
    .use(lokiTailRoutes(s.gate, s.entries, s.hub, { ...DEFAULT_TAIL_SETTINGS, ...deps.tail }))
    .use(esRoutes(s))
    .use(uiRoutes(s.auth, s.sessions, s.clock))
    .group("/api/v1/workspace", (ws) =>
      ws
        .use(accountRoutes(s.gate, s.meta, s.usage))
        .use(ingestRoutes(s.gate, s.ingest, s.metrics))
        .use(readRoutes(s.gate, s.entries, deps.queryTimeoutMs))
        .use(rejectionRoutes(s.gate, s.rejections))

        .use(exploreRoutes(s.gate, s.entries, deps.queryTimeoutMs ?? 30_000))
        .use(s.tails.routes())
        .use(alertRoutes(s.gate, s.alerts, deps.queryTimeoutMs ?? 30_000)),
    );
}
