// single-entry bench: `wrk -t2 -c32` POSTs one ~330-byte entry per request to Sluice's POST /logs (201 after
// commit, every index and full text), beside a bare Bun.serve JSON echo under the same load in the same run.
// The two take turns, BENCH_SINGLE_ROUNDS times (default 3), and each figure is the median of its rounds:
// one run of either moves ±15% on this machine. Needs wrk (Debian package `wrk`). BENCH_SINGLE_SECONDS sets
// each run's length (default 10).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { syntheticEntry } from "./data.ts";
import { median, startBare, startSluice } from "./servers.ts";

const SECONDS = Number(process.env.BENCH_SINGLE_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_SINGLE_ROUNDS ?? 3);

export interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
}

/** wrk runs the load against url with one POST body and headers, and reads req/s and latency percentiles (ms). */
export async function wrk(url: string, body: string, headers: Record<string, string>, dir: string): Promise<WrkResult> {
  const script = join(dir, "post.lua");
  const lua = [
    `wrk.method = "POST"`,
    `wrk.body = ${JSON.stringify(body)}`,
    ...Object.entries({ "content-type": "application/json", ...headers }).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`),
  ];
  writeFileSync(script, lua.join("\n"));
  // not spawnSync: this process must go on draining the server's stdout (its access log) meanwhile
  const p = Bun.spawn(["wrk", "-t2", "-c32", `-d${SECONDS}s`, "--latency", "-s", script, url], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`wrk failed: ${out}${err}`);
  const ms = (label: string) => {
    const m = new RegExp(`\\s${label}\\s+([\\d.]+)(us|ms|s)`).exec(out);
    if (!m) throw new Error(`wrk printed no ${label}: ${out}`);
    return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1);
  };
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  if (/Socket errors/.test(out)) throw new Error(`BUG: wrk saw socket errors: ${out}`);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]),
    p50: ms("50%"),
    p99: ms("99%"),
    requests: Number(/(\d+) requests in/.exec(out)![1]),
    non2xx,
  };
}

/** medianRun takes each figure's median over rounds, and the total of the counts. */
function medianRun(runs: WrkResult[]): WrkResult {
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    requests: sum(runs.map((r) => r.requests)),
    non2xx: sum(runs.map((r) => r.non2xx)),
  };
}

export async function benchSingle() {
  if (Bun.spawnSync(["which", "wrk"]).exitCode !== 0) throw new Error("wrk is not installed: apt-get install wrk");
  const dir = mkdtempSync(join(tmpdir(), "sluice-bench-single-"));
  const body = JSON.stringify(syntheticEntry(42));
  try {
    const echo = await startBare("echo-server.ts");
    // all the load comes from one address: the per-IP abuse guard (6,000/min by default) would answer 429
    const sluice = await startSluice(join(dir, "data"), { SLUICE_IP_RATE_PER_MIN: "-1" });
    const { key } = sluice;
    const echoRuns: WrkResult[] = [];
    const sluiceRuns: WrkResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      echoRuns.push(await wrk(echo.url, body, {}, dir));
      sluiceRuns.push(await wrk(`${sluice.base}/api/v1/workspace/logs`, body, { "x-api-key": key }, dir));
    }
    echo.proc.kill();
    const usage = (await (await fetch(`${sluice.base}/api/v1/workspace/usage`, { headers: { "x-api-key": key } })).json()) as { used: number };
    sluice.proc.kill("SIGTERM");
    await sluice.exited;
    const result = medianRun(sluiceRuns);
    if (result.non2xx > 0) throw new Error(`BUG: ${result.non2xx} requests were not answered 201`);
    // wrk counts completed responses; requests cut off at the end may still have been stored
    if (usage.used < result.requests) throw new Error(`BUG: ${result.requests} answered 201, ${usage.used} stored`);
    return {
      ceiling: medianRun(echoRuns),
      sluice: result,
      stored: usage.used,
      rounds: { echo: echoRuns.map((r) => r.rps), sluice: sluiceRuns.map((r) => r.rps) },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const r = await benchSingle();
  const f = (n: number) => Math.round(n).toLocaleString("en-US");
  console.log(`single-entry POST, wrk -t2 -c32, ${SECONDS} s each, ${ROUNDS} rounds, medians`);
  console.log(
    `  bare Bun.serve JSON echo: ${f(r.ceiling.rps)} req/s, p50 ${r.ceiling.p50.toFixed(2)} ms, p99 ${r.ceiling.p99.toFixed(2)} ms (rounds: ${r.rounds.echo.map(f).join(", ")})`,
  );
  console.log(
    `  sluice POST /logs: ${f(r.sluice.rps)} req/s, p50 ${r.sluice.p50.toFixed(2)} ms, p99 ${r.sluice.p99.toFixed(2)} ms (rounds: ${r.rounds.sluice.map(f).join(", ")}; ${f(r.stored)} stored)`,
  );
  console.log(`  ratio: ${((r.sluice.rps / r.ceiling.rps) * 100).toFixed(1)}%`);
}
