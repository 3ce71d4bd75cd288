// node: a Sluice process in cluster mode (contract §13). Its front admits every request and writes to the partition
// streams (front.ts); its storage copies apply them (copy.ts); an admitted read is answered on a copy of the
// workspace's partition (reads.ts). Workspaces and keys come from the meta bucket.
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Subscription } from "@nats-io/transport-node";
import type { Role } from "../config.ts";
import { compose, type SluiceOptions } from "../compose.ts";
import { openDatabases } from "../storage/db.ts";
import { RetentionSweeper } from "../storage/retention.ts";
import { fetchBackup, serveBackups } from "./backup.ts";
import { Beats } from "./beats.ts";
import { PEER_READ_PATH } from "./peer.ts";
import { APPLIED, PartitionCopy } from "./copy.ts";
import type { Placement } from "../alerts/placement.ts";
import { Admission } from "./admit.ts";
import { AlertOwners } from "./alert-owners.ts";
import { SharedPlans, share } from "./plans.ts";
import { ClusterSink } from "./front.ts";
import { Link, unreachable } from "./link.ts";
import { MetaMirror } from "./meta-mirror.ts";
import { NODE_BEAT_MS, partitionOf, streamOf, type ClusterSettings } from "./names.ts";
import { ClusterReads } from "./reads.ts";
import { StreamTrimmer, TRIM_EVERY_MS } from "./trim.ts";

/** NodeOptions are a node's settings: the cluster's, and the app's options of a single process. */
export interface NodeOptions extends Omit<SluiceOptions, "dataDir" | "meta" | "writeTo"> {
  urls: string[];
  nodeId: string;
  roles: Role[];
  dataDir: string;
  /** how often each copy deletes entries past retention (default 600 s) */
  retentionSweepMs?: number;
  /** how often the streams this node trims are trimmed (trim.ts; default 60 s) */
  trimEveryMs?: number;
  /** how long a write waits for a copy's verdict before 503 (default 30 s) */
  verdictTimeoutMs?: number;
}

/** SLUICE_IP_RATE_PER_MIN's default (config.ts), for a node started without it */
const DEFAULT_IP_RATE = 6000;

/** how often a node with no pass under way passes over the stored assignment again, whatever its watch said */
const REASSERT_MS = 5_000;

/** how long an owner's evaluation waits for its copy to apply its partition's writes before it tries at a later tick */
const ALERT_CATCH_UP_MS = 5000;

/** a front evaluates and sends nothing: its node's partition copies do (placementOf) */
const NOWHERE: Placement = { active: () => false, owns: () => false, ready: async () => false, sendable: () => false };

/** the paths an API key opens: the workspace API and the shipper routes */
const WORKSPACE_PATHS = ["/api/v1/workspace/", "/otlp/", "/loki/", "/es/"];

/** ClusterNode is one running node: `handle` answers any request of the HTTP API. */
export class ClusterNode {
  private readonly copies = new Map<number, PartitionCopy>();
  /** the partitions whose copy here started from a peer's backup */
  readonly restored = new Set<number>();
  private readonly serving = new Map<number, Subscription[]>();
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  readonly reads: ClusterReads;
  private assigning: Promise<void> = Promise.resolve();
  /** this node's beat, and what it last read of every live node's (the copies each holds, its address) */
  private readonly beats: Beats;
  /** which partitions' alert rules this node evaluates (contract §16: one live node each) */
  private readonly owners: AlertOwners;
  /** what this node learns of a request's key or session before its front judges it */
  private readonly admission: Admission;
  private closed = false;

  private constructor(
    readonly options: NodeOptions,
    readonly link: Link,
    readonly settings: ClusterSettings,
    private readonly mirror: MetaMirror,
    /** the node's mirror of the alerts bucket, which the front and every copy here share */
    private readonly alertsMirror: MetaMirror,
    private readonly metaEnv: ReturnType<typeof openDatabases>,
    readonly front: ReturnType<typeof compose>,
    /** where the front's writes go: the partition streams */
    readonly sink: ClusterSink,
    private readonly log: (line: Record<string, unknown>) => void,
    peerSecret: string | undefined,
  ) {
    this.admission = new Admission(front, mirror, () => this.ready);
    this.beats = new Beats(link, options.nodeId, options.roles, () => this.held());
    this.owners = new AlertOwners(options.nodeId, settings.partitions, (p) => this.beats.holders(p));
    this.reads = new ClusterReads(link, {
      peerSecret,
      peerUrl: (p) => this.beats.peerUrl(p),
      partitions: settings.partitions,
      queryTimeoutMs: options.queryTimeoutMs ?? 30_000,
      nodeId: options.nodeId,
      copyOf: (p) => this.copies.get(p),
      tailOwner: (p) => this.tailOwner(p),
      knowsKey: (hash) => this.admission.knowsKey(hash),
      log,
    });
  }

