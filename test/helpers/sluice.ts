// A real Sluice on a real LMDB in a temporary directory, driven through app.handle(Request).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compose } from "../../src/compose.ts";
import type { TailSettings } from "../../src/http/tail.ts";
import { PlanTable, type Plan } from "../../src/limits/plans.ts";
import type { Environment, KeyType } from "../../src/schema.ts";
import { partitionOf } from "../../src/cluster/names.ts";
import type { TestCluster } from "./cluster.ts";

type Sluice = ReturnType<typeof compose>;

export const ADMIN_TOKEN = "test-admin-token";
export const WS = "/api/v1/workspace";

export interface CallOptions {
  key?: string;
  body?: unknown;
  /** a body sent exactly as given, bypassing JSON.stringify */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
}

export interface TestSluice {
  dir: string;
  dbs: Sluice["dbs"];
  app: Sluice["app"];
  svc: Sluice;
  /** call sends one request; JSON bodies get Content-Type application/json unless headers say otherwise */
  call(method: string, path: string, opts?: CallOptions): Promise<Response>;
  /** admin calls the admin API with the admin token */
  admin(method: string, path: string, body?: unknown): Promise<Response>;
  /** workspace makes a workspace on a plan and returns a key maker for it */
  workspace(plan?: string): Promise<{ id: string; key(env: Environment, type: KeyType, extra?: Record<string, unknown>): Promise<string> }>;
  close(): Promise<void>;
}

export interface TestOptions {
  /** epoch ms; a test moves time by changing what this returns */
  clock?: () => number;
  plans?: Plan[];
  ipRatePerMinute?: number;
  trustProxyHops?: number;
  /** entries per full-text segment before it is sealed (small values make sealing happen in tests) */
  segmentEntries?: number;
  accessLog?: (line: Record<string, unknown>) => void;
  bodyTimeoutMs?: number;
  /** how long a read may run before it answers 400 */
  queryTimeoutMs?: number;
  /** bounds of live tails (heartbeat, per key, buffers, key recheck) */
  tail?: Partial<TailSettings>;
  /** the smallest `every` of an alert rule, ms (SLUICE_ALERT_MIN_EVERY) */
  alertMinEveryMs?: number;
  /** the address in alert notices' links */
  externalUrl?: () => string;
}

/**
 * startTestSluice opens a fresh data directory; pass an existing dir to reopen it (restart). With SLUICE_TEST_CLUSTER
 * set (`round-robin` or `one`), it is a cluster instead (3 nodes in this process on 3 NATS servers the test process
 * shares, an account each: helpers/cluster.ts) kept in that directory, whose calls go round-robin through every front
 * node or all through node 0; reopening its directory restarts every node on the data it kept. Of its internals, svc
 * has what a cluster has too (clusterTestSluice), dbs is not there. SLUICE_TEST_CLUSTER_FRONTS=1 gives the cluster one
 * front node (the others query and storage), whose rate limits are then the plans' whole figures.
 */
export function startTestSluice(dir?: string, opts: TestOptions = {}): TestSluice {
  const mode = process.env.SLUICE_TEST_CLUSTER;
  const home = dir ?? mkdtempSync(join(tmpdir(), mode ? "sluice-test-cluster-" : "sluice-test-"));
  if (mode) return clusterTestSluice(mode === "one" ? "one" : "round-robin", opts, home);
  return singleTestSluice(home, opts);
}

