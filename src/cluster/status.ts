// status: `sluice cluster status`: the live nodes, and per partition its stream as every NATS server holds it
// (audit.ts), its copies with the sequence each applied and its lag, and the problems that make the status red.
import { Link } from "./link.ts";
import { auditStreams, readServer, type ExpectedStream, type ReplicaFigures } from "./audit.ts";
import { CLUSTER_BUCKET, META_BUCKET, NODE_BEAT_MS, NODES_BUCKET, streamOf, type ClusterSettings } from "./names.ts";

/** NodeState is what a live node last said of itself. */
export interface NodeState {
  id: string;
  roles: string[];
  applied: Record<string, number>;
  at: number;
}

/** liveNodes lists the nodes whose heartbeat has not expired, by id. */
export async function liveNodes(link: Link): Promise<NodeState[]> {
  const out = [...(await link.beats())].map(([id, e]) => ({ id, ...e.json<Omit<NodeState, "id">>() }));
  return out.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** CopyStatus is one assigned copy: the sequence it applied (null: its node is not live), its lag behind the stream. */
export interface CopyStatus {
  node: string;
  applied: number | null;
  lag: number | null;
  caughtUp: boolean;
}

/** PartitionStatus is one partition: its stream as its leader and every server see it, and its copies. */
export interface PartitionStatus {
  partition: number;
  stream: string;
  leader: string | null;
  first: number | null;
  last: number | null;
  messages: number | null;
  servers: ReplicaFigures[];
  copies: CopyStatus[];
  problems: string[];
}

/** ClusterStatus is the whole answer; `ok` is false when any problem is listed. */
export interface ClusterStatus {
  ok: boolean;
  settings: ClusterSettings;
  nodes: NodeState[];
  partitions: PartitionStatus[];
  /** the meta, cluster and nodes buckets' streams, audited as the partitions' are */
  buckets: { stream: string; servers: ReplicaFigures[]; problems: string[] }[];
  /** every problem, one line each, naming the partition or bucket, and the server or node */
  problems: string[];
}

export interface StatusOptions {
  /** each NATS server's monitoring URL (its `http:` setting) */
  monitors: string[];
  /** how long one server may take to answer (default 3 s) */
  serverTimeoutMs?: number;
  /** how long status reads again while something disagrees, before it reports it (default a heartbeat and a second) */
  settleMs?: number;
}

const BUCKET_STREAMS = [CLUSTER_BUCKET, META_BUCKET, NODES_BUCKET].map((b) => `KV_${b}`);

interface Leader {
  stream: string;
  leader: string | null;
  servers: string[];
  first: number | null;
  last: number | null;
  messages: number | null;
  error?: string;
}

/** leaderView reads a stream's state and peers from its leader (the JetStream API). */
async function leaderView(link: Link, stream: string): Promise<Leader> {
  try {
    const info = await link.jsm.streams.info(stream);
    const leader = info.cluster?.leader ?? null;
    const servers = [...(leader ? [leader] : []), ...(info.cluster?.replicas ?? []).map((r) => r.name)];
    return { stream, leader, servers, first: info.state.first_seq, last: info.state.last_seq, messages: info.state.messages };
  } catch (e) {
    return { stream, leader: null, servers: [], first: null, last: null, messages: null, error: String(e) };
  }
}

/**
 * clusterStatus reads every partition and node once, and again (for at most `settleMs`) while anything is wrong: a
 * replica or a copy a moment behind a write is not a problem, one still behind after that is.
 */
export async function clusterStatus(urls: string[], options: StatusOptions): Promise<ClusterStatus> {
  const until = Date.now() + (options.settleMs ?? NODE_BEAT_MS + 1000);
  const link = await untilRead(() => Link.open(urls, "sluice-cluster-status"), until);
  try {
    for (;;) {
      const status = await untilRead(() => readStatus(link, options), until);
      if (status.ok || Date.now() > until) return status;
      await Bun.sleep(300);
    }
  } finally {
    await link.close();
  }
}

/** untilRead runs `read` again while it fails (JetStream electing a leader), for a few seconds past `until`. */
async function untilRead<T>(read: () => Promise<T>, until: number): Promise<T> {
  for (;;) {
    try {
      return await read();
    } catch (e) {
      if (Date.now() > until + 10_000) throw new Error(`the cluster's state could not be read from NATS (${e}); check that a majority of the NATS servers run`);
      await Bun.sleep(500);
    }
  }
}

/** orProblem is what `read` gives, or `fallback` with a problem line saying what could not be read (a stream electing its leader). */
async function orProblem<T>(read: Promise<T>, fallback: T, what: string, problems: string[]): Promise<T> {
  try {
    return await read;
  } catch (e) {
    problems.push(`${what} could not be read: ${e}`);
    return fallback;
  }
}

async function readStatus(link: Link, options: StatusOptions): Promise<ClusterStatus> {
  const settings = await link.settings();
  const unread: string[] = [];
  const [nodes, assignment, leaders, views] = await Promise.all([
    orProblem(liveNodes(link), [], "the live nodes (bucket sluice_nodes)", unread),
    orProblem(
      link.assignment(settings.partitions),
      Array.from({ length: settings.partitions }, () => []),
      "the assignment (bucket sluice_cluster)",
      unread,
    ),
    Promise.all([...Array.from({ length: settings.partitions }, (_, p) => streamOf(p)), ...BUCKET_STREAMS].map((s) => leaderView(link, s))),
    Promise.all(options.monitors.map((url) => readServer(url, options.serverTimeoutMs ?? 3000))),
  ]);
  const expected: ExpectedStream[] = leaders.map((l, i) => ({ stream: l.stream, servers: l.servers, gapless: i < settings.partitions }));
  const audits = auditStreams(expected, views);
  const streamProblems = (l: Leader, i: number) => {
    const problems = options.monitors.length > 0 ? [...audits[i].problems] : [];
    if (l.error) problems.push(`stream ${l.stream}: its leader did not answer (${l.error})`);
    else if (!l.leader) problems.push(`stream ${l.stream}: no leader`);
    if (!l.error && l.servers.length < settings.replicas) problems.push(`stream ${l.stream}: ${l.servers.length} of ${settings.replicas} replicas`);
    return problems;
  };
  const partitions: PartitionStatus[] = leaders.slice(0, settings.partitions).map((l, p) => {
    const problems = streamProblems(l, p);
    const copies = assignment[p].map((id): CopyStatus => {
      const node = nodes.find((n) => n.id === id);
      const applied = node?.applied[p] ?? null;
      return { node: id, applied, lag: applied === null || l.last === null ? null : l.last - applied, caughtUp: applied !== null && applied === l.last };
    });
    if (assignment[p].length === 0) problems.push(`stream ${l.stream}: no copy is assigned; run \`sluice cluster rebalance\``);
    else if (!copies.some((c) => c.caughtUp)) problems.push(`stream ${l.stream}: no copy has applied the whole stream (last ${l.last})`);
    for (const c of copies) {
      if (c.applied === null) problems.push(`stream ${l.stream}: the copy on node ${c.node} is unknown (the node is not live or holds no copy)`);
      else if (l.last !== null && c.applied > l.last)
        problems.push(`stream ${l.stream}: the copy on node ${c.node} applied ${c.applied}, past the stream's last ${l.last} (the stream lost writes)`);
    }
    return {
      partition: p,
      stream: l.stream,
      leader: l.leader,
      first: l.first,
      last: l.last,
      messages: l.messages,
      servers: audits[p].servers,
      copies,
      problems,
    };
  });
  const buckets = leaders.slice(settings.partitions).map((l, k) => ({
    stream: l.stream,
    servers: audits[settings.partitions + k].servers,
    problems: streamProblems(l, settings.partitions + k),
  }));
  const problems = [
    ...unread,
    ...partitions.flatMap((p) => p.problems.map((line) => `partition ${p.partition}: ${line}`)),
    ...buckets.flatMap((b) => b.problems),
  ];
  if (options.monitors.length === 0)
    problems.push("the stream replicas were not audited: give each NATS server's monitoring URL (its `http:` setting) with --monitor or SLUICE_NATS_MONITOR");
  return { ok: problems.length === 0, settings, nodes, partitions, buckets, problems };
}
