// storage bench: what a data set costs on disk, divided by its raw JSON (each entry as GET /logs/{id} returns it).
// Each data set is written through the app into a fresh data directory, in bulk requests of 1,000 distinct entries (as
// fast as they are stored, or a bulk every 10 s of the server's clock) or one entry a request; the server is stopped
// cleanly, and the directory's allocated size is read, with each LMDB database's share. Sets written one a request are measured twice in the same run: as stored without the background
// merge, the baseline, and with it merging small blocks into parts while they are written (storage/merge/merge.ts).
// BENCH_STORAGE_ENTRIES sets the bulk sets' count (default 200,000), BENCH_STORAGE_SINGLE the others' (default 20,000);
// BENCH_STORAGE_SETS=mix,as logged measures only the sets whose names contain one of its comma-separated words;
// BENCH_STORAGE_ZSTD=0 leaves out the zstd -19 column.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { compose } from "../src/compose.ts";
import { BUILT_IN_PLANS, PlanTable } from "../src/limits/plans.ts";
import { hasLoghub, loghubEntries, loghubLike, syntheticEntry } from "./data.ts";

const N = Number(process.env.BENCH_STORAGE_ENTRIES ?? 200_000);
const SINGLE = Number(process.env.BENCH_STORAGE_SINGLE ?? 20_000);
const ONLY = process.env.BENCH_STORAGE_SETS?.split(",").map((w) => w.trim());
/** BENCH_STORAGE_ZSTD=0 leaves out zstd -19 of the raw JSON, which takes most of a run of 10M entries. */
const ZSTD = process.env.BENCH_STORAGE_ZSTD !== "0";
const DATABASES = [
  "entries",
  "parts",
  "postings",
  "unindexed",
  "dictionary",
  "fulltext",
  "filters",
  "filtersHeld",
  "meta",
  "usage",
  "layout",
  "stats",
  "bounds",
];

/** allocated is a directory's files' allocated size in bytes (what the disk gives them, holes excluded). */
export function allocated(dir: string): number {
  return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).blocks * 512, 0);
}

interface Measured {
  name: string;
  entries: number;
  rawBytes: number;
  diskBytes: number;
  perDb: Record<string, number>;
  ingestPerSecond: number;
  /** the raw JSON, one entry a line, zstd'd at level 19 in chunks of 1 MiB: what a general compressor does alone */
  zstdBytes: number;
}

/** How a set is written: entries a request, and whether the background merge runs while they are written. */
interface Writing {
  batch: number;
  merge: boolean;
  /** the server's clock moves this far a request (unset: it is the real one, and bulks come as fast as they are stored) */
  stepMs?: number;
}

/** measure writes `entries` through a fresh app, reads them all back as JSON for their raw size, and stops cleanly. */
async function measure(name: string, count: number, entryAt: (i: number) => Record<string, unknown>, { batch, merge, stepMs }: Writing): Promise<Measured> {
  const dataDir = mkdtempSync(join(tmpdir(), "sluice-bench-storage-"));
  let now = Date.now();
  const clock = stepMs === undefined ? {} : { clock: () => now };
  const s = compose({ dataDir, plans: new PlanTable(BUILT_IN_PLANS), adminToken: undefined, ipRatePerMinute: 1e9, ...clock }); // one client, many requests
  const ws = await s.admin.createWorkspace({ name: "bench", plan: "unlimited" });
  const key = (await s.admin.createKey(ws.id, { environment: "production", type: "rw" })).key;
  const headers = { "X-API-Key": key, "Content-Type": "application/json" };
  // merged as a server merges, but sooner: a block is due a second after it is written, a run short of a part 2 s after its last
  if (merge) s.entries.startMerging({ ageMs: 1_000, idleMs: 2_000 });
  const started = performance.now();
  for (let at = 0; at < count; at += batch) {
    const body = batch === 1 ? JSON.stringify(entryAt(at)) : JSON.stringify(Array.from({ length: Math.min(batch, count - at) }, (_, k) => entryAt(at + k)));
    const res = await s.app.handle(new Request(`http://sluice/api/v1/workspace/logs${batch === 1 ? "" : "/bulk"}`, { method: "POST", headers, body }));
    if (res.status !== 201) throw new Error(`BUG: a write answered ${res.status}: ${await res.text()}`);
    now += stepMs ?? 0;
  }
  if (merge) await s.entries.merger.mergeTenant({ ws: ws.id, env: "production" }, { ageMs: 0, idleMs: 0 }); // the last runs, not yet due
  const ingestPerSecond = count / ((performance.now() - started) / 1000);
  let rawBytes = 0;
  let zstdBytes = 0;
  let chunk: string[] = [];
  let chunkBytes = 0;
  const flush = () => {
    if (ZSTD) zstdBytes += Bun.zstdCompressSync(Buffer.from(chunk.join("\n")), { level: 19 }).length;
    chunk = [];
    chunkBytes = 0;
  };
  let seen = 0;
  let cursor = "";
  for (;;) {
    const res = await s.app.handle(new Request(`http://sluice/api/v1/workspace/logs?pageSize=100${cursor}`, { headers }));
    const page = (await res.json()) as unknown[];
    for (const e of page) {
      const json = JSON.stringify(e);
      rawBytes += Buffer.byteLength(json);
      chunk.push(json);
      chunkBytes += json.length;
      if (chunkBytes >= 2 ** 20) flush();
    }
    seen += page.length;
    const id = res.headers.get("x-next-cursor-id");
    if (!id) break;
    cursor = `&cursorID=${id}&cursorTS=${encodeURIComponent(res.headers.get("x-next-cursor-ts")!)}`;
  }
  if (chunk.length > 0) flush();
  if (seen !== count) throw new Error(`BUG: ${count} entries written, ${seen} read back`);
  await s.close();
  const diskBytes = allocated(dataDir);
  const root = open({ path: join(dataDir, "sluice.mdb"), maxDbs: 16, readOnly: true });
  const perDb: Record<string, number> = {};
  for (const db of DATABASES) {
    const st = root.openDB({ name: db })?.getStats() as
      | { pageSize: number; treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number }
      | undefined; // a database never written is absent
    if (st) perDb[db] = (st.treeBranchPageCount + st.treeLeafPageCount + st.overflowPages) * st.pageSize;
  }
  await root.close();
  rmSync(dataDir, { recursive: true, force: true });
  return { name, entries: count, rawBytes, diskBytes, perDb, ingestPerSecond, zstdBytes };
}

