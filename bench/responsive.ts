// responsive bench: a slow query must not hold every other request. 1M entries over HTTP into one Sluice, then
// GET /healthz and single POST /logs, each sent at a fixed rate whatever the answers do, timed twice: idle (the
// baseline) and while a loop of full-scan queries runs (message~"zz-no-such-thing" matches nothing, so it reads
// every entry). Checks every answer (scans 200 and empty, writes 201, the stored count) and that the p99 during
// the scans is within 50 ms. BENCH_RESPONSIVE_ENTRIES (default 1,000,000), BENCH_RESPONSIVE_SECONDS (default 10
// a phase), BENCH_RESPONSIVE_RATE (default 50 requests a second of each kind).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { syntheticEntry } from "./data.ts";
import { BATCH, bodies, drive } from "./ingest.ts";
import { median, quiet, startSluice, type SluiceServer } from "./servers.ts";

const TOTAL = Number(process.env.BENCH_RESPONSIVE_ENTRIES ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_RESPONSIVE_SECONDS ?? 10);
const RATE = Number(process.env.BENCH_RESPONSIVE_RATE ?? 50);
const TARGET_P99_MS = 50;
const SCANS_ALONE = 5;
const FULL_SCAN = { query: 'message~"zz-no-such-thing"' }; // no block test applies (no run of 3 ASCII non-letters): every message is read
const SERVER_ENV = { SLUICE_IP_RATE_PER_MIN: "-1", SLUICE_ACCESS_LOG: "off" }; // one client address; the log lines are not the point

/** Latencies are one kind of request's times in ms, with their p50 and p99. */
interface Latencies {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

function summary(times: number[]): Latencies {
  const v = [...times].sort((a, b) => a - b);
  const at = (q: number) => v[Math.min(v.length - 1, Math.ceil(q * v.length) - 1)];
  return { p50: at(0.5), p99: at(0.99), max: v[v.length - 1], count: v.length };
}

/** probe sends GET /healthz and POST /logs RATE times a second each for SECONDS, on a fixed schedule (a slow answer does not delay the next request). */
async function probe(server: SluiceServer, seq: { next: number }): Promise<{ health: Latencies; write: Latencies; writes: number }> {
  const period = 1000 / RATE;
  const health: number[] = [];
  const write: number[] = [];
  const inFlight: Promise<void>[] = [];
  const timed = (into: number[], send: () => Promise<Response>, status: number) => {
    const t = performance.now();
    inFlight.push(
      send().then(async (r) => {
        const body = await r.text();
        into.push(performance.now() - t);
        if (r.status !== status) throw new Error(`BUG: ${r.status} ${body}`);
      }),
    );
  };
  const t0 = performance.now();
  for (let i = 0; i < SECONDS * RATE; i++) {
    const at = t0 + i * period;
    if (at > performance.now()) await Bun.sleep(at - performance.now());
    timed(health, () => fetch(`${server.base}/healthz`), 200);
    const body = JSON.stringify(syntheticEntry(TOTAL + seq.next++));
    await Bun.sleep(period / 2); // the write half a period later: the two kinds do not queue behind each other
    timed(
      write,
      () => fetch(`${server.base}/api/v1/workspace/logs`, { method: "POST", headers: { "x-api-key": server.key, "content-type": "application/json" }, body }),
      201,
    );
  }
  await Promise.all(inFlight);
  return { health: summary(health), write: summary(write), writes: write.length };
}

export async function benchResponsive() {
  const dir = mkdtempSync(join(tmpdir(), "sluice-responsive-"));
  let server: SluiceServer | undefined;
  try {
    server = await startSluice(dir, SERVER_ENV);
    const s = server;
    const loadStart = performance.now();
    await drive(`${s.base}/api/v1/workspace/logs/bulk`, { "x-api-key": s.key }, bodies(TOTAL), TOTAL);
    const loadSecs = (performance.now() - loadStart) / 1000;
    await quiet(s.proc.pid);

    const scan = async () => {
      const t = performance.now();
      const r = await fetch(`${s.base}/api/v1/workspace/logs/query`, {
        method: "POST",
        headers: { "x-api-key": s.key, "content-type": "application/json" },
        body: JSON.stringify(FULL_SCAN),
      });
      const body = await r.text();
      if (r.status !== 200 || body !== "[]") throw new Error(`BUG: the full scan answered ${r.status} ${body.slice(0, 300)}`);
      return performance.now() - t;
    };
    const alone: number[] = [];
    for (let i = 0; i < SCANS_ALONE; i++) alone.push(await scan());

    const seq = { next: 0 };
    const idle = await probe(s, seq);

    let scanning = true;
    const during: number[] = [];
    const loop = (async () => {
      while (scanning) during.push(await scan());
    })();
    await Bun.sleep(200); // the first scan is under way before the first probe
    const busy = await probe(s, seq);
    scanning = false;
    await loop;

    const usage = (await (await fetch(`${s.base}/api/v1/workspace/usage`, { headers: { "x-api-key": s.key } })).json()) as { used: number };
    const expected = Math.ceil(TOTAL / BATCH) * BATCH + idle.writes + busy.writes;
    if (usage.used !== expected) throw new Error(`BUG: stored ${usage.used} entries, expected ${expected}`);
    s.proc.kill("SIGTERM");
    await s.exited;
    server = undefined;
    return { entries: expected, loadSecs, alone, during, idle, busy };
  } finally {
    server?.proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const r = await benchResponsive();
  const f = (n: number) => Math.round(n).toLocaleString("en-US");
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  const pair = (l: Latencies) => `${ms(l.p50)} / ${ms(l.p99)} (max ${ms(l.max)}, ${l.count})`.padEnd(38);
  console.log(
    `responsive: ${f(r.entries)} entries (loaded in ${r.loadSecs.toFixed(1)} s); GET /healthz and POST /logs at ${RATE}/s each for ${SECONDS} s a phase`,
  );
  console.log(`  one full scan alone: median ${ms(median(r.alone))} (${r.alone.map((t) => t.toFixed(0)).join(", ")} ms)`);
  console.log(`  full scans during the probes: ${r.during.length}, median ${ms(median(r.during))}`);
  console.log(`  ${"".padEnd(14)}${"idle: p50 / p99".padEnd(38)}during full scans: p50 / p99`);
  console.log(`  ${"GET /healthz".padEnd(14)}${pair(r.idle.health)}${pair(r.busy.health)}`);
  console.log(`  ${"POST /logs".padEnd(14)}${pair(r.idle.write)}${pair(r.busy.write)}`);
  const met = r.busy.health.p99 <= TARGET_P99_MS && r.busy.write.p99 <= TARGET_P99_MS;
  console.log(`  target: p99 ≤ ${TARGET_P99_MS} ms during the scans: ${met ? "met" : "NOT MET"}`);
  if (!met) process.exit(1);
}
