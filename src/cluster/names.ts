// names: what the cluster's streams, subjects and buckets are called in NATS, and which partition a workspace is on.

/** the bucket of workspaces, keys and the admin token hash (meta-mirror.ts) */
export const META_BUCKET = "sluice_meta";
/** the bucket of alert channels, rules, silences, states, history and the outbox (contract §16), mirrored as the meta bucket is */
export const ALERTS_BUCKET = "sluice_alerts";
/**
 * the bucket of the cluster's settings ("config"), its assignment of partition copies to nodes ("assign") and the
 * secret nodes prove themselves to each other with (PEER_SECRET)
 */
export const CLUSTER_BUCKET = "sluice_cluster";
/** the cluster bucket's key of the peer secret (cluster/peer.ts) */
export const PEER_SECRET = "peer-secret";
/** the bucket where each live node says who it is and what it holds; an entry expires unless refreshed */
export const NODES_BUCKET = "sluice_nodes";
/** how long a node's entry lives without a refresh, and how often nodes refresh it */
export const NODE_TTL_MS = 15_000;
export const NODE_BEAT_MS = 3_000;

/** the stream, and its one subject, that orders a partition's writes */
export const streamOf = (p: number) => `SLUICE_P${p}`;
export const subjectOf = (p: number) => `sluice.p.${p}`;
/** where copies announce the quota verdicts of the writes they apply, and take reads forwarded to them */
export const verdictSubject = (p: number) => `sluice.v.${p}`;
/** every partition's verdicts, as a front listens to them */
export const VERDICTS = "sluice.v.*";
export const readSubject = (p: number) => `sluice.r.${p}`;
/** where copies take live tails relayed to them (relay.ts): any copy (queue group), or the named node's */
export const tailSubject = (p: number, node?: string) => (node === undefined ? `sluice.t.${p}` : `sluice.t.${p}.${node}`);

/** ClusterSettings are what `sluice cluster init` fixes, stored under "config" in CLUSTER_BUCKET. */
export interface ClusterSettings {
  partitions: number;
  /** JetStream replicas of each stream and bucket */
  replicas: number;
  /** LMDB copies of each partition, on distinct storage nodes */
  copies: number;
}

/** Assignment lists the nodes holding a copy of each partition (index: partition). */
export type Assignment = string[][];

/** partitionOf is the partition of a workspace: FNV-1a of its id, modulo the partitions. */
export function partitionOf(workspaceId: string, partitions: number): number {
  return fnv1a(workspaceId) % partitions;
}

/** fnv1a is a 32-bit FNV-1a hash of a string's UTF-16 units. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h >>> 0;
}

/** rendezvous assigns each partition the `copies` nodes with the highest hash of (partition, node): few moves when nodes come or go. */
export function rendezvous(nodes: string[], partitions: number, copies: number): Assignment {
  return Array.from({ length: partitions }, (_, p) =>
    [...nodes]
      .sort((a, b) => fnv1a(`${p}/${b}`) - fnv1a(`${p}/${a}`) || (a < b ? -1 : 1))
      .slice(0, Math.min(copies, nodes.length))
      .sort(),
  );
}

/**
 * natsServers reads the NATS URLs of SLUICE_CLUSTER as the client's options: the servers, and the user and password
 * that a URL may carry (nats://user:password@host:port), which the client would otherwise not send.
 */
export function natsServers(urls: string[]): { servers: string[]; user?: string; pass?: string } {
  let user: string | undefined;
  let pass: string | undefined;
  const servers = urls.map((u) => {
    const m = /^([a-z]+:\/\/)([^:@/]*)(?::([^@/]*))?@(.*)$/i.exec(u);
    if (!m) return u;
    user ??= decodeURIComponent(m[2]);
    pass ??= m[3] === undefined ? undefined : decodeURIComponent(m[3]);
    return m[1] + m[4];
  });
  return { servers, ...(user === undefined ? {} : { user }), ...(pass === undefined ? {} : { pass }) };
}
