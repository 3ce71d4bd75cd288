// reads: where a cluster node answers a read its front admitted (contract §13). It runs on a copy of the caller's
// partition, this node's own or another node's through a NATS request, once that copy has applied every write
// acknowledged before the read began; the copy does not admit the read again.
import type { Subscription } from "@nats-io/transport-node";
import type { Caller } from "../auth/authenticate.ts";
import { ApiError } from "../errors.ts";
import { RELAYED_TAIL } from "../http/loki-tail.ts";
import type { PartitionCopy } from "./copy.ts";
import { LAST_SEQ_DEADLINE_MS, type Link } from "./link.ts";
import { pack, unpack } from "./message.ts";
import { partitionOf, readSubject, tailSubject } from "./names.ts";
import { isRelayedRequest, PeerHttp } from "./peer.ts";
import { askStream, serveStream, type RelayedRequest } from "./relay.ts";

/**
 * OWN_BARRIER as a read's barrier: the copy asks for its stream's last sequence itself. A node of an older version
 * would wait for it until its timeout and answer 503, never a read that could miss a write.
 */
const OWN_BARRIER = Number.POSITIVE_INFINITY;
/** how long a forwarded read is sent again while NATS knows no copy subscribed to it */
const NO_RESPONDERS_WAIT_MS = 3000;
/** how long a tail waits for its partition's owner to answer before any copy may */
const OWNER_WAIT_MS = 2000;

interface ForwardedReply {
  status: number;
  headers: [string, string][];
  body: Uint8Array;
  /** an early read's: the sequence the copy had applied when it ran the read (absent: the copy took the barrier) */
  applied?: number;
}

/** ReadsSettings are what the read path needs of its node. */
export interface ReadsSettings {
  partitions: number;
  queryTimeoutMs: number;
  nodeId: string;
  /** this node's copy of partition p, if it holds one */
  copyOf(p: number): PartitionCopy | undefined;
  /** the node whose copy of partition p answers its live tails (one copy counts a key's tails), if known */
  tailOwner(p: number): Promise<string | undefined>;
  /** makes sure the node knows a key by its hash (a key made on another node a moment ago: the meta mirror catches up) */
  knowsKey(hash: string): Promise<void>;
  /** the address of another node holding a copy of partition p, as its last beat says, if any advertised one */
  peerUrl(p: number): string | undefined;
  /** the cluster's secret for reads sent straight to a peer over HTTP (peer.ts); none: every read goes through NATS */
  peerSecret: string | undefined;
  log(line: Record<string, unknown>): void;
}

/** ClusterReads answers a node's admitted reads on copies, and other nodes' reads on this node's copies. */
export class ClusterReads {
  /** reads this node's front (or another node's) admitted, by the hash of their key: a copy does not admit them again */
  private readonly admitted = new WeakMap<Request, string>();
  /** how to end each open tail relayed from another node's copy */
  private readonly relayed = new Set<() => void>();
  /** reads run before their barrier was known (readOn): kept, or run again because the copy was behind */
  readonly early = { kept: 0, again: 0 };
  /** reads this node forwarded, straight to a peer over HTTP or through NATS */
  readonly forwarded = { http: 0, nats: 0 };
  private readonly peer: PeerHttp | undefined;

  constructor(
    private readonly link: Link,
    private readonly settings: ReadsSettings,
  ) {
    this.peer = settings.peerSecret === undefined ? undefined : new PeerHttp(settings.peerSecret);
  }

  /** fromPeer tells whether a request was posted by another node of the cluster (peer.ts). */
  fromPeer(request: Request): boolean {
    return this.peer?.fromPeer(request) ?? false;
  }

  /** admittedAs is the hash of the key a front admitted `request` as, for a copy's Gate (http/handoff.ts). */
  admittedAs(request: Request): string | undefined {
    return this.admitted.get(request);
  }

  /** elsewhere answers a read the front admitted on a copy of the caller's partition (rejection lists included: they travel the log). */
  elsewhere(request: Request, caller: Caller): Promise<Response> {
    const p = partitionOf(caller.workspace.id, this.settings.partitions);
    if (isTail(request)) return this.tail(p, request, caller.key.hash);
    const local = this.settings.copyOf(p);
    return local ? this.readOn(local, request, caller.key.hash, OWN_BARRIER) : this.forward(p, request, caller.key.hash);
  }