const mb = (n: number) => (n / 2 ** 20).toFixed(1);

export async function benchStorage() {
  const bulk = { batch: 1000, merge: false };
  const single = { batch: 1, merge: false };
  const merged = { batch: 1, merge: true };
  const paced = { batch: 1000, merge: false, stepMs: 10_000 };
  const real = loghubEntries();
  const sets: [string, number, (i: number) => Record<string, unknown>, Writing][] = [
    ["standard mix (distinct), bulk", N, syntheticEntry, bulk],
    ["Loghub-style lines, bulk", N, loghubLike(), bulk],
    // a service sending a bulk every 10 s (100 entries a second): blocks far apart in server time, as most are
    ["standard mix, a bulk every 10 s", N, syntheticEntry, paced],
    ["Loghub-style lines, a bulk every 10 s", N, loghubLike(), paced],
    // the issue's own reference: real lines as their systems logged them, where values repeat as they do in a service's log
    [
      hasLoghub()
        ? `Loghub lines as logged (the data set's ${real.length.toLocaleString("en")}, in order), bulk`
        : "Loghub-style lines from built-in templates, bulk",
      real.length,
      (i) => real[i],
      bulk,
    ],
    ["standard mix, one a request", SINGLE, syntheticEntry, single],
    ["standard mix, one a request, merged", SINGLE, syntheticEntry, merged],
    ["Loghub-style lines, one a request", SINGLE, loghubLike(), single],
    ["Loghub-style lines, one a request, merged", SINGLE, loghubLike(), merged],
  ];
  console.log("| data set | entries | raw MB | disk MB | disk ÷ raw | zstd -19 ÷ raw | ingest entries/s | largest databases (MB) | free pages (MB) |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---|---:|");
  for (const [name, count, at, writing] of sets.filter(([name, count]) => count > 0 && (!ONLY || ONLY.some((w) => name.includes(w))))) {
    const m = await measure(name, count, at, writing);
    const top = Object.entries(m.perDb)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([db, n]) => `${db} ${mb(n)}`)
      .join(", ");
    const free = m.diskBytes - Object.values(m.perDb).reduce((a, b) => a + b, 0); // pages LMDB freed and keeps for reuse
    console.log(
      `| ${m.name} | ${m.entries.toLocaleString("en")} | ${mb(m.rawBytes)} | ${mb(m.diskBytes)} | ${(m.diskBytes / m.rawBytes).toFixed(3)} | ${ZSTD ? (m.zstdBytes / m.rawBytes).toFixed(3) : "—"} | ${Math.round(m.ingestPerSecond).toLocaleString("en")} | ${top} | ${mb(free)} |`,
    );
  }
}

if (import.meta.main) await benchStorage();
