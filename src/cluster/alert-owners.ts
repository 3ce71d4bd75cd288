// alert-owners: which live node evaluates the alert rules of a partition's workspaces and sends their notices
// (contract §16: each rule is evaluated by exactly one live node). Every node picks, from the same beats, the holder
// of a copy of the partition with the highest hash of (partition, node): no election, and few moves when nodes come or
// go. A node acts as the owner only once it has been the pick for HOLD_MS, two beats and more, so the node it takes
// over from has read the same beats and stopped; a node killed is replaced once its beat expires.
import { fnv1a, NODE_BEAT_MS } from "./names.ts";

/** how long a node must have been a partition's pick before it evaluates: past two beat reads of every other node */
export const HOLD_MS = 2 * NODE_BEAT_MS + 500;

/** AlertOwners follows which partitions' alert rules this node owns. */
export class AlertOwners {
  /** since when this node has been each partition's pick */
  private readonly since = new Map<number, number>();

  constructor(
    private readonly nodeId: string,
    private readonly partitions: number,
    /** the live nodes holding a copy of partition p, as the last beats read say */
    private readonly holders: (p: number) => string[],
    private readonly clock: () => number = Date.now,
  ) {}

  /** pickOf is the node the beats name as partition p's owner, if any node holds a copy of it. */
  pickOf(p: number): string | undefined {
    let best: string | undefined;
    for (const id of this.holders(p)) {
      const score = fnv1a(`alerts/${p}/${id}`);
      if (best === undefined || score > fnv1a(`alerts/${p}/${best}`) || (score === fnv1a(`alerts/${p}/${best}`) && id < best)) best = id;
    }
    return best;
  }

  /** update reads the picks again after a beat: a partition this node stops being the pick of is let go at once. */
  update(): void {
    const now = this.clock();
    for (let p = 0; p < this.partitions; p++) {
      if (this.pickOf(p) === this.nodeId) {
        if (!this.since.has(p)) this.since.set(p, now);
      } else this.since.delete(p);
    }
  }

  /** owns tells whether this node evaluates partition p's alert rules now. */
  owns(p: number): boolean {
    const since = this.since.get(p);
    return since !== undefined && this.clock() - since >= HOLD_MS;
  }

  /** release lets every partition go (the node stops). */
  release(): void {
    this.since.clear();
  }
}
