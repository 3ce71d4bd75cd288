// floor bench: how much of each ceiling the design Sluice keeps (Elysia, LMDB, FlexSearch, 201 after a durable
// commit) leaves before any of Sluice's own work. Not in `npm run bench`: run `npm run bench:floor`.
// Single POSTs under `wrk -t2 -c32` (needs wrk): the bare echo, floor-server.ts as `single` and `single-elysia`,
// and Sluice. Bulk bodies as ingest.ts sends them: the bare parse, floor-server.ts as `bulk` and `bulk-fulltext`,
// and Sluice. Servers take turns, FLOOR_ROUNDS rounds (default 5); each figure is the median of its rounds, and
// each share of the ceiling is taken within a round, then the median of those (the ceiling drifts the most).
// BENCH_SINGLE_SECONDS sets a single run's length (default 10), FLOOR_ENTRIES a bulk run's (default 300,000).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { syntheticEntry } from "./data.ts";
import { BATCH, bodies, drive } from "./ingest.ts";
import { median, startBare, startSluice } from "./servers.ts";
import { wrk } from "./single.ts";

const ROUNDS = Number(process.env.FLOOR_ROUNDS ?? 5);
const ENTRIES = Number(process.env.FLOOR_ENTRIES ?? 300_000);

interface Server {
  name: string;
  url: string;
  headers: Record<string, string>;
  stop: () => Promise<unknown>;
  runs: number[];
}

/** bare starts one of the bench's own servers (startBare) as a contestant. */
async function bare(name: string, file: string, env: Record<string, string> = {}): Promise<Server> {
  const { proc, url } = await startBare(file, env);
  return {
    name,
    url,
    headers: {},
    stop: () => {
      proc.kill("SIGTERM");
      return proc.exited;
    },
    runs: [],
  };
}

/** sluice starts Sluice as the other benches do, on a fresh data directory, as a contestant at `path`. */
async function sluice(dir: string, path: string): Promise<Server & { key: string; base: string }> {
  const s = await startSluice(mkdtempSync(join(dir, "sluice-")), { SLUICE_IP_RATE_PER_MIN: "-1" }); // one client address: no per-IP guard
  return {
    name: "Sluice",
    url: `${s.base}${path}`,
    base: s.base,
    key: s.key,
    headers: { "x-api-key": s.key },
    stop: () => {
      s.proc.kill("SIGTERM");
      return s.exited;
    },
    runs: [],
  };
}

/** turns runs every server once a round, in order, keeping each run's figure in its runs. */
async function turns(servers: Server[], run: (s: Server) => Promise<number>): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) for (const s of servers) s.runs.push(await run(s));
}

/** table gives each server's median and its share of the ceiling (the first server) round by round: the machine's speed drifts between rounds, and the ceiling moves most. */
function table(title: string, unit: string, servers: Server[]): string {
  const ceiling = servers[0].runs;
  const f = (n: number) => Math.round(n).toLocaleString("en-US");
  const pct = (n: number) => `${(100 * n).toFixed(1)}%`;
  const lines = [`${title}\n`, `| server | ${unit} (median) | of the ceiling in the same round: median (range) | rounds |`, "|---|---|---|---|"];
  for (const s of servers) {
    const shares = s.runs.map((r, i) => r / ceiling[i]);
    lines.push(
      `| ${s.name} | ${f(median(s.runs))} | ${pct(median(shares))} (${pct(Math.min(...shares))}–${pct(Math.max(...shares))}) | ${s.runs.map(f).join(", ")} |`,
    );
  }
  return lines.join("\n");
}

export async function benchFloor(): Promise<string> {
  if (Bun.spawnSync(["which", "wrk"]).exitCode !== 0) throw new Error("wrk is not installed: apt-get install wrk");
  const dir = mkdtempSync(join(tmpdir(), "sluice-bench-floor-"));
  const out: string[] = [];
  try {
    const body = JSON.stringify(syntheticEntry(42));
    const single = [
      await bare("bare echo (the ceiling)", "echo-server.ts"),
      await bare("floor: parse, one durable put", "floor-server.ts", { FLOOR: "single" }),
      await bare("floor: the same in an Elysia route", "floor-server.ts", { FLOOR: "single-elysia" }),
      await sluice(dir, "/api/v1/workspace/logs"),
    ];
    await turns(single, async (s) => {
      const r = await wrk(s.url, body, s.headers, dir);
      if (r.non2xx > 0) throw new Error(`BUG: ${s.name} answered ${r.non2xx} requests with other than 201`);
      return r.rps;
    });
    for (const s of single) await s.stop();
    out.push(table("Single-entry POST, wrk -t2 -c32", "req/s", single));

    const payloads = Array.from({ length: ROUNDS }, (_, round) => bodies(ENTRIES, round * Math.ceil(ENTRIES / BATCH))); // a round its own entries
    const sl = await sluice(dir, "/api/v1/workspace/logs/bulk");
    const bulk = [
      await bare("bare parse (the ceiling)", "baseline-server.ts"),
      await bare("floor: parse, one durable put of the body", "floor-server.ts", { FLOOR: "bulk" }),
      await bare("floor: the same, and the words to the full-text index", "floor-server.ts", { FLOOR: "bulk-fulltext" }),
      sl,
    ];
    await turns(bulk, (s) => drive(s.url, s.headers, payloads[s.runs.length], ENTRIES));
    const usage = (await (await fetch(`${sl.base}/api/v1/workspace/usage`, { headers: { "x-api-key": sl.key } })).json()) as { used: number };
    const sent = ROUNDS * Math.ceil(ENTRIES / BATCH) * BATCH;
    if (usage.used !== sent) throw new Error(`BUG: Sluice stored ${usage.used} entries, expected ${sent}`);
    for (const s of bulk) await s.stop();
    out.push(table(`Bulk ingest, ${ENTRIES.toLocaleString("en-US")} entries a run, bodies of ${BATCH}`, "entries/s", bulk));
    return out.join("\n\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(await benchFloor());
