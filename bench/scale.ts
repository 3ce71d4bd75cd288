// scale bench (issue 5 groundwork): load N entries straight into the store (blocks of 1,000, as bulk writes
// make them), then report RSS, on-disk size beside the entries' raw JSON, restart time until full text
// answers, and a few query latencies. SCALE_ENTRIES sets N (default 10,000,000). Not part of `npm run bench`.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp, services } from "../src/app.ts";
import { IdGenerator } from "../src/ids.ts";
import { checkEntry } from "../src/ingest/rules.ts";
import { BUILT_IN_PLANS, PlanTable } from "../src/limits/plans.ts";
import { openDatabases } from "../src/storage/db.ts";
import type { Entry } from "../src/storage/entries.ts";
import { syntheticEntry } from "./data.ts";

const N = Number(process.env.SCALE_ENTRIES ?? 10_000_000);
const T0 = Date.UTC(2026, 9, 1);
const dir = mkdtempSync(join(tmpdir(), "sluice-scale-"));
const mb = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;

function open() {
  const dbs = openDatabases(dir);
  const deps = { dbs, plans: new PlanTable(), adminToken: "x", log: () => {}, ipRatePerMinute: -1, clock: () => T0 + 40 * 86_400_000 };
  const s = services(deps);
  return { dbs, s, app: buildApp(deps, s) };
}

try {
  let { dbs, s } = open();
  const ws = await s.admin.createWorkspace({ name: "scale" });
  const key = (await s.admin.createKey(ws.id, { environment: "production", type: "rw" })).key;
  const ids = new IdGenerator();
  let raw = 0;
  const t0 = performance.now();
  for (let b = 0; b < N / 1000; b++) {
    const raws = Array.from({ length: 1000 }, (_, i) => syntheticEntry(b * 1000 + i));
    for (const r of raws) raw += Buffer.byteLength(JSON.stringify(r));
    const { ms, ids: fresh } = ids.next(1000, T0 + b * 250);
    const entries = raws.map((r, i) => ({ ...checkEntry(r, i, BUILT_IN_PLANS[3]).entry!, id: fresh[i] }) as unknown as Entry);
    await s.entries.append(ws.id, "production", ms, entries, -1);
    if ((b + 1) % 1000 === 0) console.log(`${((b + 1) * 1000).toLocaleString("en-US")} entries, ${((performance.now() - t0) / 1000).toFixed(0)} s, rss ${mb(process.memoryUsage().rss)}`);
  }
  await s.entries.fulltext.settled();
  Bun.gc(true);
  console.log(`loaded ${N.toLocaleString("en-US")} in ${((performance.now() - t0) / 1000).toFixed(0)} s; rss ${mb(process.memoryUsage().rss)}; raw JSON ${mb(raw)}; LMDB file ${mb(statSync(dbs.dataFile).size)} (${(statSync(dbs.dataFile).size / raw).toFixed(2)}× raw)`);
  console.log("full text:", JSON.stringify(s.entries.fulltext.stats()));
  await dbs.root.close();

  const r0 = performance.now();
  const again = open();
  const post = async (body: unknown) => {
    const r = await again.app.handle(new Request("http://localhost/api/v1/workspace/logs/query", { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) }));
    if (r.status !== 200) throw new Error(`BUG: ${r.status}`);
    return r.json() as Promise<unknown[]>;
  };
  const found = await post({ query: "timeout" }); // full text answers: the active segment is rebuilt
  console.log(`restart until a full-text search answers: ${((performance.now() - r0) / 1000).toFixed(2)} s (${found.length} found); rss ${mb(process.memoryUsage().rss)}`);
  for (const [name, body] of [["latest page", {}], ["level=error", { query: "level=error" }], ["full text", { query: 'message@"slow checkout"' }], ["tag", { query: "tag=svc-3" }]] as const) {
    const ms: number[] = [];
    for (let i = 0; i < 25; i++) {
      const t = performance.now();
      await post(body);
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    console.log(`${name}: p50 ${ms[12].toFixed(2)} ms, p95 ${ms[23].toFixed(2)} ms`);
  }
  console.log(`rss after queries ${mb(process.memoryUsage().rss)}`);
  await again.s.entries.fulltext.settled();
  await again.dbs.root.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
