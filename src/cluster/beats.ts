// beats: what each live node says of itself in the nodes bucket every NODE_BEAT_MS (its roles, how far each of its
// copies has applied, its HTTP address), and what this node last read of every live node's beat.
import type { Role } from "../config.ts";
import type { Link } from "./link.ts";

interface Beat {
  roles?: string[];
  applied?: Record<string, number>;
  at?: number;
  address?: string;
}

/** Beats sends this node's beat and keeps what it last read of the live nodes' beats. */
export class Beats {
  /** which partitions each live node holds a copy of */
  private holding = new Map<string, Set<number>>();
  /** each live node's HTTP address (peers send reads straight there: peer.ts) */
  private addresses = new Map<string, string>();
  /** this node's HTTP address for its peers, once it listens */
  address: string | undefined;

  constructor(
    private readonly link: Link,
    private readonly nodeId: string,
    private readonly roles: Role[],
    /** the sequence each of this node's copies has applied, by partition */
    private readonly held: () => Record<number, number>,
  ) {}

  /** send puts this node's beat, then reads every live node's; it resolves with how many live nodes are fronts. */
  async send(): Promise<number> {
    const beat: Beat = { roles: this.roles, applied: this.held(), at: Date.now(), address: this.address };
    await this.link.nodes.put(this.nodeId, JSON.stringify(beat));
    return this.read();
  }

  /** read reads every live node's last beat (kept); it resolves with how many live nodes are fronts. */
  async read(): Promise<number> {
    const fronts = new Set<string>();
    const holding = new Map<string, Set<number>>();
    const addresses = new Map<string, string>();
    for (const [id, e] of await this.link.beats()) {
      const beat = e.json<Beat>();
      if ((beat.roles ?? []).includes("front")) fronts.add(id);
      holding.set(id, new Set(Object.keys(beat.applied ?? {}).map(Number)));
      if (typeof beat.address === "string") addresses.set(id, beat.address);
    }
    this.holding = holding;
    this.addresses = addresses;
    return fronts.size;
  }

  /** holds tells whether node `id`'s last beat read says it holds a copy of partition p. */
  holds(id: string, p: number): boolean {
    return this.holding.get(id)?.has(p) ?? false;
  }

  /** holders lists the live nodes whose last beat read says they hold a copy of partition p. */
  holders(p: number): string[] {
    return [...this.holding].filter(([, held]) => held.has(p)).map(([id]) => id);
  }

  /** peerUrl is the address of another node whose last beat read says it holds a copy of partition p (one at random), if any. */
  peerUrl(p: number): string | undefined {
    const holders = [...this.addresses].filter(([id]) => id !== this.nodeId && this.holds(id, p));
    return holders.length === 0 ? undefined : holders[Math.floor(Math.random() * holders.length)][1];
  }
}
