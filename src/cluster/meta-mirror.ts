// meta-mirror: workspaces, keys and the admin token hash live in a JetStream key-value bucket; each node keeps a
// mirror of it in its own LMDB meta database, which the unchanged MetaStore reads. A MetaStore write goes through
// the mirror's proxy: it commits locally, then every key it put or removed is written to the bucket; every node
// watches the bucket and applies what changed, raising its meta generation, so revocations act on every node.
import type { Database, Key } from "lmdb";
import type { KV, KvWatchOptions } from "@nats-io/kv";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { SESSION_KEYS } from "../storage/records/sessions.ts";
import { unavailable } from "./link.ts";
import { pack, unpack } from "./message.ts";
import { Watermark } from "./watermark.ts";

/** keys of the meta database that stay local: the generation (each node raises its own) and the readiness probe */
const LOCAL = new Set(["generation", "readyz"]);
/** keys whose change a write does not wait for on every node: a session's recorded use (the reader catches up instead) */
const UNAWAITED = new Set(["seen"]);

type Change = { key: Key[]; value?: unknown };

/** bucketKey names a meta key in the bucket: base64url of its JSON (bucket keys allow only [-/_=.A-Za-z0-9]). */
export const bucketKey = (key: unknown[]) => Buffer.from(JSON.stringify(key)).toString("base64url");
const metaKey = (name: string) => JSON.parse(Buffer.from(name, "base64url").toString()) as Key[];

/** where a node that wrote to the meta bucket asks every node to answer once its mirror has applied a revision */
const APPLIED_SUBJECT = "sluice.meta.applied";
/** a bucket key that holds a whole transaction's changes (keys of the mirrored database are base64url: no dot) */
const JOURNAL = "journal.";

/** MirrorOptions say how a mirror differs from the meta database's. */
export interface MirrorOptions {
  /** whether an applied change raises the database's generation (cached keys and workspaces are dropped on it) */
  generation?: boolean;
  /**
   * a transaction of several changes is first put as one journal entry that every mirror applies at once, then key
   * by key, then the journal entry is deleted: a writer killed midway leaves all of its changes in the bucket or none
   */
  journal?: boolean;
  /**
   * a transaction resolves, and its keys count as sent, only once this node's mirror has applied the bucket up to its
   * last change: the watch's echo of an earlier change can no longer bring back a value it replaced (an outbox notice
   * settled a moment ago would otherwise be found again and sent twice)
   */
  echoed?: boolean;
}
/** how long a transaction waits for its own changes to come back through the watch (echoed) */
const ECHO_WAIT_MS = 2000;
/** how long a write waits for the other nodes' mirrors (the contract's bound on a revocation reaching every node) */
const EVERY_NODE_MS = 2000;

/** how long a change may wait for the bucket, retried through a stream leader election (as a write waits for its stream) */
const BUCKET_DEADLINE_MS = 12_000;

/** stored retries a bucket write until JetStream takes it (a put of the same value twice leaves the same state); else 503. */
async function stored<T>(write: () => Promise<T>): Promise<T> {
  const until = Date.now() + BUCKET_DEADLINE_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch {
      if (Date.now() + 500 > until) throw unavailable("the change was not stored in the cluster's metadata");
      await Bun.sleep(Math.min(1000, 100 * 2 ** attempt));
    }
  }
}

/** Peers says how many nodes are live (each answers APPLIED_SUBJECT), for a write to wait for all of them. */
export interface Peers {
  nc: NatsConnection;
  count(): Promise<number>;
}

