// node: a Sluice process in cluster mode (contract §13). Its front writes to the partition streams (front.ts), its
// storage copies apply them (copy.ts), and a read is run, after its barrier, on a copy of the workspace's partition:
// this node's own, or another node's through a NATS request. Workspaces and keys come from the meta bucket.
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Subscription } from "@nats-io/transport-node";
import type { Role } from "../config.ts";
import { compose, type SluiceOptions } from "../compose.ts";
import { ApiError } from "../errors.ts";
import { openDatabases } from "../storage/db.ts";
import { RetentionSweeper } from "../storage/retention.ts";
import { fetchBackup, serveBackups } from "./backup.ts";
import { APPLIED, PartitionCopy } from "./copy.ts";
import { SharedPlans } from "./plans.ts";
import { ClusterSink } from "./front.ts";
import { LAST_SEQ_DEADLINE_MS, Link } from "./link.ts";
import { pack, unpack } from "./message.ts";
import { MetaMirror } from "./meta-mirror.ts";
import { NODE_BEAT_MS, partitionOf, readSubject, streamOf, tailSubject, type ClusterSettings } from "./names.ts";
import { askStream, serveStream, type RelayedRequest } from "./relay.ts";
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
}

interface ForwardedReply {
  status: number;
  headers: [string, string][];
  body: Uint8Array;
}

/** the paths an API key opens: the workspace API and the shipper routes */
const WORKSPACE_PATHS = ["/api/v1/workspace/", "/otlp/", "/loki/", "/es/"];
const WRITES = new Set(["POST /api/v1/workspace/logs", "POST /api/v1/workspace/logs/bulk", "POST /api/v1/workspace/logs/validate"]);
const isRead = (method: string, path: string) =>
  path.startsWith("/api/v1/workspace/") && !WRITES.has(`${method} ${path}`) && path !== "/api/v1/workspace/openapi.json";

/** ClusterNode is one running node: `handle` answers any request of the HTTP API. */
export class ClusterNode {
  private readonly copies = new Map<number, PartitionCopy>();
  /** the partitions whose copy here started from a peer's backup */
  readonly restored = new Set<number>();
  private readonly serving = new Map<number, Subscription[]>();
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  private assigning: Promise<void> = Promise.resolve();
  /** reads run before their barrier was known (readOn): kept, or run again because the copy was behind */
  readonly early = { kept: 0, again: 0 };
  private closed = false;

  private constructor(
    readonly options: NodeOptions,
    readonly link: Link,
    readonly settings: ClusterSettings,
    private readonly mirror: MetaMirror,
    private readonly metaEnv: ReturnType<typeof openDatabases>,
    readonly front: ReturnType<typeof compose>,
    private readonly log: (line: Record<string, unknown>) => void,
  ) {}

