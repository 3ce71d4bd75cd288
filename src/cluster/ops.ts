// ops: the operator's cluster commands: init (streams, buckets, settings, first workspace and admin token), status
// (nodes, partitions, copies and their lag, the stream replicas' audit) and rebalance (rendezvous assignment).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiscardPolicy, jetstreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { AdminService } from "../admin/service.ts";
import { bootstrap, type FirstStart } from "../bootstrap.ts";
import type { PlanTable } from "../limits/plans.ts";
import { openDatabases } from "../storage/db.ts";
import { MetaStore } from "../storage/meta.ts";
import { Link } from "./link.ts";
import { MetaMirror } from "./meta-mirror.ts";
import {
  CLUSTER_BUCKET,
  META_BUCKET,
  natsServers,
  NODES_BUCKET,
  NODE_TTL_MS,
  rendezvous,
  streamOf,
  subjectOf,
  type Assignment,
  type ClusterSettings,
} from "./names.ts";

/**
 * retried runs fn again for up to 20 s while it fails: just after the servers start, JetStream may refuse a
 * replicated stream ("insufficient resources") until every server has joined its cluster.
 */
async function retried<T>(fn: () => Promise<T>): Promise<T> {
  const until = Date.now() + 20_000;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > until) throw e;
      await Bun.sleep(250);
    }
  }
}

/** withConnection runs fn on a fresh connection to NATS and closes it. */
async function withConnection<T>(urls: string[], fn: (nc: NatsConnection) => Promise<T>): Promise<T> {
  const nc = await connect({ ...natsServers(urls), name: "sluice-cluster-cli", timeout: 5000 });
  try {
    return await fn(nc);
  } finally {
    await nc.close();
  }
}

/**
 * initCluster makes the partition streams (R replicas, deduplicating retries by message id for 2 minutes) and the
 * buckets, stores the settings, and creates the admin token and a first workspace as a first start does; running
 * it again on an initialised cluster changes nothing and returns no secrets. Without `firstWorkspace` (tests that start
 * empty, as a single process's test harness does) only the admin token is made.
 */
