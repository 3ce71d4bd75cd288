// copy: one LMDB copy of a partition on a storage node. An ordered consumer reads the partition's stream from the
// sequence after the last one applied, in order; each write goes through the single process's write path (quota,
// blocks, indexes) and the applied sequence is put in the same transaction, so a write is applied exactly once
// across kill -9 and restarts. The copy serves reads once it has applied a read's barrier.
import { join } from "node:path";
import type { ConsumerMessages } from "@nats-io/jetstream";
import { DeliverPolicy } from "@nats-io/jetstream";
import { compose, type SluiceOptions } from "../compose.ts";
import { IdGenerator } from "../ids.ts";
import type { Link } from "./link.ts";
import { decodeWrite, pack, type VerdictMessage, type WriteMessage } from "./message.ts";
import { streamOf, verdictSubject } from "./names.ts";
import { Watermark } from "./watermark.ts";

/** writes applied but not yet committed, at most: the consumer waits for the oldest beyond this */
const IN_FLIGHT = 512;
/** the root key of a copy's applied sequence */
export const APPLIED = "cluster.applied";
/** the root key of the key (server millisecond, id) of a tenant's last write that passed the order check */
const lastKeyOf = (ws: string, env: string) => `cluster.last/${ws}/${env}`;
/** how often a copy checks that it moves while its stream is ahead; two still checks in a row make it consume again */
const STALL_CHECK_MS = 1500;
/** how long stop() waits for the consumer loop to end before closing the environment */
const STOP_WAIT_MS = 1000;

/** PartitionCopy is a partition's LMDB environment (a full Sluice data directory) fed from its stream. */
export class PartitionCopy {
  readonly sluice: ReturnType<typeof compose>;
  /** the last sequence committed here */
  private readonly mark: Watermark;
  private messages: ConsumerMessages | undefined;
  /** the last sequence delivered here, and how many the stream held beyond it then (its consumer's pending count) */
  private delivered = 0;
  private pendingThen = 1;
  private stopped = false;
  private running: Promise<void> | undefined;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  /** the last message's application: a rejection list waits for the writes before it */
  private previous: Promise<unknown> = Promise.resolve();
  /** the last message's advance of the applied sequence: it rises in log order, never past a write still committing */
  private advanced: Promise<unknown> = Promise.resolve();
  /** each tenant's last key as decided in log order, ahead of what has committed (lastKeyOf) */
  private readonly lastKeys = new Map<string, { ms: number; id: string }>();

  constructor(
    readonly partition: number,
    dataDir: string,
    options: Omit<SluiceOptions, "dataDir">,
    private readonly link: Link,
    private readonly log: (line: Record<string, unknown>) => void,
  ) {
    this.sluice = compose({ ...options, dataDir: join(dataDir, `p${partition}`) });
    this.mark = new Watermark((this.sluice.dbs.root.get(APPLIED) as number | undefined) ?? 0);
  }

  /** applied is the last sequence committed here. */
  get applied(): number {
    return this.mark.value;
  }

  /**
   * start consumes for ever (until stop), starting again from the applied sequence after any failure, and after a
   * stall: a consumer that delivers nothing while its stream is ahead (seen after a NATS server's kill -9) is closed
   * and made again.
   */
  start(): void {
    let stalled = 0;
    let seen = this.applied;
    this.watchdog = setInterval(() => {
      void this.link
        .lastSeq(this.partition)
        .then((last) => {
          stalled = last > this.applied && this.applied === seen ? stalled + 1 : 0;
          seen = this.applied;
          if (stalled >= 2) {
            stalled = 0;
            this.log({
              level: "warn",
              msg: "a partition copy stalled behind its stream; consuming again",
              partition: this.partition,
              applied: this.applied,
              last,
            });
            void this.messages?.close();
          }
        })
        .catch(() => {});
    }, STALL_CHECK_MS);
    this.running = (async () => {
      while (!this.stopped) {
        try {
          await this.consume();
        } catch (e) {
          if (!this.stopped)
            this.log({ level: "warn", msg: "a partition copy stopped consuming; starting again", partition: this.partition, error: String(e) });
        }
        if (!this.stopped) await Bun.sleep(500);
      }
    })();
  }

  private async consume(): Promise<void> {
    this.lastKeys.clear(); // what a failed run decided ahead of its commits is decided again, from what committed
    this.advanced = Promise.resolve();
    const consumer = await this.link.js.consumers.get(streamOf(this.partition), {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: this.applied + 1,
    });
    const messages = await consumer.consume({ max_messages: 256 });
    this.messages = messages;
    if (this.stopped) await messages.close(); // stop() came while the consumer was being made: nobody else closes it
    const pending: Promise<unknown>[] = [];
    let expected = this.applied + 1;
    try {
      for await (const m of messages) {
        if (this.stopped) break;
        if (m.seq < expected) continue; // delivered again after the consumer was recreated
        if (m.seq !== expected) throw new Error(`the stream skipped from ${expected - 1} to ${m.seq}`);
        expected = m.seq + 1;
        this.delivered = m.seq;
        this.pendingThen = m.info.pending;
        pending.push(this.apply(m.seq, m.data));
        if (pending.length >= IN_FLIGHT) await pending.shift();
      }
    } finally {
      await Promise.allSettled(pending);
    }
  }

