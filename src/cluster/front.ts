// front: the write side of a cluster node. An accepted write is published to its workspace's partition stream and
// answered once JetStream has acknowledged it; a write under a monthly limit waits for the verdict that the
// partition's copies reach applying the stream in order, so the quota is exact however many fronts race.
import { ApiError } from "../errors.ts";
import type { WriteSink } from "../ingest/ingest.ts";
import type { Entry } from "../storage/block.ts";
import type { Verdict } from "../storage/commit.ts";
import type { EncodedBlock } from "../storage/encode.ts";
import type { Tenant } from "../storage/keys.ts";
import type { Link } from "./link.ts";
import { encodeWrite, unpack, type VerdictMessage, type WriteMessage } from "./message.ts";
import { partitionOf, VERDICTS } from "./names.ts";

/** verdicts kept after they arrive, for a front that hears one before its own acknowledgement */
const VERDICTS_KEPT = 20_000;

/** ClusterSink is the WriteSink of a front: the partition streams instead of a local entry store. */
export class ClusterSink implements WriteSink {
  private readonly heard = new Map<string, Verdict>();
  private readonly waiting = new Map<string, (v: Verdict) => void>();

  constructor(
    private readonly link: Link,
    private readonly partitions: number,
    /** how long a quota'd write waits for a copy's verdict before 503 */
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
          waiter({ stored: v.stored, used: v.used });
        } else if (!this.heard.has(name)) {
          this.heard.set(name, { stored: v.stored, used: v.used });
          if (this.heard.size > VERDICTS_KEPT) this.heard.delete(this.heard.keys().next().value!);
        }
      }
    })();
  }

  append(tenant: Tenant, serverMs: number, entries: Entry[], monthlyLimit: number): Promise<Verdict> {
    return this.send({ ws: tenant.ws, env: tenant.env, ms: serverMs, limit: monthlyLimit, entries }, entries[0].id);
  }

  appendPrepared(tenant: Tenant, serverMs: number, ids: string[], blocks: EncodedBlock[], monthlyLimit: number): Promise<Verdict> {
    return this.send({ ws: tenant.ws, env: tenant.env, ms: serverMs, limit: monthlyLimit, prepared: { ids, blocks } }, ids[0]);
  }

  /** send publishes a write (its first id is its message id: retries are stored once) and returns its verdict. */
  private async send(m: WriteMessage, firstId: string): Promise<Verdict> {
    const p = partitionOf(m.ws, this.partitions);
    const seq = await this.link.publish(p, encodeWrite(m), firstId);
    if (m.limit < 0) return { stored: true, used: 0 }; // no limit: every copy stores it
    const name = `${p}/${seq}`;
    const known = this.heard.get(name);
    if (known) {
      this.heard.delete(name);
      return known;
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(name);
        reject(
          new ApiError(
            503,
            "INTERNAL_LOG_SERVICE_ERROR",
            "the write is in the log but no copy of its partition has applied it yet; check `sluice cluster status`",
            undefined,
            {
              "retry-after": "5",
            },
          ),
        );
      }, this.verdictTimeoutMs);
      this.waiting.set(name, (v) => {
        clearTimeout(timer);
        resolve(v);
      });
    });
  }
}
