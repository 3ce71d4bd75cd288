// ops: the operator's cluster commands init (streams, buckets, settings, first workspace and admin token) and
// rebalance (rendezvous assignment); status is status.ts.
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
import { MetaStore } from "../storage/records/meta.ts";
import { Link } from "./link.ts";
import { MetaMirror } from "./meta-mirror.ts";
import { liveNodes } from "./status.ts";
import {
  ALERTS_BUCKET,
  CLUSTER_BUCKET,
  META_BUCKET,
  natsServers,
  NODES_BUCKET,
  NODE_TTL_MS,
  PEER_SECRET,
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
    made.push(retried(() => kvm.create(ALERTS_BUCKET, { replicas: settings.replicas, history: 1 })));
    made.push(retried(() => kvm.create(NODES_BUCKET, { replicas: settings.replicas, history: 1, ttl: NODE_TTL_MS })));
    await Promise.all(made);
    await clusterKv.put("config", JSON.stringify(settings));
    // one writer, a plain put: conditional appends do not serialize on R3 streams of nats-server 2.9
    if ((await clusterKv.get(PEER_SECRET))?.operation !== "PUT")
      await clusterKv.put(PEER_SECRET, Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url"));
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
