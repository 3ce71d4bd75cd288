// retention: the background sweeper that deletes entries older than each workspace plan's retention (contract §8).
// Reads never return such entries anyway (query/page.ts); the sweep gives their space back for reuse.
import { ENVIRONMENTS } from "../schema.ts";
import type { EntryStore } from "./entries.ts";
import type { MetaStore, WorkspaceRecord } from "./records/meta.ts";

/** RetentionFloor is the oldest server time a workspace may keep entries of at an instant; -Infinity keeps them all. */
export type RetentionFloor = (workspace: WorkspaceRecord, nowMs: number) => number;

const BLOCKS_PER_BATCH = 64; // one short write transaction at a time, so ingestion interleaves

/** RetentionSweeper runs sweeps, one at a time. */
export class RetentionSweeper {
  private running: Promise<number> | undefined;

  constructor(
    private readonly entries: EntryStore,
    private readonly meta: MetaStore,
    private readonly floorOf: RetentionFloor,
    private readonly clock: () => number = Date.now,
  ) {}

  /** sweep deletes every expired entry of every workspace and returns how many; concurrent calls share one sweep. */
  sweep(): Promise<number> {
    return (this.running ??= this.sweepAll().finally(() => (this.running = undefined)));
  }

  /** idle resolves once no sweep is under way. */
  async idle(): Promise<void> {
    await this.running?.catch(() => 0);
  }

  private async sweepAll(): Promise<number> {
    let deleted = 0;
    for (const ws of this.meta.workspaces()) {
      const floor = this.floorOf(ws, this.clock());
      if (!Number.isFinite(floor)) continue;
      for (const env of ENVIRONMENTS) {
        for (let n: number; (n = await this.entries.deleteBefore({ ws: ws.id, env }, floor, BLOCKS_PER_BATCH)) > 0; ) deleted += n;
      }
    }
    return deleted;
  }
}