/** MetaMirror keeps the node's meta database equal to the bucket, and sends the MetaStore's writes there. */
export class MetaMirror {
  private stopWatch: (() => void) | undefined;
  private following: Promise<void> | undefined;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  private answering: Subscription | undefined;
  /** the bucket revision applied here last, and what waits for a later one */
  private readonly revision = new Watermark();
  /** bucket keys committed here whose change the bucket may not have yet */
  private readonly unsent = new Map<string, number>();
  constructor(
    private readonly db: Database,
    private readonly kv: KV,
    private readonly log: (line: Record<string, unknown>) => void = (line) => console.error(JSON.stringify(line)),
    /** the live nodes: with them, a write answers once every node's mirror has it (at most 2 s) */
    private readonly peers?: Peers,
    private readonly options: MirrorOptions = {},
  ) {}

  /** sent tells whether the bucket holds every change made here to a key (false while one is on its way there). */
  sent(key: Key[]): boolean {
    return !this.unsent.has(bucketKey(key));
  }

  /** start applies every key of the bucket, then follows its changes; resolves once the node is in step (at most 10 s). */
  async start(): Promise<void> {
    if (this.peers) {
      this.answering = this.peers.nc.subscribe(APPLIED_SUBJECT, {
        callback: (_, m) => {
          void this.revision.reached(unpack<number>(m.data), EVERY_NODE_MS).then((reached) => reached && m.respond());
        },
      });
    }
    const { values } = await this.kv.status();
    const { inStep } = await this.follow({});
    if (values > 0) await Promise.race([inStep, Bun.sleep(10_000).then(() => Promise.reject(new Error("the meta bucket was not read within 10 s")))]);
    // a watch that delivers nothing while the bucket is ahead (seen once under load) is made again from where it stood
    let stalled = 0;
    let seen = this.revision.value;
    this.watchdog = setInterval(() => {
      void this.kv
        .status()
        .then(async ({ streamInfo }) => {
          stalled = streamInfo.state.last_seq > this.revision.value && this.revision.value === seen ? stalled + 1 : 0;
          seen = this.revision.value;
          if (stalled < 2) return;
          stalled = 0;
          this.log({ level: "warn", msg: "the meta bucket watch stalled; watching again", revision: seen });
          this.stopWatch?.();
          await this.following;
          await this.follow({ resumeFromRevision: seen + 1 });
        })
        .catch(() => {});
    }, 1000);
  }

  /** follow applies the bucket's entries as the watch delivers them; the promise it gives resolves once the initial ones are applied. */
  private async follow(options: KvWatchOptions): Promise<{ inStep: Promise<void> }> {
    const watch = await this.kv.watch(options);
    this.stopWatch = () => watch.stop();
    let initial: () => void = () => {};
    const inStep = new Promise<void>((resolve) => {
      initial = resolve;
    });
    this.following = (async () => {
      for await (const e of watch) {
        const journal = e.key.startsWith(JOURNAL);
        // a journal's delete follows its changes put key by key: nothing to apply
        const changes: Change[] = journal
          ? e.operation === "PUT"
            ? unpack<Change[]>(e.value)
            : []
          : [{ key: metaKey(e.key), value: e.operation === "PUT" ? unpack(e.value) : undefined }];
        await this.db.transaction(() => {
          for (const { key, value } of changes) {
            if (value === undefined) this.db.removeSync(key);
            else this.db.putSync(key, value);
          }
          // sessions are read as stored on every request: no cached key needs to be dropped for them
          if (this.options.generation !== false && changes.some(({ key }) => !SESSION_KEYS.includes(String(key[0]))))
            this.db.putSync(["generation"], ((this.db.get(["generation"]) as number | undefined) ?? 0) + 1);
        });
        this.revision.advance(e.revision);
        if (e.delta === 0) initial();
      }
    })().catch((e) => this.log({ level: "error", msg: "the meta bucket watch ended", error: String(e) }));
    return { inStep };
  }

  /**
   * catchUp resolves once every change the bucket held when it was called is applied here (false after timeoutMs):
   * a key made on another node a moment ago is found here too.
   */
  async catchUp(timeoutMs = 2000): Promise<boolean> {
    const last = (await this.kv.status()).streamInfo.state.last_seq;
    const reached = await this.revision.reached(last, timeoutMs);
    this.db.resetReadTxn(); // the next read sees what was just applied, not the snapshot of a read begun before
    return reached;
  }