  /**
   * start connects to NATS, mirrors the meta bucket, and begins serving, consuming and announcing itself. A start that
   * fails closes what it opened: serve.ts tries again while NATS cannot be reached (waiting.ts).
   */
  static async start(given: NodeOptions): Promise<ClusterNode> {
    const plans = new SharedPlans(given.plans);
    const options = { ...given, plans };
    const log = options.log ?? ((line) => console.error(JSON.stringify(line)));
    const link = await Link.open(options.urls, options.nodeId);
    const opened: (() => Promise<unknown>)[] = [() => link.close()]; // closed last opened first if the start fails
    try {
      const settings = await link.settings();
      const metaEnv = openDatabases(join(options.dataDir, "meta"), options.storageLog, options.mapBytes);
      opened.unshift(() => metaEnv.root.close());
      const live = async () => (await link.beats()).size;
      const mirror = new MetaMirror(metaEnv.meta, link.meta, log, { nc: link.nc, count: live });
      opened.unshift(() => mirror.stop());
      await mirror.start();
      // no wait for every node's mirror: an alert call catches up where it arrives (before), and an evaluation's commit
      // must not wait out a killed node's beat
      const alertsMirror = new MetaMirror(metaEnv.alerts, link.alerts, log, undefined, { generation: false, journal: true, echoed: true });
      opened.unshift(() => alertsMirror.stop());
      await alertsMirror.start();
      const sink = new ClusterSink(link, settings.partitions, options.verdictTimeoutMs); // not the read budget: a write is no read
      let node: ClusterNode | undefined;
      const ipRate = options.ipRatePerMinute ?? DEFAULT_IP_RATE;
      const front = compose({
        ...options,
        // this node's share of the per-IP figure, as of each plan's (contract §13: rate limits per front node)
        ipRatePerMinute: typeof ipRate === "number" ? () => share(ipRate, plans.liveFronts) : ipRate,
        dataDir: join(options.dataDir, "front"),
        meta: mirror.proxy(),
        alerts: alertsMirror.proxy(),
        alertPlacement: NOWHERE,
        previewsHere: false,
        writeTo: sink,
        // a rejection list is diagnostic: one that cannot reach the log is dropped, the request's answer stands
        forwardRejections: (batch) => sink.reject(batch).catch(() => {}),
        handoff: { elsewhere: (request, caller) => node?.reads.elsewhere(request, caller) },
      });
      opened.unshift(() => front.close());
      node = new ClusterNode(options, link, settings, mirror, alertsMirror, metaEnv, front, sink, log, await link.peerSecret());
      opened.splice(0, opened.length, () => node.stop()); // the node closes all it holds

      if (options.roles.includes("storage")) {
        await node.followAssignment();
        const trimmer = new StreamTrimmer(link, settings, options.nodeId, () => node.held());
        node.timers.push(
          setInterval(
            () => void trimmer.trim().catch((e) => log({ level: "warn", msg: "trimming the partition streams failed", error: String(e) })),
            options.trimEveryMs ?? TRIM_EVERY_MS,
          ),
        );
      }
      await node.beat();
      node.timers.push(setInterval(() => void node.beat().catch(() => {}), NODE_BEAT_MS));
      return node;
    } catch (e) {
      for (const close of opened) await close().catch(() => {});
      throw e;
    }
  }

  /** ready is what /readyz says: NATS reachable (a node cut off from it must not take writes). */
  get ready(): boolean {
    return this.link.reachable;
  }

  /** heldPartitions lists the partitions this node holds a copy of, with the sequence each has applied. */
  held(): Record<number, number> {
    return Object.fromEntries([...this.copies].map(([p, c]) => [p, c.applied]));
  }

  /** copyOf is this node's copy of partition p, if it holds one. */
  copyOf(p: number): PartitionCopy | undefined {
    return this.copies.get(p);
  }

  /** early counts the reads run before their barrier was known: kept, or run again because the copy was behind. */
  get early(): { kept: number; again: number } {
    return this.reads.early;
  }

  /**
   * handle answers one request through the front, which admits it (authentication, this node's rate limits,
   * permission) and writes through the partition streams; an admitted read is answered on a copy (readElsewhere).
   */
  async handle(request: Request): Promise<Response> {
    return (await this.before(request)) ?? this.front.app.handle(request);
  }

