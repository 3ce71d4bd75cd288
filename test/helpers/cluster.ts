// A Sluice cluster in this process: 3 nats-server processes (nats.ts) and N cluster nodes on temporary data
// directories, each driven through handle(Request) as a server would; every node and server is stopped by close().
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
}

const MARK = "cluster-initialised";

/** startTestCluster starts NATS, initialises the cluster, starts the nodes, assigns the copies and waits until every node holds its own. */
export async function startTestCluster(opts: ClusterOptions = {}): Promise<TestCluster> {
  const dir = opts.home ?? mkdtempSync(join(tmpdir(), "sluice-cluster-"));
  const nats = await startNatsCluster(3, opts.home && join(opts.home, "nats"));
  const plans = new PlanTable(opts.plans);
  const nodes: ClusterNode[] = [];
  const closeAll = async () => {
    await Promise.allSettled(nodes.map((n) => n.stop()));
    await nats.stop();
    if (!opts.home) rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (!existsSync(join(dir, MARK))) {
      await initCluster(nats.urls, { partitions: opts.partitions ?? 4, replicas: 3, copies: opts.copies ?? 2 }, plans, ADMIN_TOKEN, false); // empty, as a single process's test starts
      writeFileSync(join(dir, MARK), "");
    } else await waitStreams(nats.urls); // restarted: every stream elects its leader again
    const base: Omit<NodeOptions, "nodeId" | "dataDir" | "roles" | "urls"> = {
      ...opts.app,
      plans,
      adminToken: ADMIN_TOKEN,
      ipRatePerMinute: opts.app?.ipRatePerMinute ?? -1,
      queryTimeoutMs: opts.queryTimeoutMs ?? opts.app?.queryTimeoutMs ?? 15_000,
      log: () => {},
      storageLog: () => {},
    };
    const addNode = async (roles: Role[] = ["front", "query", "storage"], urls = nats.urls) => {
      const nodeId = `n${nodes.length}`;
      const node = await ClusterNode.start({ ...base, urls, nodeId, roles, dataDir: join(dir, nodeId) });
      nodes.push(node);
      return node;
    };
    const count = opts.nodes ?? 3;
    for (let i = 0; i < count; i++) await addNode(i < (opts.fronts ?? count) ? undefined : ["query", "storage"]);
    const { assignment } = await rebalance(nats.urls);
    const until = Date.now() + 20_000;
    while (!nodes.every((n) => assignment.every((copies, p) => !copies.includes(n.options.nodeId) || p in n.held()))) {
      if (Date.now() > until) throw new Error("the nodes did not open their assigned copies within 20 s");
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