  /** start connects to NATS, mirrors the meta bucket, and begins serving, consuming and announcing itself. */
  static async start(given: NodeOptions): Promise<ClusterNode> {
    const plans = new SharedPlans(given.plans);
    const options = { ...given, plans };
    const log = options.log ?? ((line) => console.error(JSON.stringify(line)));
    const link = await Link.open(options.urls, options.nodeId);
    const settings = await link.settings();
    const metaEnv = openDatabases(join(options.dataDir, "meta"), options.storageLog);
    const live = async () => {
      let n = 0;
      for await (const _ of await link.nodes.keys()) n++;
      return n;
    };
    const mirror = new MetaMirror(metaEnv.meta, link.meta, log, { nc: link.nc, count: live });
    await mirror.start();
    const sink = new ClusterSink(link, settings.partitions, options.queryTimeoutMs ?? 30_000);
    const front = compose({
      ...options,
      dataDir: join(options.dataDir, "front"),
      meta: mirror.proxy(),
      writeTo: sink,
      // a rejection list is diagnostic: one that cannot reach the log is dropped, the request's answer stands
      forwardRejections: (batch) => sink.reject(batch).catch(() => {}),
    });
    const node = new ClusterNode(options, link, settings, mirror, metaEnv, front, log);
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

  /** handle answers one request: writes through the front, reads on a copy of the caller's partition. */
  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url, "http://localhost");
    if (url.pathname === "/readyz" && !this.ready) return Response.json({ status: "unavailable" }, { status: 503 });
    if (url.pathname.startsWith("/api/v1/admin/")) await this.mirror.catchUp().catch(() => false); // what another node's admin call made is seen here
    const scoped = WORKSPACE_PATHS.some((prefix) => url.pathname.startsWith(prefix));
    const workspaceId = scoped ? await this.caller(request.headers) : undefined;
    if (!isRead(request.method, url.pathname) || workspaceId === undefined) return this.front.app.handle(request); // the front's route gives the 401 of a single process
    try {
      const p = partitionOf(workspaceId, this.settings.partitions);
      const local = this.copies.get(p);
      if (local) return await this.readOn(local, request, OWN_BARRIER);
      return await this.forward(p, request);
    } catch (e) {
      if (e instanceof ApiError) return errorResponse(e);
      throw e;
    }
  }

  /**
   * caller is the workspace of the request's key, if any; a key this node does not know yet may have been made on
   * another node a moment ago, so the meta mirror catches up with the bucket first (bounded).
   */
  private async caller(headers: Headers): Promise<string | undefined> {
    try {
      return this.front.auth.authenticate(headers).workspace.id;
    } catch (e) {
      if (!(e instanceof ApiError) || e.code !== "AUTH_INVALID_API_KEY" || !this.ready) return undefined;
    }
    await this.mirror.catchUp().catch(() => false);
    try {
      return this.front.auth.authenticate(headers).workspace.id;
    } catch {
      return undefined;
    }
  }

  /**
   * readOn runs a read on a copy once it has applied `barrier`, or with OWN_BARRIER the stream's last sequence, asked
   * for now (after the read began, so it covers every write acknowledged before). While that answer travels, a copy
   * that looks current runs the read at once: kept if the copy had applied the barrier when the read started, else
   * run again once it has. A live tail never starts before its barrier.
   */
  private async readOn(copy: PartitionCopy, request: Request, barrier: number): Promise<Response> {
    const timeoutMs = this.options.queryTimeoutMs ?? 30_000;
    if (barrier !== OWN_BARRIER) {
      if (!(await copy.reached(barrier, timeoutMs))) throw notCaughtUp(copy.partition);
      return copy.sluice.app.handle(request);
    }
    const last = this.link.lastSeq(copy.partition);
    if (copy.likelyCurrent && !new URL(request.url, "http://localhost").pathname.endsWith("/logs/tail")) {
      const startedAt = copy.applied;
      const early = copy.sluice.app.handle(request.clone() as Request);
      const seq = await last.catch(async (e) => {
        await discard(early);
        throw e;
      });
      if (startedAt >= seq) {
        this.early.kept++;
        return early;
      }
      this.early.again++;
      void discard(early); // let go without waiting: the read again starts now
    }
    const seq = await last;
    if (!(await copy.reached(seq, timeoutMs))) throw notCaughtUp(copy.partition);
    return copy.sluice.app.handle(request);
  }

  /**
   * forward sends a read to a node holding a copy of partition p (NATS request, queue group: one of them answers),
   * which takes the barrier itself (OWN_BARRIER): the stream's last sequence asked for after this read began.
   */
  private async forward(p: number, request: Request): Promise<Response> {
    const body = request.method === "GET" || request.method === "HEAD" ? null : new Uint8Array(await request.arrayBuffer());
    const read: RelayedRequest = { method: request.method, url: request.url, headers: [...request.headers], body, barrier: OWN_BARRIER };
    if (new URL(request.url, "http://localhost").pathname.endsWith("/logs/tail")) {
      const streamed = await askStream(this.link.nc, tailSubject(p), read, 10_000);
      if (!streamed) throw noCopy(p);
      return streamed;
    }
    let reply: ForwardedReply;
    try {
      // the copy may wait out a stream leader election for the barrier, then the read's own time
      const timeout = LAST_SEQ_DEADLINE_MS + (this.options.queryTimeoutMs ?? 30_000) + 5000;
      const m = await this.link.nc.request(readSubject(p), pack(read), { timeout });
      reply = unpack<ForwardedReply>(m.data);
    } catch {
      throw noCopy(p);
    }
    return new Response(reply.body, { status: reply.status, headers: reply.headers });
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
    await this.caller(request.headers); // a key the asking node knew is known here too (the mirror catches up)
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
          if (existsSync(dir) && (await this.trimmedPast(p))) rmSync(dir, { recursive: true, force: true });
          if (!existsSync(dir) && (await this.worthCopying(p, assignment[p]))) {
            if (await fetchBackup(this.link.nc, p, dir).catch(() => false)) this.restored.add(p);
            else if ((await this.link.jsm.streams.info(streamOf(p))).state.first_seq > 1) {
              // the stream was trimmed: without a backup the copy could never catch up, so it waits for a peer to answer
              this.log({ level: "warn", msg: "no peer sent a backup of a trimmed partition; asking again in 5 s", partition: p });
              setTimeout(() => void apply().catch(() => {}), 5000);
              continue;
            }
          }
          if (this.closed) return;
          const copy = new PartitionCopy(p, this.options.dataDir, { ...this.options, meta: this.mirror.proxy() }, this.link, this.log);
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

  /**
   * trimmedPast tells whether this node's copy of partition p, left from an earlier assignment, applied less than
   * its stream still holds (it was trimmed meanwhile): then the copy starts again from a peer's backup.
   */
  private async trimmedPast(p: number): Promise<boolean> {
    const first = (await this.link.jsm.streams.info(streamOf(p))).state.first_seq;
    if (first <= 1) return false; // never trimmed
    const dbs = openDatabases(join(this.options.dataDir, `p${p}`), this.options.storageLog);
    const applied = (dbs.root.get(APPLIED) as number | undefined) ?? 0;
    await dbs.root.close();
    return applied + 1 < first;
  }

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

/**
 * OWN_BARRIER as a read's barrier: the copy asks for its stream's last sequence itself. A node of an older version
 * would wait for it until its timeout and answer 503, never a read that could miss a write.
 */
const OWN_BARRIER = Number.POSITIVE_INFINITY;

/** discard lets go of an answer that is not used (its body unread). */
async function discard(answer: Promise<Response>): Promise<void> {
  await answer.then(
    (r) => r.body?.cancel(),
    () => {},
  );
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