  /** before is what the node does ahead of its front (serve.ts runs it as the front's first hook): an answer, or undefined. */
  async before(request: Request): Promise<Response | undefined> {
    const url = new URL(request.url, "http://localhost");
    if (url.pathname === "/readyz" && !this.ready) return Response.json(unreachable(this.options.urls), { status: 503 });
    if (url.pathname.startsWith(PEER_READ_PATH) && request.method === "POST" && this.reads.fromPeer(request))
      return this.reads.answerPeer(request, Number(url.pathname.slice(PEER_READ_PATH.length)));
    // what another node's alert call or evaluation stored is seen here
    if (url.pathname.includes("/alerts")) await this.alertsMirror.catchUp().catch(() => false);
    if (url.pathname.startsWith("/api/v1/admin/"))
      await this.mirror.catchUp().catch(() => false); // what another node's admin call made is seen here
    else if (WORKSPACE_PATHS.some((prefix) => url.pathname.startsWith(prefix))) await this.admission.caller(request);
    return undefined;
  }

  /** endStreams ends every open tail of this node's clients, answered by its own copies or relayed from others. */
  endStreams(): void {
    for (const copy of this.copies.values()) copy.sluice.tails.closeAll();
    this.reads.endRelayed();
    this.front.tails.closeAll();
  }

  /** followAssignment opens and closes copies as the stored assignment says, now and whenever it changes. */
  private async followAssignment(): Promise<void> {
    // watched before the first read: an assignment stored between the two is not missed
    const watch = await this.link.cluster.watch({ key: "assign", include: "updates" as never });
    this.stopWatch = () => watch.stop();
    let pending = 0;
    const apply = (): Promise<void> => {
      // a pass waits for the one before, failed or not: one NATS timeout must not stop every later pass
      pending++;
      const pass = this.assigning
        .catch(() => {})
        .then(() => this.applyAssignment())
        .finally(() => pending--);
      this.assigning = pass;
      return pass;
    };
    const failed = (e: unknown) =>
      this.log({ level: "error", msg: `applying the assignment failed; trying again within ${REASSERT_MS / 1000} s`, error: String(e) });
    await apply();
    void (async () => {
      for await (const _ of watch) void apply().catch(failed);
    })();
    // a watch can miss an update (its consumer reset while a server was slow), a pass can fail or leave a copy waiting
    // for a peer's backup: an idle node passes over the stored assignment again
    this.timers.push(setInterval(() => void (pending === 0 && !this.closed && apply().catch(failed)), REASSERT_MS));
  }
  private stopWatch: (() => void) | undefined;

  /** applyAssignment opens and closes copies as the stored assignment says. */
  private async applyAssignment(): Promise<void> {
    if (this.closed) return;
    const assignment = await this.link.assignment(this.settings.partitions);
    const mine = new Set(assignment.flatMap((nodes, p) => (nodes.includes(this.options.nodeId) ? [p] : [])));
    for (const [p, copy] of this.copies) {
      if (mine.has(p)) continue;
      for (const sub of this.serving.get(p) ?? []) sub.unsubscribe();
      this.serving.delete(p);
      this.copies.delete(p);
      await copy.stop();
    }
    for (const p of mine) {
      if (this.copies.has(p)) continue;
      const dir = join(this.options.dataDir, `p${p}`);
      if (existsSync(dir) && (await this.trimmedPast(p))) rmSync(dir, { recursive: true, force: true });
      if (!existsSync(dir) && (await this.worthCopying(p, assignment[p]))) {
        if (await fetchBackup(this.link.nc, p, dir).catch(() => false)) this.restored.add(p);
        else if ((await this.link.jsm.streams.info(streamOf(p))).state.first_seq > 1) {
          // the stream was trimmed: without a backup the copy could never catch up, so it waits for a peer to answer
          this.log({ level: "warn", msg: `no peer sent a backup of a trimmed partition; asking again within ${REASSERT_MS / 1000} s`, partition: p });
          continue;
        }
      }
      if (this.closed) return;
      // a copy answers only reads a front admitted; the access log is the front's, one line a request
      const handoff = { admittedAs: (request: Request) => this.reads.admittedAs(request) };
      const alerting = { alerts: this.alertsMirror.proxy(), alertPlacement: this.placementOf(p) };
      const copyOptions = { ...this.options, ...alerting, accessLog: undefined, meta: this.mirror.proxy(), handoff };
      const copy = new PartitionCopy(p, this.options.dataDir, copyOptions, this.link, this.log);
      this.copies.set(p, copy);
      copy.start();
      copy.sluice.entries.startMerging();
      copy.sluice.evaluator.start(); // it evaluates while this node owns the partition's rules (placementOf)
      copy.sluice.deliverer.start();
      this.serving.set(p, [...this.reads.serve(copy), serveBackups(this.link.nc, copy, join(this.options.dataDir, "tmp"))]);
      const sweeper = new RetentionSweeper(copy.sluice.entries, copy.sluice.meta, (ws, nowMs) => this.options.plans.retentionFloor(ws.plan, nowMs));
      this.timers.push(setInterval(() => void sweeper.sweep().catch(() => {}), this.options.retentionSweepMs ?? 600_000));
      void this.beat().catch(() => {}); // the other nodes learn at once that this copy answers (tailOwner)
    }
  }