  /** apply applies the message of sequence `seq`: a write, or a shipper request's rejected entries. */
  private apply(seq: number, data: Uint8Array): Promise<void> {
    const m = decodeWrite(data);
    const done = m.rejected ? this.list(seq, m.ws, m.env, m.ms, m.rejected, this.previous) : this.store(seq, m);
    this.previous = done.catch(() => {});
    // a write refused by its quota is decided before the writes ahead of it commit: reads must not pass those
    this.advanced = Promise.all([this.advanced, done]).then(() => this.mark.advance(seq));
    this.advanced.catch(() => {}); // a failed write stops the advance; consume() starts again from the applied sequence
    return done;
  }

  /**
   * list adds rejected entries to this copy's list (in memory, as a single process keeps it), once the writes before
   * them have committed, and stores the applied sequence past them unless a later write's commit has already.
   */
  private async list(
    seq: number,
    ws: string,
    env: string,
    ms: number,
    rejected: NonNullable<WriteMessage["rejected"]>,
    before: Promise<unknown>,
  ): Promise<void> {
    await before;
    this.sluice.rejections.record(ws, env, rejected.protocol, rejected.items, ms);
    const root = this.sluice.dbs.root;
    await root.transaction(() => {
      if (((root.get(APPLIED) as number | undefined) ?? 0) < seq) root.put(APPLIED, seq);
    });
  }

  /**
   * store applies one write through the entry store, its sequence in its transaction, then tells waiting reads and
   * fronts. A write whose first key is not above its tenant's last one is stored re-keyed just above it
   * (IdGenerator.above): so each tenant's keys rise in log order, and a live tail, which sends in key order, never
   * passes an entry that is still to come. Every copy decides alike, in log order, from what it stored before.
   */
  private async store(seq: number, m: WriteMessage): Promise<void> {
    const root = this.sluice.dbs.root;
    const sent = m.prepared ? m.prepared.ids : (m.entries ?? []).map((e) => e.id);
    const name = lastKeyOf(m.ws, m.env);
    const last = this.lastKeys.get(name) ?? (root.get(name) as { ms: number; id: string } | undefined);
    const inOrder = !last || m.ms > last.ms || (m.ms === last.ms && sent[0] > last.id);
    const { ms, ids } = inOrder ? { ms: m.ms, ids: sent } : IdGenerator.above(last.id, sent);
    const key = { ms, id: ids[ids.length - 1] };
    this.lastKeys.set(name, key);
    const alsoPut = () => Promise.all([root.put(APPLIED, seq), root.put(name, key)]);
    const tenant = { ws: m.ws, env: m.env };
    const verdict = m.prepared
      ? await this.sluice.entries.appendPrepared(tenant, ms, ids, m.prepared.blocks, m.limit, alsoPut)
      : await this.sluice.entries.append(
          tenant,
          ms,
          (m.entries ?? []).map((e, i) => (inOrder ? e : { ...e, id: ids[i] })),
          m.limit,
          alsoPut,
        );
    this.link.nc.publish(verdictSubject(this.partition), pack({ seq, ...verdict, ...(inOrder ? {} : { after: last }) } satisfies VerdictMessage));
  }

  /**
   * likelyCurrent tells whether this copy has applied all that its stream held at the last delivery: a read run at
   * once will most likely be found to have started past its barrier. A guess for speed only; exactness never rests on it.
   */
  get likelyCurrent(): boolean {
    return this.pendingThen === 0 && this.applied >= this.delivered;
  }

  /** reached resolves true once `seq` is applied here, false after `timeoutMs`. */
  reached(seq: number, timeoutMs: number): Promise<boolean> {
    return this.mark.reached(seq, timeoutMs);
  }

  /** stop ends consuming, lets what was taken commit, and closes the environment. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watchdog);
    // the messages close once the consumer loop takes the next one: a loop waiting for a commit is not waited for longer
    await Promise.race([this.messages?.close().catch(() => {}), Bun.sleep(STOP_WAIT_MS)]);
    // a consumer still being made (seconds, while a new stream elects its leader) is closed as soon as it is: not waited for
    await Promise.race([this.running, Bun.sleep(STOP_WAIT_MS)]);
    await this.sluice.close();
  }
}
