// ingest bench: bulk ingest over HTTP (bodies of 1,000 entries, 4 concurrent fetch clients), Sluice beside a
// bare Bun.serve JSON-parse baseline driven by the same client in the same run. Checks its answer via /usage.
// BENCH_ENTRIES sets the total (default 1,000,000).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loghubLike, syntheticEntry } from "./data.ts";
import { startBare, startSluice } from "./servers.ts";

const TOTAL = Number(process.env.BENCH_ENTRIES ?? 1_000_000);
export const BATCH = 1000;
export const CLIENTS = 4;

/** bodies pre-serializes the bodies of `total` entries, BATCH each, no entry in two (distinctBody), before any clock starts. */
export function bodies(total: number, from = 0): string[] {
  const body = distinctBody(loghubLike());
  return Array.from({ length: Math.ceil(total / BATCH) }, (_, i) => body(from + i));
}

/** distinctBody is request i's body of BATCH entries no other request has: one in five Loghub-style, the rest synthetic. */
export function distinctBody(loghub: (i: number) => Record<string, unknown>): (i: number) => string {
  return (b) => JSON.stringify(Array.from({ length: BATCH }, (_, i) => (i % 5 === 0 ? loghub(b * BATCH + i) : syntheticEntry(b * BATCH + i))));
}

/** drive sends `total` entries with CLIENTS concurrent loops, request i's body `payloads[i % length]` or `payloads(i)`, and returns entries per second. */
export async function drive(url: string, headers: Record<string, string>, payloads: string[] | ((i: number) => string), total = TOTAL): Promise<number> {
  const bodyOf = typeof payloads === "function" ? payloads : (i: number) => payloads[i % payloads.length];
  const requests = Math.ceil(total / BATCH);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < requests) {
        const i = next++;
        const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: bodyOf(i) });
        if (r.status !== 201) throw new Error(`request ${i}: ${r.status} ${await r.text()}`);
        await r.arrayBuffer();
      }
    }),
  );
  return (requests * BATCH) / ((performance.now() - t0) / 1000);
}

export async function benchIngest() {
  const payloads = bodies(TOTAL);
  const dir = mkdtempSync(join(tmpdir(), "sluice-bench-"));
  try {
    const baseline = await startBare("baseline-server.ts");
    const ceiling = await drive(baseline.url, {}, payloads);
    baseline.proc.kill();

    const sluice = await startSluice(dir, { SLUICE_IP_RATE_PER_MIN: "-1" }); // one client address: no per-IP guard
    const { key } = sluice;
    const rate = await drive(`${sluice.base}/api/v1/workspace/logs/bulk`, { "x-api-key": key }, payloads);
    const usage = (await (await fetch(`${sluice.base}/api/v1/workspace/usage`, { headers: { "x-api-key": key } })).json()) as { used: number };
    const expected = Math.ceil(TOTAL / BATCH) * BATCH;
    if (usage.used !== expected) throw new Error(`BUG: stored ${usage.used} entries, expected ${expected}`);
    const du = Bun.spawnSync(["du", "-sb", dir]).stdout.toString().split("\t")[0];
    sluice.proc.kill("SIGTERM");
    await sluice.exited;
    return { entries: expected, ceiling, rate, ratio: rate / ceiling, bytesOnDisk: Number(du) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const r = await benchIngest();
  const f = (n: number) => Math.round(n).toLocaleString("en-US");
  console.log(`bulk ingest, ${f(r.entries)} entries, ${BATCH}/request, ${CLIENTS} clients`);
  console.log(`  bare Bun.serve JSON parse: ${f(r.ceiling)} entries/s`);
  console.log(`  sluice (LMDB, 201 after commit): ${f(r.rate)} entries/s`);
  console.log(`  ratio: ${(r.ratio * 100).toFixed(1)}%   on disk: ${(r.bytesOnDisk / 2 ** 20).toFixed(1)} MiB`);
}
