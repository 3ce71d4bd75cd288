// stats: what each workspace environment stores, for the storage report (contract §15), in the `stats` database.
//
// Key layout: [workspaceId, environment] → [entries, raw bytes without the environment's name, block bytes].
// Counts are put in the same transaction as the blocks they count (commit.ts) and taken off in the one that deletes
// them (retention), so they always equal what the blocks hold. This process is their only writer: it keeps them in
// memory, committed or in flight, and puts the running figure.
import type { Database } from "lmdb";
import type { Environment } from "../schema.ts";

/** TenantStats are one workspace environment's stored entries, their raw JSON without the environment's name, and their blocks' bytes. */
export interface TenantStats {
  ws: string;
  env: Environment;
  entries: number;
  raw: number;
  blockBytes: number;
}

type Figures = [entries: number, raw: number, blockBytes: number];

export class StatsStore {
  private readonly figures = new Map<string, Figures>();
  constructor(readonly db: Database) {}

  private of(ws: string, env: Environment): Figures {
    const name = `${ws}\u0000${env}`;
    let f = this.figures.get(name);
    if (!f) this.figures.set(name, (f = [...((this.db.get([ws, env]) as Figures | undefined) ?? [0, 0, 0])] as Figures));
    return f;
  }

  /** add counts a block in (or, with negative figures, out of) a tenant's figures, in memory; `put` stores them. */
  add(ws: string, env: Environment, entries: number, raw: number, blockBytes: number): void {
    const f = this.of(ws, env);
    f[0] += entries;
    f[1] += raw;
    f[2] += blockBytes;
  }

  /** put queues a tenant's figures: issue it with the blocks' puts, in the same event turn, so they commit together. */
  put(ws: string, env: Environment): Promise<unknown> {
    return this.db.put([ws, env], this.of(ws, env));
  }

  /** putSync stores a tenant's figures inside a synchronous transaction (retention, a rebuild). */
  putSync(ws: string, env: Environment): void {
    this.db.putSync([ws, env], this.of(ws, env));
  }

  /** all lists every tenant's committed figures. */
  all(): TenantStats[] {
    const out: TenantStats[] = [];
    for (const { key, value } of this.db.getRange({ snapshot: false })) {
      const [ws, env] = key as [string, Environment];
      const [entries, raw, blockBytes] = value as Figures;
      out.push({ ws, env, entries, raw, blockBytes });
    }
    return out;
  }
}