  /**
   * everyNode waits until every live node's mirror has applied `revision` (at most 2 s): an admin call answers once
   * its change holds on every node, so a key revoked through one node is refused by all of them from then on.
   */
  private async everyNode(revision: number): Promise<void> {
    if (!this.peers || revision === 0) return;
    const expected = await this.peers.count().catch(() => 0);
    if (expected === 0) return;
    let answered = 0;
    const replies = await this.peers.nc.requestMany(APPLIED_SUBJECT, pack(revision), { maxWait: EVERY_NODE_MS, maxMessages: expected }).catch(() => []);
    for await (const _ of replies) if (++answered >= expected) break;
  }

  /** stop ends following the bucket, once the change being applied is committed. */
  async stop(): Promise<void> {
    clearInterval(this.watchdog);
    this.answering?.unsubscribe();
    this.stopWatch?.();
    await this.following;
  }

  /**
   * proxy is the meta database for the MetaStore: reads as the mirror, writes committed locally and then put in the
   * bucket (awaited, so an admin call answers after every node can see it). A failure to reach the bucket fails the
   * call.
   */
  proxy(): Database {
    const db = this.db;
    const kv = this.kv;
    const everyNode = (revision: number) => this.everyNode(revision);
    const journal = this.options.journal === true;
    const echoed = this.options.echoed === true;
    const applied = this.revision;
    const unsent = this.unsent;
    // a key is marked unsent as the transaction changes it, before its commit can be read here
    const mark = (key: Key[], by: number) => {
      const name = bucketKey(key);
      const n = (unsent.get(name) ?? 0) + by;
      if (n > 0) unsent.set(name, n);
      else unsent.delete(name);
    };
    let recording: Change[] | undefined;
    return new Proxy(db, {
      get(target, prop) {
        if (prop === "transaction")
          return async (fn: () => unknown) => {
            let changes: Change[] = [];
            try {
              const result = await target.transaction(() => {
                recording = changes = [];
                try {
                  return fn();
                } finally {
                  recording = undefined;
                }
              });
              // a key's last-use stamp (touchKey: its record alone) stays on this node: shared, a stamp read before a
              // revocation elsewhere could put the unrevoked record back
              if (changes.length === 1 && changes[0].key[0] === "key") return result;
              let revision = 0;
              const name = journal && changes.length > 1 ? `${JOURNAL}${crypto.randomUUID()}` : undefined;
              if (name) await stored(() => kv.put(name, pack(changes)));
              for (const c of changes) {
                if (c.value === undefined) await stored(() => kv.delete(bucketKey(c.key)));
                else revision = await stored(() => kv.put(bucketKey(c.key), pack(c.value)));
              }
              if (name) await stored(() => kv.delete(name));
              if (echoed && changes.length > 0) {
                const last = name || revision === 0 ? await stored(async () => (await kv.status()).streamInfo.state.last_seq) : revision;
                await applied.reached(last, ECHO_WAIT_MS);
                db.resetReadTxn();
              }
              const sent = changes;
              for (const c of sent) mark(c.key, -1);
              changes = [];
              if (sent.every((c) => UNAWAITED.has(String(c.key[0])))) return result;
              // a delete tells no revision: the bucket's last, at or past it, is waited for (a session signed out)
              if (revision === 0 && sent.length > 0) revision = await stored(async () => (await kv.status()).streamInfo.state.last_seq);
              await everyNode(revision);
              return result;
            } finally {
              for (const c of changes) mark(c.key, -1);
            }
          };
        if (prop === "put" || prop === "remove")
          return (key: Key[], value?: unknown) => {
            if (recording && !LOCAL.has(String(key[0]))) {
              recording.push({ key, value: prop === "put" ? value : undefined });
              mark(key, 1);
            }
            return prop === "put" ? target.put(key, value) : target.remove(key);
          };
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  }
}