export async function initCluster(
  urls: string[],
  settings: ClusterSettings,
  plans: PlanTable,
  adminToken: string | undefined,
  firstWorkspace = true,
): Promise<FirstStart> {
  await withConnection(urls, async (nc) => {
    const jsm = await jetstreamManager(nc, { timeout: 10_000 });
    const kvm = new Kvm(nc);
    const clusterKv = await retried(() => kvm.create(CLUSTER_BUCKET, { replicas: settings.replicas, history: 1 }));
    const stored = await clusterKv.get("config");
    if (stored?.operation === "PUT") {
      const was = stored.json<ClusterSettings>();
      if (was.partitions !== settings.partitions)
        throw new Error(`the cluster was initialised with ${was.partitions} partitions; a workspace's partition depends on it, so it cannot change`);
    }
    // made side by side: each replicated stream waits for its own leader election
    const made: Promise<unknown>[] = Array.from({ length: settings.partitions }, (_, p) => {
      const config = {
        name: streamOf(p),
        subjects: [subjectOf(p)],
        num_replicas: settings.replicas,
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        duplicate_window: 120_000_000_000, // ns: a front's retries with the same message id within 2 min are stored once
      };
      return retried(() =>
        jsm.streams.add(config).catch((e) => {
          if (!String(e).includes("already in use")) throw e;
        }),
      );
    });
    made.push(retried(() => kvm.create(META_BUCKET, { replicas: settings.replicas, history: 1 })));
    made.push(retried(() => kvm.create(NODES_BUCKET, { replicas: settings.replicas, history: 1, ttl: NODE_TTL_MS })));
    await Promise.all(made);
    await clusterKv.put("config", JSON.stringify(settings));
  });
  // the first workspace and the admin token, through the mirror as any node's writes go
  const link = await Link.open(urls, "sluice-cluster-init");
  const dir = mkdtempSync(join(tmpdir(), "sluice-init-"));
  const dbs = openDatabases(dir, () => {});
  try {
    const mirror = new MetaMirror(dbs.meta, link.meta);
    await mirror.start();
    const meta = new MetaStore(mirror.proxy());
    const made = await bootstrap(meta, new AdminService(meta, plans), adminToken, firstWorkspace);
    await mirror.stop();
    return made;
  } finally {
    await dbs.root.close();
    await link.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** NodeState is what a live node last said of itself. */
export interface NodeState {
  id: string;
  roles: string[];
  applied: Record<string, number>;
  at: number;
}

async function liveNodes(link: Link): Promise<NodeState[]> {
  const out: NodeState[] = [];
  for await (const id of await link.nodes.keys()) {
    const e = await link.nodes.get(id);
    if (e?.operation === "PUT") out.push({ id, ...e.json<Omit<NodeState, "id">>() });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** rebalance assigns each partition's copies to the live storage nodes by rendezvous hashing and stores it; nodes follow it. */
export async function rebalance(urls: string[]): Promise<{ nodes: string[]; assignment: Assignment; moved: number }> {
  const link = await Link.open(urls, "sluice-cluster-rebalance");
  try {
    const settings = await link.settings();
    const nodes = (await liveNodes(link)).filter((n) => n.roles.includes("storage")).map((n) => n.id);
    if (nodes.length === 0) throw new Error("no live storage node: start nodes with the storage role, then rebalance");
    const before = await link.assignment(settings.partitions);
    const assignment = rendezvous(nodes, settings.partitions, settings.copies);
    const moved = assignment.reduce((n, copies, p) => n + copies.filter((c) => !before[p].includes(c)).length, 0);
    await link.cluster.put("assign", JSON.stringify(assignment));
    return { nodes, assignment, moved };
  } finally {
    await link.close();
  }
}

/** PartitionStatus is one partition: its stream's last sequence and replicas, and its copies with what each applied. */
export interface PartitionStatus {
  partition: number;
  last: number;
  messages: number;
  leader: string | undefined;
  replicas: { server: string; current: boolean; lag: number }[];
  copies: { node: string; applied: number | null; caughtUp: boolean }[];
  problems: string[];
}

/** status reads every partition and node; `ok` is false when a partition has no caught-up copy, or its replicas or copies disagree. */
export async function clusterStatus(urls: string[]): Promise<{ ok: boolean; settings: ClusterSettings; nodes: NodeState[]; partitions: PartitionStatus[] }> {
  const link = await Link.open(urls, "sluice-cluster-status");
  try {
    const settings = await link.settings();
    const nodes = await liveNodes(link);
    const assignment = await link.assignment(settings.partitions);
    const partitions: PartitionStatus[] = [];
    for (let p = 0; p < settings.partitions; p++) {
      const info = await link.jsm.streams.info(streamOf(p));
      const last = info.state.last_seq;
      const replicas = (info.cluster?.replicas ?? []).map((r) => ({ server: r.name, current: r.current, lag: r.lag ?? 0 }));
      const copies = assignment[p].map((id) => {
        const applied = nodes.find((n) => n.id === id)?.applied[p] ?? null;
        return { node: id, applied, caughtUp: applied === last };
      });
      const problems: string[] = [];
      if (!copies.some((c) => c.caughtUp)) problems.push("no copy has applied the whole stream");
      for (const r of replicas) if (!r.current || r.lag > 0) problems.push(`stream replica on ${r.server} is behind (lag ${r.lag})`);
      if (info.state.messages !== (last === 0 ? 0 : last - info.state.first_seq + 1))
        problems.push(`the stream has a gap: ${info.state.messages} messages from ${info.state.first_seq} to ${last}`);
      if (replicas.length + 1 < settings.replicas) problems.push(`the stream has ${replicas.length + 1} of ${settings.replicas} replicas`);
      partitions.push({ partition: p, last, messages: info.state.messages, leader: info.cluster?.leader, replicas, copies, problems });
    }
    return { ok: partitions.every((p) => p.problems.length === 0), settings, nodes, partitions };
  } finally {
    await link.close();
  }
}
