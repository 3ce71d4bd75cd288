// link: this node's connection to NATS: JetStream, the buckets, whether NATS is reachable, and publishing a write.
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import { Kvm, type KV, type KvEntry } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { ApiError } from "../errors.ts";
import {
  ALERTS_BUCKET,
  CLUSTER_BUCKET,
  META_BUCKET,
  NODES_BUCKET,
  PEER_SECRET,
  natsServers,
  streamOf,
  subjectOf,
  type Assignment,
  type ClusterSettings,
} from "./names.ts";

/** how long a write may wait for JetStream's acknowledgement, retries with its message id included (a leader election takes 5–7 s) */
const PUBLISH_DEADLINE_MS = 12_000;

/** how long a read may wait for its partition's last sequence (a stream leader election takes a few seconds) */
export const LAST_SEQ_DEADLINE_MS = 8000;

const EMPTY = new Uint8Array(0);

/** unavailable is the answer to a write or read that NATS cannot take now (contract §13). */
export const unavailable = (what: string) =>
  new ApiError(
    503,
    "INTERNAL_LOG_SERVICE_ERROR",
    `${what}: the cluster's log (NATS) cannot be reached from this node; nothing was written, retry later`,
    undefined,
    {
      "retry-after": "2",
    },
  );

/**
 * unreachable is /readyz's answer while this node cannot reach NATS (contract §13): why, and what to check. The URLs
 * are shown without the user and password they may carry: /readyz needs no key.
 */
export const unreachable = (urls: string[], why = "the connection is down; the node reconnects by itself") => ({
  status: "unavailable",
  reason: "nats_unreachable",
  message: `this node cannot reach NATS (${why}); check that the servers of SLUICE_CLUSTER (${natsServers(urls).servers.join(",")}) are up and reachable from this host`,
});

