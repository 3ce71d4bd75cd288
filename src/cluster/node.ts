// node: a Sluice process in cluster mode (contract §13). Its front writes to the partition streams (front.ts), its
// storage copies apply them (copy.ts), and a read is run, after its barrier, on a copy of the workspace's partition:
// this node's own, or another node's through a NATS request. Workspaces and keys come from the meta bucket.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Subscription } from "@nats-io/transport-node";
import type { Caller } from "../auth/authenticate.ts";
import type { Role } from "../config.ts";
import { compose, type SluiceOptions } from "../compose.ts";
import { ApiError } from "../errors.ts";
import { openDatabases } from "../storage/db.ts";
import { RetentionSweeper } from "../storage/retention.ts";
import { fetchBackup, serveBackups } from "./backup.ts";
import { PartitionCopy } from "./copy.ts";
import { SharedPlans, share } from "./plans.ts";
import { ClusterSink } from "./front.ts";
import { Link } from "./link.ts";
import { pack, unpack } from "./message.ts";
import { MetaMirror } from "./meta-mirror.ts";
import { NODE_BEAT_MS, partitionOf, readSubject, tailSubject, type ClusterSettings } from "./names.ts";
import { askStream, serveStream, type RelayedRequest } from "./relay.ts";

/** NodeOptions are a node's settings: the cluster's, and the app's options of a single process. */
export interface NodeOptions extends Omit<SluiceOptions, "dataDir" | "meta" | "writeTo"> {
  urls: string[];
  nodeId: string;
  roles: Role[];
  dataDir: string;
  /** how often each copy deletes entries past retention (default 600 s) */
  retentionSweepMs?: number;
}

/** SLUICE_IP_RATE_PER_MIN's default (config.ts), for a node started without it */
const DEFAULT_IP_RATE = 6000;

interface ForwardedReply {
  status: number;
  headers: [string, string][];
  body: Uint8Array;
}

/** the paths an API key opens: the workspace API and the shipper routes */
const WORKSPACE_PATHS = ["/api/v1/workspace/", "/otlp/", "/loki/", "/es/"];
/** reads the front answers itself: the rejections its shippers met are kept where they were met */
const FRONT_READS = new Set(["/api/v1/workspace/ingest/rejections"]);