  /**
   * trimmedPast tells whether this node's copy of partition p, left from an earlier assignment, applied less than
   * its stream still holds (it was trimmed meanwhile): then the copy starts again from a peer's backup.
   */
  private async trimmedPast(p: number): Promise<boolean> {
    const first = (await this.link.jsm.streams.info(streamOf(p))).state.first_seq;
    if (first <= 1) return false; // never trimmed
    const dbs = openDatabases(join(this.options.dataDir, `p${p}`), this.options.storageLog, this.options.mapBytes);
    const applied = (dbs.root.get(APPLIED) as number | undefined) ?? 0;
    await dbs.root.close();
    return applied + 1 < first;
  }

  /** worthCopying tells whether partition p has writes and another node is assigned a copy of it: a backup to start from. */
  private async worthCopying(p: number, nodes: string[]): Promise<boolean> {
    if (!nodes.some((id) => id !== this.options.nodeId)) return false;
    return (await this.link.lastSeq(p).catch(() => 0)) > 0;
  }

  /** beat tells the cluster this node is alive, its roles, its address and how far each of its copies has applied. */
  private async beat(): Promise<void> {
    if (this.closed) return;
    try {
      (this.options.plans as SharedPlans).setFronts(await this.beats.send());
      this.owners.update();
    } catch (e) {
      this.owners.release(); // unheard, this node may already be replaced as an owner of alert rules
      throw e;
    }
  }

  /**
   * placementOf is what partition p's copy here evaluates and sends: its workspaces' rules and notices while this node
   * owns them, once the copy has applied every write acknowledged so far and the alerts mirror is in step with the
   * bucket; a notice leaves once the bucket holds it, so an owner taking over after a kill knows it was decided.
   */
  private placementOf(p: number): Placement {
    return {
      active: () => !this.closed && this.owners.owns(p),
      owns: (ws) => !this.closed && this.owners.owns(p) && partitionOf(ws, this.settings.partitions) === p,
      ready: async () => {
        const copy = this.copies.get(p);
        if (!copy || !(await this.alertsMirror.catchUp())) return false;
        return copy.reached(await this.link.lastSeq(p), ALERT_CATCH_UP_MS);
      },
      sendable: (n) => this.alertsMirror.sent(["outbox", n.id]),
    };
  }

  /** alertOwner is the node that evaluates partition p's alert rules, as this node's last beats read say. */
  alertOwner(p: number): string | undefined {
    return this.owners.pickOf(p);
  }

  /**
   * tailOwner is the node whose copy of partition p answers p's live tails, so that one copy counts a key's open
   * tails (contract §10): the first node assigned p whose last beat says it holds a copy of it (a node beats as soon
   * as it opens one). None: any copy answers.
   */
  private async tailOwner(p: number): Promise<string | undefined> {
    const [assignment] = await Promise.all([this.link.assignment(this.settings.partitions), this.beats.read()]);
    return assignment[p].find((id) => (id === this.options.nodeId ? this.copies.has(p) : this.beats.holds(id, p)));
  }

  /** advertise tells the other nodes the HTTP address they reach this node at (serve.ts, once it listens). */
  advertise(address: string): void {
    this.beats.address = address;
    void this.beat().catch(() => {});
  }

  /** liveFronts is how many front nodes this node last counted: its share of each plan's requests per minute. */
  get liveFronts(): number {
    return (this.options.plans as SharedPlans).liveFronts;
  }

  /** stop ends serving and consuming, closes every environment and the connection. */
  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.stopWatch?.();
    await Promise.race([this.assigning.catch(() => {}), Bun.sleep(3000)]); // a backup being fetched is left behind
    for (const subs of this.serving.values()) for (const sub of subs) sub.unsubscribe();
    await Promise.all([...this.copies.values()].map((c) => c.stop()));
    this.owners.release();
    await this.mirror.stop();
    await this.front.close();
    await this.alertsMirror.stop();
    await this.link.nodes.delete(this.options.nodeId).catch(() => {});
    await this.link.close();
    await this.metaEnv.root.close();
  }
}