function singleTestSluice(dir: string, opts: TestOptions): TestSluice {
  // quiet: a test reads what it needs of storage and of the error log itself
  const svc = compose({ ...opts, dataDir: dir, plans: new PlanTable(opts.plans), adminToken: ADMIN_TOKEN, log: () => {}, storageLog: () => {} });
  const { dbs, app } = svc;
  const call: TestSluice["call"] = (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key !== undefined) headers["x-api-key"] = opts.key;
    let body: string | Uint8Array | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
    }
    return app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
  };
  return {
    dir,
    dbs,
    app,
    svc,
    call,
    admin: (method, path, body) => call(method, `/api/v1/admin${path}`, { body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
    async workspace(plan = "unlimited") {
      const ws = await svc.admin.createWorkspace({ name: `ws-${crypto.randomUUID().slice(0, 8)}`, plan });
      return {
        id: ws.id,
        key: async (environment, type, extra = {}) => (await svc.admin.createKey(ws.id, { environment, type, ...extra })).key,
      };
    },
    async close() {
      await svc.close(); // as the server's stop does
    },
  };
}

/** clusterTestSluice is a TestSluice whose calls go to a cluster started in the background (test/helpers/cluster.ts). */
function clusterTestSluice(mode: "one" | "round-robin", opts: TestOptions, dir: string): TestSluice {
  const fronts = Number(process.env.SLUICE_TEST_CLUSTER_FRONTS || 3);
  const ready = import("./cluster.ts").then(
    ({ startTestCluster }) =>
      startTestCluster({ plans: opts.plans, app: { ...opts, ipRatePerMinute: opts.ipRatePerMinute ?? 6000 }, home: dir, fronts, shared: true }), // 6,000: the app's default, as a single process's test has it
  );
  clusterHomes.add(dir);
  let turn = 0;
  const next = () => (mode === "one" ? 0 : turn++ % fronts); // as a load balancer sends calls: to front nodes
  const call: TestSluice["call"] = async (method, path, o) => (await ready).call(next(), method, path, o);
  // app.handle too: a test that builds its own Request sends it to a node as any other call
  const app = { handle: async (request: Request) => (await ready).nodes[next()].handle(request) } as unknown as TestSluice["app"];
  let started: TestCluster | undefined;
  void ready.then((c) => (started = c)).catch(() => {});
  const missing = (what: string) => () => {
    throw new Error(`${what} is not there when SLUICE_TEST_CLUSTER runs the tests on a cluster`);
  };
  // of a single process's services, what a cluster has too: the admin service (node 0's, on the shared bucket),
  // entries.append, which goes through node 0's front to the partition streams as its writes do, usage.used, read
  // on the copy of the workspace's partition that has applied the most, node 0's front parts a syslog listener takes,
  // and its alert service, which reads the node's mirror of the alerts bucket
  const svc = () => {
    const cluster = started;
    if (!cluster) throw new Error("svc is there once the cluster has started: await a call or s.workspace() first");
    const node = cluster.nodes[0];
    const copyOf = (ws: string) => {
      const p = partitionOf(ws, node.settings.partitions);
      const copies = cluster.nodes.flatMap((n) => n.copyOf(p) ?? []);
      return copies.reduce((a, b) => (b.applied > a.applied ? b : a));
    };
    const { auth, ingest, metrics, rejections, clock } = node.front; // what a syslog listener on node 0 is given (cluster/serve.ts)
    return {
      admin: node.front.admin,
      auth,
      ingest,
      metrics,
      rejections,
      clock,
      entries: { append: node.sink.append.bind(node.sink) },
      alerts: node.front.alerts, // node 0's, on its mirror of the alerts bucket
      usage: { used: (ws: string, month: string) => copyOf(ws).sluice.usage.used(ws, month) },
    };
  };
  const sluice: TestSluice = {
    dir,
    app,
    call,
    admin: (method, path, body) => call(method, `/api/v1/admin${path}`, { body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
    workspace: async (plan) => (await ready).workspace(plan),
    async close() {
      await (await ready).close(); // the directory stays, as a single process's does: the test removes it
    },
  } as TestSluice;
  Object.defineProperty(sluice, "dbs", { get: missing("dbs") });
  Object.defineProperty(sluice, "svc", { get: svc });
  return sluice;
}

/** the directories of clusters on shared NATS servers: removing one drops its streams there too */
const clusterHomes = new Set<string>();

/** removeDir deletes a test data directory (and the streams of a cluster kept there, in the background). */
export const removeDir = (dir: string) => {
  rmSync(dir, { recursive: true, force: true });
  if (clusterHomes.delete(dir)) void import("./cluster.ts").then(({ dropShared }) => dropShared(dir)).catch(() => {});
};

/** entry makes a valid CreateLogRequest, with overrides. */
export function entry(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { action: "user.login", level: "info", clientTimestamp: "2026-11-22T10:00:00.000Z", ...over };
}
