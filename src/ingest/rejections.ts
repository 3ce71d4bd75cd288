// rejections: the last entries each workspace environment's shippers had refused (contract §11), newest first, kept in
// memory: they help a sender fix its mapping now, and a restart starts the list afresh.
import type { Protocol, Rejection } from "./shipped.ts";
import { formatMs } from "../time.ts";

/** RejectedEntry is one line of GET /ingest/rejections. */
export interface RejectedEntry {
  at: string;
  protocol: Protocol;
  reason: string;
  field: string;
  sample: string;
}

const KEPT = 100; // per workspace environment
const TENANTS_MAX = 10_000; // lists kept at most; past that the longest unused goes

/** RejectedBatch is one request's rejected entries, as a cluster front sends them to its partition's copies. */
export interface RejectedBatch {
  ws: string;
  env: string;
  protocol: Protocol;
  rejected: readonly Rejection[];
  ms: number;
}

/** RejectionLog keeps the last KEPT rejected entries per workspace and environment. */
export class RejectionLog {
  private readonly lists = new Map<string, RejectedEntry[]>();

  /** forward: (cluster front) where rejections go instead of this list: the partition's log, whose copies list them */
  constructor(private readonly forward?: (batch: RejectedBatch) => Promise<void>) {}

  /** note lists a request's rejected entries here, or forwards them; resolves once a read started after it would list them. */
  async note(ws: string, env: string, protocol: Protocol, rejected: readonly Rejection[], ms: number): Promise<void> {
    if (rejected.length === 0) return;
    if (this.forward) await this.forward({ ws, env, protocol, rejected, ms });
    else this.record(ws, env, protocol, rejected, ms);
  }

  /** record adds a request's rejected entries, in request order, at `ms`. */
  record(ws: string, env: string, protocol: Protocol, rejected: readonly Rejection[], ms: number): void {
    if (rejected.length === 0) return;
    const key = `${ws}\u0000${env}`;
    const list = this.lists.get(key) ?? [];
    this.lists.delete(key); // re-inserted last: the map's order is use order
    const at = formatMs(ms);
    for (const r of rejected.slice(-KEPT)) list.push({ at, protocol, reason: r.reason, field: r.field, sample: r.sample });
    if (list.length > KEPT) list.splice(0, list.length - KEPT);
    this.lists.set(key, list);
    if (this.lists.size > TENANTS_MAX) this.lists.delete(this.lists.keys().next().value!);
  }

  /** list is the kept entries of a workspace environment, newest first. */
  list(ws: string, env: string): RejectedEntry[] {
    return [...(this.lists.get(`${ws}\u0000${env}`) ?? [])].reverse();
  }
}
