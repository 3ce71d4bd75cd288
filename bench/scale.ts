// scale bench: 10M distinct entries over HTTP into one Sluice process, as bulk ingest makes them (bodies of 1,000,
// 4 fetch clients, each body made as it is sent: no entry repeats, so no dictionary or index is flattered), beside
// the bare Bun.serve parse ceiling driven by the same client over the same 10M. Then, on those 10M: server RSS,
// on-disk size beside the raw JSON (the storage report's, each entry as GET /logs/{id} returns it), query
// latencies over HTTP (page 100 beside page 1), and a restart timed until /readyz answers 200 and a full-text
// search answers. The client's making of bodies takes CPU beside the server's: the rate is lower than with bodies
// made beforehand.
// BENCH_SCALE_ENTRIES sets the count (default 10,000,000); the ingest rate is also printed per tenth of it, so a
// rate that falls as the store grows shows. BENCH_SCALE_CEILING_ENTRIES bounds the ceiling's run (default 10M).
// BENCH_SCALE_SERVER_ENV (a JSON object) adds to or overrides the server's environment, the runtime settings
// included, so that settings are compared on one checkout: '{"MIMALLOC_PURGE_DELAY":"1000"}'.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loghubLike } from "./data.ts";
import { BATCH, distinctBody, drive } from "./ingest.ts";
import { timeIt, timeTogether } from "./query.ts";
import { quiet, startBare, startSluice } from "./servers.ts";
import { spawnServer, type ServerProcess } from "../test/helpers/process.ts";

const TOTAL = Number(process.env.BENCH_SCALE_ENTRIES ?? 10_000_000);
const CEILING_TOTAL = Math.min(TOTAL, Number(process.env.BENCH_SCALE_CEILING_ENTRIES ?? 10_000_000));
const TENTHS = 10;
const mib = (n: number) => n / 2 ** 20;
const statusKb = (pid: number, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
const rssOf = (pid: number) => statusKb(pid, "VmRSS");
/** anonOf is the RSS the process allocated itself (heap, caches), apart from LMDB's file pages mapped in */
const anonOf = (pid: number) => statusKb(pid, "RssAnon");
/** costOf reads a process's CPU seconds (user + kernel) and minor page faults so far */
const costOf = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return { cpuS: (Number(f[11]) + Number(f[12])) / 100, faults: Number(f[7]) };
};
// one client address; 10,000 log lines are not the point
const SERVER_ENV = { SLUICE_IP_RATE_PER_MIN: "-1", SLUICE_ACCESS_LOG: "off", ...JSON.parse(process.env.BENCH_SCALE_SERVER_ENV ?? "{}") };
const QUERY_RUNS = 100; // a p50 of 25 runs moved by half a millisecond from run to run here

type Latency = Awaited<ReturnType<typeof timeIt>>;