  /** tail opens a live tail on the copy that answers partition p's tails: here, or relayed from its node. */
  private async tail(p: number, request: Request, keyHash: string): Promise<Response> {
    const owner = await this.settings.tailOwner(p).catch(() => undefined);
    const local = this.settings.copyOf(p);
    if (local && (owner === undefined || owner === this.settings.nodeId)) return this.readOn(local, request, keyHash, OWN_BARRIER);
    const read: RelayedRequest = { method: request.method, url: request.url, headers: [...request.headers], body: null, barrier: OWN_BARRIER, keyHash };
    // the owner answers (a key's tails counted in one place); if it does not, any copy does
    const streamed =
      (owner === undefined ? undefined : await askStream(this.link.nc, tailSubject(p, owner), read, OWNER_WAIT_MS)) ??
      (await askStream(this.link.nc, tailSubject(p), read, 10_000));
    if (!streamed) throw noCopy(p);
    return this.endable(streamed);
  }

  /** serve answers the reads and tails other nodes forward for `copy`'s partition. */
  serve(copy: PartitionCopy): Subscription[] {
    const sub = this.link.nc.subscribe(readSubject(copy.partition), { queue: "copies" });
    void (async () => {
      for await (const m of sub) {
        void (async () => {
          m.respond(await packReply(await this.answer(copy, unpack<RelayedRequest>(m.data))));
        })().catch((e) => this.settings.log({ level: "error", msg: "a forwarded read failed", error: String(e) }));
      }
    })();
    const tails = async (read: RelayedRequest) => (await this.answer(copy, read)).response;
    return [
      sub,
      serveStream(this.link.nc, tailSubject(copy.partition), tails),
      serveStream(this.link.nc, tailSubject(copy.partition, this.settings.nodeId), tails, false),
    ];
  }

  /** endRelayed ends every open tail relayed from another node's copy (a clean stop must not wait on a tail). */
  endRelayed(): void {
    for (const end of [...this.relayed]) end();
  }

