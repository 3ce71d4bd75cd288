// front: the write side of a cluster node. An accepted write is published to its workspace's partition stream and
// answered once JetStream has acknowledged it and a copy has applied it: the copies decide in log order, so the
// quota is exact however many fronts race, and each tenant's keys rise in log order (a write whose key another
// front's overtook is stored re-keyed above it).
import { ApiError } from "../errors.ts";
import { IdGenerator } from "../ids.ts";
import type { Keyed, WriteSink } from "../ingest/ingest.ts";
import type { RejectedBatch } from "../ingest/rejections.ts";
import type { Environment } from "../schema.ts";
import type { Entry } from "../storage/format/block.ts";
import type { EncodedBlock } from "../storage/format/encode.ts";
import type { Tenant } from "../storage/keys.ts";
import type { Link } from "./link.ts";
import { encodeWrite, unpack, type VerdictMessage, type WriteMessage } from "./message.ts";
import { partitionOf, VERDICTS } from "./names.ts";

/** verdicts kept after they arrive, for a front that hears one before its own acknowledgement */
const VERDICTS_KEPT = 20_000;

/** ClusterSink is the WriteSink of a front: the partition streams instead of a local entry store. */
export class ClusterSink implements WriteSink {
  private readonly heard = new Map<string, VerdictMessage>();
  private readonly waiting = new Map<string, (v: VerdictMessage) => void>();

  constructor(
    private readonly link: Link,
    private readonly partitions: number,
    /** how long a write waits for a copy's verdict before 503 */
    private readonly verdictTimeoutMs = 30_000,
  ) {
    const sub = link.nc.subscribe(VERDICTS);
    void (async () => {
      for await (const m of sub) {
        const p = m.subject.slice(m.subject.lastIndexOf(".") + 1);
        const v = unpack<VerdictMessage>(m.data);
        const name = `${p}/${v.seq}`;
        const waiter = this.waiting.get(name);
        if (waiter) {
          this.waiting.delete(name);
          waiter(v);
        } else if (!this.heard.has(name)) {
          this.heard.set(name, v);
          if (this.heard.size > VERDICTS_KEPT) this.heard.delete(this.heard.keys().next().value!);
        }
      }
    })();
  }

  append(tenant: Tenant, serverMs: number, entries: Entry[], monthlyLimit: number): Promise<Keyed> {
    return this.send({ ws: tenant.ws, env: tenant.env, ms: serverMs, limit: monthlyLimit, entries });
  }

  appendPrepared(tenant: Tenant, serverMs: number, ids: string[], blocks: EncodedBlock[], monthlyLimit: number): Promise<Keyed> {
    return this.send({ ws: tenant.ws, env: tenant.env, ms: serverMs, limit: monthlyLimit, prepared: { ids, blocks } });
  }

  /** reject sends a shipper request's rejected entries to its partition's log: its copies list them, in log order. */
  async reject(batch: RejectedBatch): Promise<void> {
    const m: WriteMessage = {
      ws: batch.ws,
      env: batch.env as Environment,
      ms: batch.ms,
      limit: -1,
      rejected: { protocol: batch.protocol, items: batch.rejected },
    };
    await this.link.publish(partitionOf(batch.ws, this.partitions), encodeWrite(m), crypto.randomUUID());
  }

  /**
   * send publishes a write (its first id is its message id: retries are stored once) and returns the verdict of the
   * partition's copies, which apply it in log order. One whose key is not above its tenant's last key (another
   * front's write with a later key came first in the log) is stored by every copy alike re-keyed just above that
   * key: so keys rise in log order and live tails miss nothing, and the front computes the same ids.
   */
  private async send(m: WriteMessage): Promise<Keyed> {
    const p = partitionOf(m.ws, this.partitions);
    const ids = m.prepared ? m.prepared.ids : (m.entries ?? []).map((e) => e.id);
    const seq = await this.link.publish(p, encodeWrite(m), ids[0]);
    const v = await this.verdict(p, seq);
    return { stored: v.stored, used: v.used, ...(v.after ? { rekeyed: IdGenerator.above(v.after.id, ids) } : {}) };
  }

  /** verdict waits for the first copy's verdict of a partition's sequence. */
  private verdict(p: number, seq: number): Promise<VerdictMessage> {
    const name = `${p}/${seq}`;
    const known = this.heard.get(name);
    if (known) {
      this.heard.delete(name);
      return Promise.resolve(known);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(name);
        reject(busy("the write is in the log but no copy of its partition has applied it yet; check `sluice cluster status`"));
      }, this.verdictTimeoutMs);
      this.waiting.set(name, (v) => {
        clearTimeout(timer);
        resolve(v);
      });
    });
  }
}

const busy = (message: string) => new ApiError(503, "INTERNAL_LOG_SERVICE_ERROR", message, undefined, { "retry-after": "5" });
