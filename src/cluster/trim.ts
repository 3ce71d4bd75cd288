// trim: a partition stream keeps only what some copy may still need. A copy consumes from the sequence after the one
// it applied, and a new copy starts from a peer's backup, which carries a sequence at least the lowest any assigned
// copy has applied; reads and tails are served from the copies' LMDB, never from the stream. So a stream is purged
// below the lowest sequence every assigned copy has applied, and only of messages older than a window (longer than the
// fronts' deduplication window: a retried publish must still find its first attempt). A copy whose applied sequence
// is unknown (its node down or still copying a backup) holds the partition's trimming back altogether.
import type { Link } from "./link.ts";
import { streamOf, type ClusterSettings } from "./names.ts";
import { liveNodes } from "./status.ts";

/** how long a message stays in its stream at least, once applied everywhere (the dedup window is 2 minutes) */
export const TRIM_AFTER_MS = 10 * 60_000;
/** how often the node first in a partition's assignment trims its stream */
export const TRIM_EVERY_MS = 60_000;

/** Trimmed is what one pass did to a partition: the sequence below which it purged, or why it did not. */
export interface Trimmed {
  partition: number;
  purgedBelow?: number;
  held?: string;
}

/** StreamTrimmer trims the streams of the partitions whose assignment lists this node first. */
export class StreamTrimmer {
  /** each partition's last sequence as seen at each pass, oldest first: the sequence a message of a given age is at or below */
  private readonly seen = new Map<number, { at: number; last: number }[]>();

  constructor(
    private readonly link: Link,
    private readonly settings: ClusterSettings,
    private readonly nodeId: string,
    /** this node's copies and the sequence each has applied (exact, where a heartbeat is up to 3 s old) */
    private readonly ownApplied: () => Record<number, number>,
    private readonly afterMs = TRIM_AFTER_MS,
  ) {}

  /** trim runs one pass over the partitions this node trims. */
  async trim(now = Date.now()): Promise<Trimmed[]> {
    const assignment = await this.link.assignment(this.settings.partitions);
    const mine = assignment.flatMap((nodes, p) => (nodes[0] === this.nodeId ? [p] : []));
    if (mine.length === 0) return [];
    const nodes = await liveNodes(this.link);
    const own = this.ownApplied();
    const out: Trimmed[] = [];
    for (const p of mine) {
      const { first_seq: first, last_seq: last } = (await this.link.jsm.streams.info(streamOf(p))).state;
      const seen = this.seen.get(p) ?? [];
      this.seen.set(p, seen);
      seen.push({ at: now, last });
      while (seen.length > 1 && seen[1].at <= now - this.afterMs) seen.shift();
      if (seen[0].at > now - this.afterMs) {
        out.push({ partition: p, held: "no message is old enough yet" });
        continue;
      }
      let upTo = seen[0].last;
      for (const id of assignment[p]) {
        const applied = id === this.nodeId ? own[p] : nodes.find((n) => n.id === id)?.applied[p];
        if (applied === undefined) {
          upTo = -1;
          out.push({ partition: p, held: `the copy on node ${id} is unknown (its node is down or copying a backup)` });
          break;
        }
        upTo = Math.min(upTo, applied);
      }
      if (upTo < 0) continue;
      if (upTo + 1 <= first) {
        out.push({ partition: p, held: "nothing below what every copy applied is left" });
        continue;
      }
      await this.link.jsm.streams.purge(streamOf(p), { seq: upTo + 1 });
      out.push({ partition: p, purgedBelow: upTo + 1 });
    }
    return out;
  }
}