  /**
   * readOn runs a read on a copy once it has applied `barrier`, or with OWN_BARRIER the stream's last sequence, asked
   * for now (after the read began, so it covers every write acknowledged before). While that answer travels, a copy
   * that looks current runs the read at once: kept if the copy had applied the barrier when the read started, else
   * run again once it has. A live tail never starts before its barrier.
   */
  private async readOn(copy: PartitionCopy, request: Request, keyHash: string, barrier: number): Promise<Response> {
    const timeoutMs = this.settings.queryTimeoutMs;
    const run = (r: Request) => this.run(copy, r, keyHash);
    if (barrier !== OWN_BARRIER) {
      if (!(await copy.reached(barrier, timeoutMs))) throw notCaughtUp(copy.partition);
      return run(request);
    }
    const last = this.link.lastSeq(copy.partition);
    if (copy.likelyCurrent && !isTail(request)) {
      const startedAt = copy.applied;
      const early = run(request.clone() as Request);
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
    return run(request);
  }

  /** run hands an admitted read to a copy's app (its Gate does not admit it again). */
  private run(copy: PartitionCopy, request: Request, keyHash: string): Promise<Response> {
    this.admitted.set(request, keyHash);
    return copy.sluice.app.handle(request);
  }

  /**
   * forward sends a read to a node holding a copy of partition p (over HTTP, or as a NATS request to the partition's
   * copies, one of which answers) and meanwhile asks for the barrier, the stream's last sequence, itself. A copy that looks current runs the read at
   * once and says what it had applied: its page is kept if that covers the barrier, else the read is sent again with
   * the barrier to wait for. A copy that does not look current takes the barrier itself.
   */
  private async forward(p: number, request: Request, keyHash: string): Promise<Response> {
    const body = request.method === "GET" || request.method === "HEAD" ? null : new Uint8Array(await request.arrayBuffer());
    const read: RelayedRequest = { method: request.method, url: request.url, headers: [...request.headers], body, barrier: OWN_BARRIER, keyHash };
    const last = this.link.lastSeq(p);
    last.catch(() => {}); // a copy that took the barrier itself answers without it
    const reply = await this.ask(p, { ...read, early: true });
    if (reply.applied === undefined) return toResponse(reply);
    const seq = await last;
    if (reply.applied >= seq) {
      this.early.kept++;
      return toResponse(reply);
    }
    this.early.again++;
    return toResponse(await this.ask(p, { ...read, barrier: seq }));
  }

  /** ask sends a read to a copy of partition p, straight to its node if it advertised an address, and waits for its answer. */
  private async ask(p: number, read: RelayedRequest): Promise<ForwardedReply> {
    // the copy may wait out a stream leader election for the barrier, then the read's own time
    const timeout = LAST_SEQ_DEADLINE_MS + this.settings.queryTimeoutMs + 5000;
    const packed = pack(read);
    const url = this.peer === undefined ? undefined : this.settings.peerUrl(p);
    const direct = url === undefined ? undefined : await this.peer?.ask(url, p, packed, timeout).catch(() => Promise.reject(noCopy(p)));
    if (direct) {
      this.forwarded.http++;
      return unpack<ForwardedReply>(direct);
    }
    this.forwarded.nats++;
    const until = Date.now() + NO_RESPONDERS_WAIT_MS;
    for (;;) {
      try {
        return unpack<ForwardedReply>((await this.link.nc.request(readSubject(p), packed, { timeout })).data);
      } catch (e) {
        // a copy's subscription reaches every NATS server a moment after it is made: "no responders" just after a start
        if (!(e as { isNoResponders?(): boolean }).isNoResponders?.() || Date.now() > until) throw noCopy(p);
        await Bun.sleep(100);
      }
    }
  }

  /**
   * answerPeer answers a read another node posted straight to this one (peer.ts) on its copy of partition p: 404
   * when it holds none (the peer then asks through NATS), 400 when the body is no relayed read.
   */
  async answerPeer(request: Request, p: number): Promise<Response> {
    const copy = this.settings.copyOf(p);
    if (!copy) return new Response(null, { status: 404 });
    let read: unknown;
    try {
      read = unpack(new Uint8Array(await request.arrayBuffer()));
    } catch {
      read = undefined;
    }
    if (!isRelayedRequest(read)) return new Response("the body is no relayed read: every node must run the same version", { status: 400 });
    return new Response(await packReply(await this.answer(copy, read)), { headers: { "content-type": "application/x-msgpack" } });
  }

  /**
   * answer runs a request relayed from another node on this node's copy, once it has applied the request's barrier;
   * an early read on a copy that looks current runs at once, with the sequence applied then.
   */
  private async answer(copy: PartitionCopy, read: RelayedRequest): Promise<{ response: Response; applied?: number }> {
    const request = new Request(read.url, { method: read.method, headers: read.headers, body: read.body });
    if (read.keyHash === undefined)
      return { response: errorResponse(new ApiError(400, "VALIDATION_INVALID_REQUEST", "a relayed read names no admitted key; upgrade every node")) };
    await this.settings.knowsKey(read.keyHash); // a key the asking node knew is known here too
    if (read.early && copy.likelyCurrent && !isTail(request)) {
      const applied = copy.applied;
      return { response: await this.run(copy, request, read.keyHash), applied };
    }
    try {
      return { response: await this.readOn(copy, request, read.keyHash, read.barrier) };
    } catch (e) {
      return { response: errorResponse(e instanceof ApiError ? e : notCaughtUp(copy.partition)) };
    }
  }

  /** endable is a relayed stream that endRelayed can end. */
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
}

/** packReply packs a copy's answer to a forwarded read, as NATS and a peer's HTTP answer both carry it. */
async function packReply({ response, applied }: { response: Response; applied?: number }): Promise<Uint8Array> {
  const body = new Uint8Array(await response.arrayBuffer());
  return pack({ status: response.status, headers: [...response.headers], body, applied } satisfies ForwardedReply);
}

const toResponse = (reply: ForwardedReply) => new Response(reply.body, { status: reply.status, headers: reply.headers });

/** isTail tells a live tail (native, or a Loki tail a front relays): it never ends by itself, and starts only after its barrier */
const isTail = (request: Request) => {
  const { pathname } = new URL(request.url, "http://localhost");
  return pathname.endsWith("/logs/tail") || pathname === RELAYED_TAIL;
};

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
const retryLater = { "retry-after": "2" };
const notCaughtUp = (p: number) =>
  new ApiError(
    503,
    "INTERNAL_LOG_SERVICE_ERROR",
    `no copy of partition ${p} caught up with its log in time; retry, and check \`sluice cluster status\``,
    undefined,
    retryLater,
  );
const noCopy = (p: number) =>
  new ApiError(
    503,
    "INTERNAL_LOG_SERVICE_ERROR",
    `no node holding a copy of partition ${p} answered; run \`sluice cluster rebalance\` and check \`sluice cluster status\``,
    undefined,
    retryLater,
  );
