// A Sluice cluster in this process: 3 nats-server processes (nats.ts) and N cluster nodes on temporary data
// directories, each driven through handle(Request) as a server would; every node and server is stopped by close().
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { natsServers } from "../../src/cluster/names.ts";
import { ClusterNode, type NodeOptions } from "../../src/cluster/node.ts";
import { initCluster, rebalance } from "../../src/cluster/ops.ts";
import type { Role } from "../../src/config.ts";
import { PlanTable, type Plan } from "../../src/limits/plans.ts";
import type { Environment, KeyType } from "../../src/schema.ts";
import { startNatsCluster, waitStreams, type NatsCluster } from "./nats.ts";
import { ADMIN_TOKEN, type CallOptions, type TestOptions } from "./sluice.ts";

export interface TestCluster {
  nats: NatsCluster;
  nodes: ClusterNode[];
  /** each node's HTTP address (node i's at i), where its peers post reads for its copies */
  addresses: string[];
  /** call sends a request to node i, as TestSluice.call does */
  call(i: number, method: string, path: string, opts?: CallOptions): Promise<Response>;
  admin(i: number, method: string, path: string, body?: unknown): Promise<Response>;
  /** workspace makes a workspace through node 0's admin API and returns a key maker */
  workspace(plan?: string): Promise<{ id: string; key(env: Environment, type: KeyType, extra?: Record<string, unknown>): Promise<string> }>;
  /** addNode starts one more node, on the given NATS URLs (default all) */
  addNode(roles?: Role[], urls?: string[]): Promise<ClusterNode>;
  close(): Promise<void>;
}

export interface ClusterOptions {
  nodes?: number;
  partitions?: number;
  copies?: number;
  plans?: Plan[];
  queryTimeoutMs?: number;
  /** the app's settings of a single process, as startTestSluice takes them (clock, segment size, tails, …) */
  app?: Omit<TestOptions, "plans">;
  /**
   * a directory that holds the whole cluster (NATS stores and node data) and that close() leaves: a cluster started on a
   * home that held one is that cluster restarted (every NATS server and node stopped, then started again).
   */
  home?: string;
  /** how many of the nodes (the first) have the front role, the others only query and storage (default: all) */
  fronts?: number;
  /**
   * run on NATS servers this test process shares, in a JetStream account of the cluster's own (seconds less a cluster);
   * the servers stay up while the process runs, so a restart on `home` restarts the nodes only
   */
  shared?: boolean;
}

/** JetStream accounts of a shared set of NATS servers; past them, another set starts */
const ACCOUNTS = 48;
const pools: { nats: NatsCluster; taken: number }[] = [];
const accountOfHome = new Map<string, { nats: NatsCluster; urls: string[] }>();
let pooling: Promise<unknown> = Promise.resolve();

/**
 * dropShared deletes the streams and buckets of the cluster kept in `home` on the shared NATS servers, once its test
 * removed the directory: the servers then keep no idle replicated streams of finished tests.
 */
export async function dropShared(home: string): Promise<void> {
  const account = accountOfHome.get(home);
  if (!account) return;
  accountOfHome.delete(home);
  const nc = await connect({ ...natsServers(account.urls), timeout: 5000 });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 5000 });
    const names: string[] = [];
    for await (const name of jsm.streams.names()) names.push(name);
    await Promise.allSettled(names.map((name) => jsm.streams.delete(name)));
  } finally {
    await nc.close();
  }
}

/** sharedAccount gives a cluster an unused account of the shared NATS servers (the same one again for a home). */
function sharedAccount(home: string | undefined): Promise<{ nats: NatsCluster; urls: string[] }> {
  const known = home === undefined ? undefined : accountOfHome.get(home);
  if (known) return Promise.resolve(known);
  const next = pooling.then(async () => {
    let pool = pools.find((p) => p.taken < ACCOUNTS);
    if (!pool) {
      pool = { nats: await startNatsCluster(3, undefined, ACCOUNTS), taken: 0 };
      pools.push(pool);
      const nats = pool.nats;
      process.once("exit", () => nats.stopNow());
    }
    const account = { nats: pool.nats, urls: pool.nats.accountUrls(pool.taken++) };
    if (home !== undefined) accountOfHome.set(home, account);
    return account;
  });
  pooling = next.catch(() => {});
  return next;
}

const MARK = "cluster-initialised";