export async function benchScale() {
  const payloads = distinctBody(loghubLike());
  const requests = Math.ceil(TOTAL / BATCH);
  const dir = mkdtempSync(join(tmpdir(), "sluice-scale-"));
  let server: ServerProcess | undefined;
  try {
    const baseline = await startBare("baseline-server.ts");
    const ceiling = await drive(baseline.url, {}, payloads, CEILING_TOTAL);
    baseline.proc.kill();

    const first = await startSluice(dir, SERVER_ENV);
    server = first;
    const { key } = first;
    let peakRss = 0;
    let peakAnon = 0;
    const pid = server.proc.pid;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, rssOf(pid));
      peakAnon = Math.max(peakAnon, anonOf(pid));
    }, 250);
    // the same bodies as one run would send, driven a tenth at a time
    const tenth = Math.ceil(requests / TENTHS);
    const rates: number[] = [];
    const i0 = performance.now();
    for (let t = 0; t * tenth < requests; t++) {
      const count = Math.min(tenth, requests - t * tenth);
      rates.push(await drive(`${server.base}/api/v1/workspace/logs/bulk`, { "x-api-key": key }, (i) => payloads(t * tenth + i), count * BATCH));
      console.error(`scale: tenth ${t + 1} at ${Math.round(rates[t])} entries/s, peak RSS ${Math.round(mib(peakRss))} MiB`);
    }
    const rate = (requests * BATCH) / ((performance.now() - i0) / 1000);
    clearInterval(sampler);
    // the queries measure the stored 10M, not the kernel writing back the last seconds of ingest beside them
    const dirty = () => Number(/Dirty:\s+(\d+) kB/.exec(readFileSync("/proc/meminfo", "utf8"))![1]) * 1024;
    const dirtyAfterIngest = dirty();
    Bun.spawnSync(["sync"]);
    // nor the server finishing the ingest's tail: the full-text backlog, a segment being sealed and persisted
    const settleMs = await quiet(pid);
    const ingestCost = costOf(pid);

    const call = (base: string, body: Record<string, unknown>) =>
      fetch(`${base}/api/v1/workspace/logs/query`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const usage = (await (await fetch(`${server.base}/api/v1/workspace/usage`, { headers: { "x-api-key": key } })).json()) as { used: number };
    const admin = /Admin token \(shown only now\):\s+(\S+)/.exec(first.banner)![1];
    const storage = (await (await fetch(`${server.base}/api/v1/admin/storage`, { headers: { authorization: `Bearer ${admin}` } })).json()) as {
      total: { raw_bytes: number };
    };
    const rawBytes = storage.total.raw_bytes;
    if (usage.used !== requests * BATCH) throw new Error(`BUG: stored ${usage.used} entries, expected ${requests * BATCH}`);

    const queries: Record<string, Latency & { found: number }> = {};
    const query = async (name: string, body: Record<string, unknown>) => {
      const r = await call(server!.base, body);
      if (r.status !== 200) throw new Error(`BUG: ${name}: ${r.status} ${await r.text()}`);
      const found = ((await r.json()) as unknown[]).length;
      queries[name] = { ...(await timeIt(async () => (await call(server!.base, body)).arrayBuffer(), QUERY_RUNS)), found };
    };
    await query("latest page", {});
    await query("level=error", { query: "level=error" });
    await query("a Loghub system tag (tag=openssh, 0.6%)", { query: "tag=openssh" });
    await query('full text message@"slow checkout"', { query: 'message@"slow checkout"' });
    await query('rare phrase "authentication failure"', { query: '"authentication failure"' });
    await query('a rare value (context.ip="10.0.7.42", 1 in 65,025 of the mix)', { query: 'context.ip="10.0.7.42"' });
    await query("one entry's value (context.request_id)", { query: `context.request_id="req-${Math.floor(TOTAL / 15) * 5 + 1}"` });

    // page 100 through the cursor: the cursor of page 99 is fetched once, then page 100 is timed like page 1
    const pageBody = { query: "level=warn", pageSize: 100 };
    let cursor: [string, string] | undefined;
    for (let page = 1; page < 100; page++) {
      const r = await call(server.base, cursor ? { ...pageBody, cursorID: cursor[0], cursorTS: cursor[1] } : pageBody);
      cursor = [r.headers.get("x-next-cursor-id")!, r.headers.get("x-next-cursor-ts")!];
      await r.arrayBuffer();
      if (!cursor[0])
        throw new Error(
          `level=warn ends at page ${page} of ${TOTAL.toLocaleString("en")} entries, before page 100: set BENCH_SCALE_ENTRIES to 200,000 or more`,
        );
    }
    const [page1, page100] = await timeTogether(
      [
        async () => (await call(server!.base, pageBody)).arrayBuffer(),
        async () => (await call(server!.base, { ...pageBody, cursorID: cursor![0], cursorTS: cursor![1] })).arrayBuffer(),
      ],
      QUERY_RUNS,
    );
    const rssAfterQueries = rssOf(pid);
    const anonAfterQueries = anonOf(pid);

    server.proc.kill("SIGTERM");
    await server.exited;
    const du = Number(Bun.spawnSync(["du", "-sb", dir]).stdout.toString().split("\t")[0]);

    // restart: time from spawn until /readyz says 200 and a full-text search has answered
    const r0 = performance.now();
    server = await spawnServer(dir, SERVER_ENV);
    while ((await fetch(`${server.base}/readyz`)).status !== 200) await Bun.sleep(5);
    const searched = await call(server.base, { query: "timeout" });
    if (searched.status !== 200 || ((await searched.json()) as unknown[]).length === 0) throw new Error("BUG: full text found nothing after the restart");
    const restartSecs = (performance.now() - r0) / 1000;
    const rssAfterRestart = rssOf(server.proc.pid);
    server.proc.kill("SIGTERM");
    await server.exited;
    server = undefined;
    return {
      dirtyAfterIngest,
      settleMs,
      ingestCost,
      entries: requests * BATCH,
      ceiling,
      rate,
      rates,
      peakRss,
      peakAnon,
      rssAfterQueries,
      anonAfterQueries,
      rssAfterRestart,
      du,
      rawBytes,
      queries,
      page1,
      page100,
      restartSecs,
    };
  } finally {
    server?.proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const r = await benchScale();
  const f = (n: number) => Math.round(n).toLocaleString("en-US");
  console.log(`scale: ${f(r.entries)} entries over HTTP, ${BATCH}/request, 4 clients`);
  console.log(`  bare Bun.serve JSON parse: ${f(r.ceiling)} entries/s; sluice: ${f(r.rate)} entries/s; ratio ${((r.rate / r.ceiling) * 100).toFixed(1)}%`);
  console.log(`  by tenths, entries/s: ${r.rates.map(f).join(", ")}; last ÷ first ${(r.rates.at(-1)! / r.rates[0]).toFixed(2)}`);
  const perEntry = (n: number) => n / r.entries;
  console.log(
    `  server CPU through ingest and its settling: ${(perEntry(r.ingestCost.cpuS) * 1e6).toFixed(1)} µs an entry, ${perEntry(r.ingestCost.faults).toFixed(2)} page faults an entry`,
  );
  console.log(
    `  dirty page cache right after ingest: ${mib(r.dirtyAfterIngest).toFixed(0)} MiB (synced before the queries); the server was quiet ${(r.settleMs / 1000).toFixed(1)} s after ingest`,
  );
  console.log(
    `  server RSS: peak ${mib(r.peakRss).toFixed(0)} MiB while ingesting (anonymous ${mib(r.peakAnon).toFixed(0)}), ${mib(r.rssAfterQueries).toFixed(0)} MiB after the queries (anonymous ${mib(r.anonAfterQueries).toFixed(0)})`,
  );
  console.log(`  on disk ${mib(r.du).toFixed(0)} MiB; raw JSON of the entries ${mib(r.rawBytes).toFixed(0)} MiB; ratio ${(r.du / r.rawBytes).toFixed(2)}×`);
  for (const [name, q] of Object.entries(r.queries)) console.log(`  ${name}: p50 ${q.p50.toFixed(2)} ms, p95 ${q.p95.toFixed(2)} ms (${q.found} on the page)`);
  console.log(`  level=warn, 100 a page: page 1 p50 ${r.page1.p50.toFixed(2)} ms, page 100 p50 ${r.page100.p50.toFixed(2)} ms`);
  console.log(`  restart until /readyz 200 and a full-text search answered: ${r.restartSecs.toFixed(2)} s (RSS then ${mib(r.rssAfterRestart).toFixed(0)} MiB)`);
}
