// threads: where a bulk ingest spends its CPU. It drives the server as ingest.ts does and reads, from /proc,
// the CPU each of the server's threads used, its kernel part, and how busy the machine was: "bun.exe" is the main
// thread, the first "Worker" (lower id) the full-text worker, the next the ingest worker (it starts with the first
// large body), "Bun Pool" LMDB's write and sync threads. Linux only; not part of `npm run bench`.
// BENCH_ENTRIES sets the total (default 1,000,000).
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSluice } from "./servers.ts";
import { BATCH, bodies, drive } from "./ingest.ts";

const TOTAL = Number(process.env.BENCH_ENTRIES ?? 1_000_000);
const TICKS = 100; // clock ticks per second in /proc (USER_HZ)

/** threadTicks reads each thread's [user + system, system] clock ticks. */
function threadTicks(pid: number): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(`${tid} ${name}`, [Number(f[11]) + Number(f[12]), Number(f[12])]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** machineTicks reads the machine's [all, idle + iowait, system] ticks. */
function machineTicks(): [number, number, number] {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  return [f.reduce((a, b) => a + b, 0), f[3] + f[4], f[2]];
}

const payloads = bodies(TOTAL);
const warmUp = bodies(20 * BATCH, payloads.length); // bodies of their own
const dir = mkdtempSync(join(tmpdir(), "sluice-bench-threads-"));
const sluice = await startSluice(dir, { SLUICE_IP_RATE_PER_MIN: "-1", SLUICE_ACCESS_LOG: "off" });
try {
  const { key } = sluice;
  const url = `${sluice.base}/api/v1/workspace/logs/bulk`;
  await drive(url, { "x-api-key": key }, warmUp, 20 * BATCH); // warm up: workers started, code compiled
  const before = threadTicks(sluice.proc.pid);
  const machine = machineTicks();
  const client = process.cpuUsage();
  const t0 = performance.now();
  const rate = await drive(url, { "x-api-key": key }, payloads, TOTAL);
  const secs = (performance.now() - t0) / 1000;
  const after = threadTicks(sluice.proc.pid);
  const [all, idle, system] = machineTicks().map((v, i) => v - machine[i]);
  const used = process.cpuUsage(client);

  const pct = (ticks: number) => (100 * ticks) / TICKS / secs;
  let total = 0;
  console.log(`bulk ingest, ${TOTAL.toLocaleString("en-US")} entries: ${Math.round(rate).toLocaleString("en-US")} entries/s`);
  console.log(`machine busy ${((100 * (all - idle)) / all).toFixed(1)}% of its cores, kernel ${((100 * system) / all).toFixed(1)}%`);
  console.log("thread                       % of a core   of it, kernel");
  const rows = [...after].map(([name, [cpu, sys]]) => [name, cpu - (before.get(name)?.[0] ?? 0), sys - (before.get(name)?.[1] ?? 0)] as const);
  for (const [name, cpu, sys] of rows.sort((a, b) => b[1] - a[1])) {
    total += cpu;
    if (pct(cpu) >= 1) console.log(`${name.padEnd(28)} ${pct(cpu).toFixed(1).padStart(11)} ${pct(sys).toFixed(1).padStart(15)}`);
  }
  console.log(
    `server: ${pct(total).toFixed(1)}% of a core, ${((pct(total) / 100 / rate) * 1e6).toFixed(1)} µs of CPU an entry; client: ${((100 * (used.user + used.system)) / 1e6 / secs).toFixed(1)}%`,
  );
} finally {
  sluice.proc.kill("SIGTERM");
  await sluice.exited;
  rmSync(dir, { recursive: true, force: true });
}