/** startTestCluster starts NATS, initialises the cluster, starts the nodes, assigns the copies and waits until every node holds its own. */
export async function startTestCluster(opts: ClusterOptions = {}): Promise<TestCluster> {
  const dir = opts.home ?? mkdtempSync(join(tmpdir(), "sluice-cluster-"));
  const shared = opts.shared ? await sharedAccount(opts.home) : undefined;
  const nats = shared?.nats ?? (await startNatsCluster(3, opts.home && join(opts.home, "nats")));
  const urls = shared?.urls ?? nats.urls;
  const plans = new PlanTable(opts.plans);
  const nodes: ClusterNode[] = [];
  const listeners: ReturnType<typeof Bun.serve>[] = [];
  const closeAll = async () => {
    await Promise.allSettled(nodes.map((n) => n.stop()));
    for (const l of listeners) l.stop(true);
    if (!shared) await nats.stop();
    if (!opts.home) rmSync(dir, { recursive: true, force: true });
  };
  const recent: string[] = [];
  const why = () => (recent.length ? `; the nodes' last log lines:\n${recent.join("\n")}` : "; the nodes logged nothing");
  try {
    if (!existsSync(join(dir, MARK))) {
      await initCluster(urls, { partitions: opts.partitions ?? 4, replicas: 3, copies: opts.copies ?? 2 }, plans, ADMIN_TOKEN, false); // empty, as a single process's test starts
      writeFileSync(join(dir, MARK), "");
    }
    // a barrier, not a wait: each new stream (and, after a restart of the servers, each stream) has elected its leader
    await waitStreams(urls);
    const base: Omit<NodeOptions, "nodeId" | "dataDir" | "roles" | "urls"> = {
      ...opts.app,
      plans,
      adminToken: ADMIN_TOKEN,
      mapBytes: 2 ** 34, // a test process holds many clusters of a dozen environments each: 1 TiB each would use up its address space
      ipRatePerMinute: opts.app?.ipRatePerMinute ?? -1,
      queryTimeoutMs: opts.queryTimeoutMs ?? opts.app?.queryTimeoutMs ?? 15_000,
      verdictTimeoutMs: 15_000, // a write with no copy to apply it fails within a test's time, whatever its read budget
      log: (line) => void (recent.push(JSON.stringify(line)) > 20 && recent.shift()), // quiet, but a failed start says why
      storageLog: () => {},
    };
    const addNode = async (roles: Role[] = ["front", "query", "storage"], nodeUrls = urls) => {
      const nodeId = `n${nodes.length}`;
      const node = await ClusterNode.start({ ...base, urls: nodeUrls, nodeId, roles, dataDir: join(dir, nodeId) });
      nodes.push(node);
      // its peers post reads for its copies to it over HTTP, as to a node `sluice serve` runs (peer.ts)
      const listener = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (r) => node.handle(r) });
      listeners.push(listener);
      node.advertise(`http://127.0.0.1:${listener.port}`);
      return node;
    };
    const count = opts.nodes ?? 3;
    for (let i = 0; i < count; i++) await addNode(i < (opts.fronts ?? count) ? undefined : ["query", "storage"]);
    // a barrier: rebalance once the nodes bucket lists every node's first beat
    const listed = Date.now() + 20_000;
    let assignment = (await rebalance(urls).catch(() => undefined))?.assignment;
    while (!assignment || assignment.flat().length < (opts.partitions ?? 4) * Math.min(opts.copies ?? 2, nodes.length)) {
      if (Date.now() > listed) throw new Error(`rebalance did not see the nodes' beats within 20 s${why()}`);
      await Bun.sleep(50);
      assignment = (await rebalance(urls).catch(() => undefined))?.assignment;
    }
    const until = Date.now() + 30_000; // a busy machine's first JetStream requests (a consumer each copy) can take seconds
    while (!nodes.every((n) => assignment.every((copies, p) => !copies.includes(n.options.nodeId) || p in n.held()))) {
      if (Date.now() > until) throw new Error(`the nodes did not open their assigned copies within 30 s${why()}`);
      await Bun.sleep(50);
    }
    const call: TestCluster["call"] = (i, method, path, o = {}) => {
      const headers: Record<string, string> = { ...o.headers };
      if (o.key !== undefined) headers["x-api-key"] = o.key;
      let body: string | Uint8Array | undefined = o.raw;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
      }
      return nodes[i].handle(new Request(`http://localhost${path}`, { method, headers, body }));
    };
    const admin: TestCluster["admin"] = (i, method, path, body) =>
      call(i, method, `/api/v1/admin${path}`, { body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    return {
      nats,
      nodes,
      get addresses() {
        return listeners.map((l) => `http://127.0.0.1:${l.port}`);
      },
      call,
      admin,
      async workspace(plan = "unlimited") {
        const r = await admin(0, "POST", "/workspaces", { organization: "Acme", name: `ws-${crypto.randomUUID().slice(0, 8)}`, plan });
        if (r.status !== 201) throw new Error(`creating a workspace answered ${r.status}: ${await r.text()}`);
        const ws = (await r.json()) as { id: string };
        return {
          id: ws.id,
          key: async (environment, type, extra = {}) => {
            const k = await admin(0, "POST", `/workspaces/${ws.id}/keys`, { name: "k", environment, type, ...extra });
            if (k.status !== 201) throw new Error(`creating a key answered ${k.status}: ${await k.text()}`);
            return ((await k.json()) as { key: string }).key;
          },
        };
      },
      addNode,
      close: closeAll,
    };
  } catch (e) {
    await closeAll();
    throw e;
  }
}
