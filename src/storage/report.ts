// report: what storage costs, per workspace environment and in total (contract §15, GET /api/v1/admin/storage).
// A tenant's disk bytes are its blocks' bytes plus a share of everything else in the data directory (indexes, LMDB's
// pages and free space, meta) spread by entries, so the environments add up to the directory's allocated size.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Environment } from "../schema.ts";
import type { TenantStats } from "./stats.ts";

/** StorageFigures are entries, their raw JSON as GET /logs/{id} returns it, the disk they take, and the one over the other. */
export interface StorageFigures {
  entries: number;
  raw_bytes: number;
  disk_bytes: number;
  ratio: number;
}

export interface StorageReport {
  total: StorageFigures;
  data_dir_bytes: number;
  environments: (StorageFigures & { workspace_id: string; environment: Environment })[];
}

/** allocatedBytes is the allocated size of a directory's files (holes excluded), as `du` counts it. */
export function allocatedBytes(dir: string): number {
  let n = 0;
  for (const f of readdirSync(dir, { withFileTypes: true })) if (f.isFile()) n += statSync(join(dir, f.name)).blocks * 512;
  return n;
}

const ratio = (disk: number, raw: number) => (raw === 0 ? 0 : Math.round((disk / raw) * 10_000) / 10_000);

/** storageReport spreads a data directory's allocated bytes over the tenants' stats. */
export function storageReport(stats: readonly TenantStats[], dataDirBytes: number): StorageReport {
  const tenants = stats.filter((t) => t.entries > 0);
  const entries = tenants.reduce((n, t) => n + t.entries, 0);
  const blockBytes = tenants.reduce((n, t) => n + t.blockBytes, 0);
  const shared = Math.max(0, dataDirBytes - blockBytes);
  let spread = 0;
  const environments = tenants.map((t, k) => {
    // the last takes what rounding left, so the environments add up to the directory exactly
    const share = k === tenants.length - 1 ? shared - spread : Math.floor((shared * t.entries) / entries);
    spread += share;
    const raw = t.raw + t.env.length * t.entries; // each entry's JSON names its environment
    const disk = t.blockBytes + share;
    return { workspace_id: t.ws, environment: t.env, entries: t.entries, raw_bytes: raw, disk_bytes: disk, ratio: ratio(disk, raw) };
  });
  const raw = environments.reduce((n, e) => n + e.raw_bytes, 0);
  const disk = entries === 0 ? dataDirBytes : environments.reduce((n, e) => n + e.disk_bytes, 0);
  return { total: { entries, raw_bytes: raw, disk_bytes: disk, ratio: ratio(disk, raw) }, data_dir_bytes: dataDirBytes, environments };
}
