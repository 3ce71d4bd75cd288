// compose: the one composition root. A data directory and the options of a run become Sluice's parts: storage, the
// services the routes share and the app. The server, the CLI, the test helper and the benches all build through here.
import { AdminService } from "./admin/service.ts";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "lmdb";
import { buildApp, services, type AppDeps } from "./app.ts";
import type { PlanTable } from "./limits/plans.ts";
import { openDatabases } from "./storage/db.ts";
import { keepMappedPagesBounded } from "./storage/resident.ts";
import { MetaStore } from "./storage/records/meta.ts";
import { allocatedBytes, storageReport, type StorageReport } from "./storage/report.ts";
import { StatsStore } from "./storage/stats.ts";

/** SluiceOptions are what a run decides: the data directory, the plans, and the app's settings (AppDeps). */
export interface SluiceOptions extends Omit<AppDeps, "dbs"> {
  dataDir: string;
  /** where storage reports at open (an index layout upgrade); default: JSON lines on stderr */
  storageLog?: (line: Record<string, unknown>) => void;
  /** the meta database to use instead of the data directory's own (cluster: the node's mirror of the shared bucket) */
  meta?: Database;
  /** the alerts database to use instead of the data directory's own (cluster: the node's mirror of the alerts bucket) */
  alerts?: Database;
  /** the address space LMDB maps at first (default 1 TiB): a process holding many environments, as a cluster test does, maps less */
  mapBytes?: number;
}

/** compose opens the data directory and builds every part; close() stores what is held and closes storage. */
export function compose(options: SluiceOptions) {
  const opened = openDatabases(options.dataDir, options.storageLog, options.mapBytes);
  keepMappedPagesBounded(); // LMDB pages read once would otherwise stay in the RSS, growing with the data
  const dbs = { ...opened, ...(options.meta ? { meta: options.meta } : {}), ...(options.alerts ? { alerts: options.alerts } : {}) };
  const deps: AppDeps = { ...options, dbs };
  const parts = services(deps);
  let closing: Promise<void> | undefined;
  return {
    ...parts,
    dbs,
    app: buildApp(deps, parts),
    /** close ends what a clean stop waits for (full-text segments, held postings), closes storage and ends the worker threads */
    close(): Promise<void> {
      // a second call waits for the first: nothing is written once storage is closing
      closing ??= (async () => {
        parts.tails.closeAll(); // open tails would hold a clean stop forever
        await parts.evaluator.stop(); // an evaluation under way stores its outcome before storage closes
        await parts.deliverer.stop();
        await parts.entries.settled();
        // count rules' cells for the next start; failing to save them costs that start a whole count, not the stop
        await parts.evaluator.saveCells().catch((e) => console.error(JSON.stringify({ level: "warn", msg: "alert counts not saved", error: String(e) })));
        await dbs.root.flushed;
        await dbs.root.close();
        await parts.entries.close();
        await parts.ingest.close();
      })();
      return closing;
    },
  };
}

/** storageOf reports what a data directory's storage costs (sluice storage), read beside a running server or without one. */
export async function storageOf(dataDir: string): Promise<StorageReport> {
  const dbs = openDatabases(dataDir);
  try {
    return storageReport(new StatsStore(dbs.stats).all(), allocatedBytes(dataDir));
  } finally {
    await dbs.root.close();
  }
}

/**
 * compactInto writes a compacted copy of a data directory into toDir (new or empty), beside a running server or without
 * one: the pages that retention freed are left out. The copy is a data directory of its own, to put in place of the
 * original while the server is stopped. It returns both allocated sizes.
 */
export async function compactInto(dataDir: string, toDir: string): Promise<{ before: number; after: number }> {
  mkdirSync(toDir, { recursive: true });
  if (readdirSync(toDir).length > 0) throw new Error(`${toDir} is not empty: give a new or empty directory for the compacted copy`);
  const dbs = openDatabases(dataDir);
  try {
    await dbs.root.backup(join(toDir, "sluice.mdb"), true);
  } finally {
    await dbs.root.close();
  }
  return { before: allocatedBytes(dataDir), after: allocatedBytes(toDir) };
}

/** composeAdmin opens only what the workspaces and keys commands need: no entry store, so no index work beside a running server. */
export function composeAdmin(dataDir: string, plans: PlanTable) {
  const dbs = openDatabases(dataDir);
  return { admin: new AdminService(new MetaStore(dbs.meta), plans), close: () => dbs.root.close() };
}