/** ClusterNode is one running node: `handle` answers any request of the HTTP API. */
export class ClusterNode {
  private readonly copies = new Map<number, PartitionCopy>();
  /** the partitions whose copy here started from a peer's backup */
  readonly restored = new Set<number>();
  private readonly serving = new Map<number, Subscription[]>();
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  /** reads this node's front (or another node's) admitted, by the hash of their key: a copy does not admit them again */
  private readonly admitted = new WeakMap<Request, string>();
  /** how to end each open tail relayed from another node's copy */
  private readonly relayed = new Set<() => void>();
  private assigning: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    readonly options: NodeOptions,
    readonly link: Link,
    readonly settings: ClusterSettings,
    private readonly mirror: MetaMirror,
    private readonly metaEnv: ReturnType<typeof openDatabases>,
    readonly front: ReturnType<typeof compose>,
    /** where the front's writes go: the partition streams */
    readonly sink: ClusterSink,
    private readonly log: (line: Record<string, unknown>) => void,
  ) {}

  /** start connects to NATS, mirrors the meta bucket, and begins serving, consuming and announcing itself. */
  static async start(given: NodeOptions): Promise<ClusterNode> {
    const plans = new SharedPlans(given.plans);
    const options = { ...given, plans };
    const log = options.log ?? ((line) => console.error(JSON.stringify(line)));
    const link = await Link.open(options.urls, options.nodeId);
    const settings = await link.settings();
    const metaEnv = openDatabases(join(options.dataDir, "meta"), options.storageLog, options.mapBytes);
    const live = async () => {
      let n = 0;
      for await (const _ of await link.nodes.keys()) n++;
      return n;
    };
    const mirror = new MetaMirror(metaEnv.meta, link.meta, log, { nc: link.nc, count: live });
    await mirror.start();
    const sink = new ClusterSink(link, settings.partitions, options.queryTimeoutMs ?? 30_000);
    let node: ClusterNode | undefined;
    const ipRate = options.ipRatePerMinute ?? DEFAULT_IP_RATE;
    const front = compose({
      ...options,
      // this node's share of the per-IP figure, as of each plan's (contract §13: rate limits per front node)
      ipRatePerMinute: typeof ipRate === "number" ? () => share(ipRate, plans.liveFronts) : ipRate,
      dataDir: join(options.dataDir, "front"),
      meta: mirror.proxy(),
      writeTo: sink,
      handoff: { elsewhere: (request, caller) => node?.readElsewhere(request, caller) },
    });
    node = new ClusterNode(options, link, settings, mirror, metaEnv, front, sink, log);
    if (options.roles.includes("storage")) await node.followAssignment();
    await node.beat();
    node.timers.push(setInterval(() => void node.beat().catch(() => {}), NODE_BEAT_MS));
    return node;
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
    if (url.pathname === "/readyz" && !this.ready) return Response.json({ status: "unavailable" }, { status: 503 });
    if (url.pathname.startsWith("/api/v1/admin/"))
      await this.mirror.catchUp().catch(() => false); // what another node's admin call made is seen here
    else if (WORKSPACE_PATHS.some((prefix) => url.pathname.startsWith(prefix))) await this.caller(request.headers);
    return undefined;
  }

  /** readElsewhere answers a read the front admitted on a copy of the caller's partition, once it has applied the read's barrier. */
  private readElsewhere(request: Request, caller: Caller): Promise<Response> | undefined {
    if (FRONT_READS.has(new URL(request.url, "http://localhost").pathname)) return undefined;
    return this.readOnPartition(request, caller);
  }

  private async readOnPartition(request: Request, caller: Caller): Promise<Response> {
    const p = partitionOf(caller.workspace.id, this.settings.partitions);
    const barrier = await this.link.lastSeq(p);
    const local = this.copies.get(p);
    if (!local) return this.forward(p, request, barrier, caller.key.hash);
    this.admitted.set(request, caller.key.hash);
    return this.readOn(local, request, barrier);
  }

  /**
   * caller makes sure this node knows the request's key, if it presents one: a key this node does not know yet may
   * have been made on another node a moment ago, so the meta mirror catches up with the bucket first (bounded).
   */
  private async caller(headers: Headers): Promise<void> {
    try {
      this.front.auth.authenticate(headers);
      return;
    } catch (e) {
      if (!(e instanceof ApiError) || e.code !== "AUTH_INVALID_API_KEY" || !this.ready) return;
    }
    await this.mirror.catchUp().catch(() => false);
  }

  /** knowsKey is caller for a key known by its hash (a read another node admitted). */
  private async knowsKey(hash: string): Promise<void> {
    try {
      this.front.auth.authenticateHash(hash);
    } catch {
      if (this.ready) await this.mirror.catchUp().catch(() => false);
    }
  }

  private async readOn(copy: PartitionCopy, request: Request, barrier: number): Promise<Response> {
    if (!(await copy.reached(barrier, this.options.queryTimeoutMs ?? 30_000))) throw notCaughtUp(copy.partition);
    return copy.sluice.app.handle(request);
  }

  /** forward sends a read to a node holding a copy of partition p (NATS request, queue group: one of them answers). */
  private async forward(p: number, request: Request, barrier: number, keyHash: string): Promise<Response> {
    const body = request.method === "GET" || request.method === "HEAD" ? null : new Uint8Array(await request.arrayBuffer());
    const read: RelayedRequest = { method: request.method, url: request.url, headers: [...request.headers], body, barrier, keyHash };
    if (new URL(request.url, "http://localhost").pathname.endsWith("/logs/tail")) {
      const streamed = await askStream(this.link.nc, tailSubject(p), read, 10_000);
      if (!streamed) throw noCopy(p);
      return this.endable(streamed);
    }
    let reply: ForwardedReply;
    try {
      const m = await this.link.nc.request(readSubject(p), pack(read), { timeout: (this.options.queryTimeoutMs ?? 30_000) + 5000 });
      reply = unpack<ForwardedReply>(m.data);
    } catch {
      throw noCopy(p);
    }
    return new Response(reply.body, { status: reply.status, headers: reply.headers });
  }

  /** endable is a relayed stream that endStreams can end (a clean stop must not wait on a tail). */
  private endable(response: Response): Response {
    const reader = response.body!.getReader();
    let end = () => {};
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        end = () => {
          this.relayed.delete(end);
          void reader.cancel().catch(() => {});
          try {
            controller.close();
          } catch {
            // already closed
          }
        };
        this.relayed.add(end);
      },
      pull: async (controller) => {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (!done) return controller.enqueue(value);
        this.relayed.delete(end);
        try {
          controller.close();
        } catch {
          // ended meanwhile
        }
      },
      cancel: () => {
        this.relayed.delete(end);
        return reader.cancel();
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  }

  /** endStreams ends every open tail of this node's clients, answered by its own copies or relayed from others. */
  endStreams(): void {
    for (const copy of this.copies.values()) copy.sluice.tails.closeAll();
    for (const end of [...this.relayed]) end();
    this.front.tails.closeAll();
  }

  /** serve answers the reads other nodes forward for partition p, from this node's copy. */
  private serve(copy: PartitionCopy): Subscription {
    const sub = this.link.nc.subscribe(readSubject(copy.partition), { queue: "copies" });
    void (async () => {
      for await (const m of sub) {
        void (async () => {
          const response = await this.answer(copy, unpack<RelayedRequest>(m.data));
          m.respond(
            pack({ status: response.status, headers: [...response.headers], body: new Uint8Array(await response.arrayBuffer()) } satisfies ForwardedReply),
          );
        })().catch((e) => this.log({ level: "error", msg: "a forwarded read failed", error: String(e) }));
      }
    })();
    return sub;
  }

  /** answer runs a request relayed from another node on this node's copy, once it has applied the request's barrier. */
  private async answer(copy: PartitionCopy, read: RelayedRequest): Promise<Response> {
    const request = new Request(read.url, { method: read.method, headers: read.headers, body: read.body });
    if (read.keyHash === undefined)
      return errorResponse(new ApiError(400, "VALIDATION_INVALID_REQUEST", "a relayed read names no admitted key; upgrade every node"));
    this.admitted.set(request, read.keyHash);
    await this.knowsKey(read.keyHash); // a key the asking node knew is known here too (the mirror catches up)
    try {
      return await this.readOn(copy, request, read.barrier);
    } catch (e) {
      return errorResponse(e instanceof ApiError ? e : notCaughtUp(copy.partition));
    }
  }

  /** followAssignment opens and closes copies as the stored assignment says, now and whenever it changes. */
  private async followAssignment(): Promise<void> {
    const apply = () =>
      (this.assigning = this.assigning.then(async () => {
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
          if (!existsSync(dir) && (await this.worthCopying(p, assignment[p])) && (await fetchBackup(this.link.nc, p, dir).catch(() => false)))
            this.restored.add(p);
          if (this.closed) return;
          // a copy answers only reads a front admitted; the access log is the front's, one line a request
          const handoff = { admittedAs: (request: Request) => this.admitted.get(request) };
          const copyOptions = { ...this.options, accessLog: undefined, meta: this.mirror.proxy(), handoff };
          const copy = new PartitionCopy(p, this.options.dataDir, copyOptions, this.link, this.log);
          this.copies.set(p, copy);
          copy.start();
          this.serving.set(p, [
            this.serve(copy),
            serveStream(this.link.nc, tailSubject(p), (read) => this.answer(copy, read)),
            serveBackups(this.link.nc, copy, join(this.options.dataDir, "tmp")),
          ]);
          const sweeper = new RetentionSweeper(copy.sluice.entries, copy.sluice.meta, (ws, nowMs) => this.options.plans.retentionFloor(ws.plan, nowMs));
          this.timers.push(setInterval(() => void sweeper.sweep().catch(() => {}), this.options.retentionSweepMs ?? 600_000));
        }
      }));
    await apply();
    const watch = await this.link.cluster.watch({ key: "assign", include: "updates" as never });
    void (async () => {
      for await (const _ of watch) void apply().catch((e) => this.log({ level: "error", msg: "applying the assignment failed", error: String(e) }));
    })();
    this.stopWatch = () => watch.stop();
  }
  private stopWatch: (() => void) | undefined;

  /** worthCopying tells whether partition p has writes and another node is assigned a copy of it: a backup to start from. */
  private async worthCopying(p: number, nodes: string[]): Promise<boolean> {
    if (!nodes.some((id) => id !== this.options.nodeId)) return false;
    return (await this.link.lastSeq(p).catch(() => 0)) > 0;
  }

  /** beat tells the cluster this node is alive, its roles and how far each of its copies has applied. */
  private async beat(): Promise<void> {
    if (this.closed) return;
    await this.link.nodes.put(this.options.nodeId, JSON.stringify({ roles: this.options.roles, applied: this.held(), at: Date.now() }));
    let fronts = 0;
    for await (const id of await this.link.nodes.keys()) {
      const e = await this.link.nodes.get(id);
      if (e?.operation === "PUT" && (e.json<{ roles: string[] }>().roles ?? []).includes("front")) fronts++;
    }
    (this.options.plans as SharedPlans).setFronts(fronts);
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
    await this.mirror.stop();
    await this.front.close();
    await this.link.nodes.delete(this.options.nodeId).catch(() => {});
    await this.link.close();
    await this.metaEnv.root.close();
  }
}

const errorResponse = (e: ApiError) =>
  Response.json(
    { error_code: e.code, message: e.message, request_id: crypto.randomUUID(), ...(e.details ? { details: e.details } : {}) },
    { status: e.status, headers: e.headers },
  );
const notCaughtUp = (p: number) =>
  new ApiError(
    503,
    "INTERNAL_LOG_SERVICE_ERROR",
    `no copy of partition ${p} caught up with its log in time; retry, and check \`sluice cluster status\``,
    undefined,
    {
      "retry-after": "2",
    },
  );
const noCopy = (p: number) =>
  new ApiError(
    503,
    "INTERNAL_LOG_SERVICE_ERROR",
    `no node holding a copy of partition ${p} answered; run \`sluice cluster rebalance\` and check \`sluice cluster status\``,
    undefined,
    {
      "retry-after": "2",
    },
  );