/** Link is one NATS connection with the JetStream handles and buckets a node uses. */
export class Link {
  private connected = true;
  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly meta: KV,
    readonly cluster: KV,
    readonly nodes: KV,
    readonly alerts: KV,
  ) {
    void this.watchStatus();
  }

  /** open connects (retrying for ever once connected) and opens the buckets `sluice cluster init` made. */
  static async open(urls: string[], name: string): Promise<Link> {
    const nc = await connect({
      ...natsServers(urls),
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: 2000,
      maxPingOut: 2,
      timeout: 3000, // a server that takes the connection but never answers (stopped, hung) is left for the next one soon
      ignoreClusterUpdates: true,
    }); // only the servers configured: a node cut off from them is unready
    try {
      const jsm = await jetstreamManager(nc, { timeout: 5000 });
      const kvm = new Kvm(nc);
      const open = (bucket: string) =>
        kvm.open(bucket).catch((e) => {
          throw new Error(`bucket ${bucket} is missing (${e}): run \`sluice cluster init\` once against this NATS cluster`);
        });
      const meta = await open(META_BUCKET);
      // a cluster initialised before alerts had no alerts bucket: it is made as the meta bucket was
      const alerts = await jsm.streams
        .info(`KV_${ALERTS_BUCKET}`)
        .then(() => kvm.open(ALERTS_BUCKET))
        .catch(async () => kvm.create(ALERTS_BUCKET, { replicas: (await meta.status()).replicas, history: 1 }));
      return new Link(nc, jetstream(nc, { timeout: 5000 }), jsm, meta, await open(CLUSTER_BUCKET), await open(NODES_BUCKET), alerts);
    } catch (e) {
      await nc.close();
      throw e;
    }
  }

  /** reachable is false while the connection to NATS is down (reconnecting). */
  get reachable(): boolean {
    return this.connected && !this.nc.isClosed();
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === "disconnect" || s.type === "reconnecting" || s.type === "staleConnection" || s.type === "close") this.connected = false;
      else if (s.type === "reconnect") this.connected = true;
    }
  }

  /** settings reads what `sluice cluster init` stored. */
  async settings(): Promise<ClusterSettings> {
    const e = await this.cluster.get("config");
    if (e?.operation !== "PUT") throw new Error("the cluster has no settings: run `sluice cluster init` once against this NATS cluster");
    return e.json<ClusterSettings>();
  }

  /** assignment reads the copies of each partition (empty lists before the first `sluice cluster rebalance`). */
  async assignment(partitions: number): Promise<Assignment> {
    const e = await this.cluster.get("assign");
    const stored = e && e.operation === "PUT" ? e.json<Assignment>() : [];
    return Array.from({ length: partitions }, (_, p) => stored[p] ?? []);
  }

  /**
   * publish appends a write to its partition's stream and resolves with its sequence once JetStream has it on a
   * majority of replicas. Retries carry the same message id, so JetStream stores it once; a write it could not
   * place by the deadline is answered 503.
   */
  async publish(p: number, data: Uint8Array, msgId: string): Promise<number> {
    if (!this.reachable) throw unavailable("the write was refused");
    const until = Date.now() + PUBLISH_DEADLINE_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        const ack = await this.js.publish(subjectOf(p), data, { msgID: msgId, expect: { streamName: streamOf(p) }, timeout: 4000 });
        return ack.seq;
      } catch {
        if (Date.now() + 500 > until || this.nc.isClosed()) throw unavailable("the write was not acknowledged");
        await Bun.sleep(Math.min(1000, 100 * 2 ** attempt));
        if (!this.reachable && Date.now() + 4000 > until) throw unavailable("the write was not acknowledged");
      }
    }
  }

  /**
   * lastSeq is the sequence of the last write of a partition's stream, as its leader answers JetStream's stream info:
   * a read's barrier. The request is made by hand: the client library's wrapper of the answer cost twice its CPU.
   */
  async lastSeq(p: number): Promise<number> {
    const until = Date.now() + LAST_SEQ_DEADLINE_MS;
    for (;;) {
      if (!this.reachable) throw unavailable("the read cannot be served");
      try {
        const m = await this.nc.request(`$JS.API.STREAM.INFO.${streamOf(p)}`, EMPTY, { timeout: 5000 });
        const info = JSON.parse(m.string()) as { state?: { last_seq?: unknown }; error?: unknown };
        if (typeof info.state?.last_seq !== "number") throw new Error(`stream info of partition ${p}: ${JSON.stringify(info.error)}`);
        return info.state.last_seq;
      } catch {
        if (Date.now() > until) throw unavailable("the read cannot be served");
        await Bun.sleep(250); // the stream may be electing a leader
      }
    }
  }

  /**
   * beats reads the nodes bucket's current values by node id. Its keys come from the stream's subjects in one request:
   * the KV client's keys() waits for a consumer's pending count, which keys expiring meanwhile can leave unmet for ever.
   */
  async beats(): Promise<Map<string, KvEntry>> {
    const prefix = `$KV.${NODES_BUCKET}.`;
    const info = await this.jsm.streams.info(`KV_${NODES_BUCKET}`, { subjects_filter: `${prefix}>` });
    const ids = Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(prefix.length));
    const entries = await Promise.all(ids.map((id) => this.nodes.get(id)));
    const out = new Map<string, KvEntry>();
    ids.forEach((id, i) => {
      if (entries[i]?.operation === "PUT") out.set(id, entries[i]);
    });
    return out;
  }

  /**
   * peerSecret is the cluster's secret for reads nodes post to each other (peer.ts), which `sluice cluster init` makes;
   * none in a cluster made before it: its nodes forward every read through NATS until init runs again.
   */
  async peerSecret(): Promise<string | undefined> {
    const stored = await this.cluster.get(PEER_SECRET);
    return stored?.operation === "PUT" ? stored.string() : undefined;
  }

  /** close drains nothing: a node stopping has answered what it acknowledged. */
  close(): Promise<void> {
    return this.nc.close();
  }
}
