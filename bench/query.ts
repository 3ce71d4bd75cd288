// query bench: p50/p95 of the standard queries over 1M synthetic entries plus the Loghub set, through the
// real app (app.handle: routing, auth, JSON) on a real LMDB. Beside each: the same query forced onto a
// full range scan, the baseline the indexes are measured against. Each answer is checked against it.
// BENCH_QUERY_ENTRIES sets the synthetic count (default 1,000,000).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compose } from "../src/compose.ts";
import { IdGenerator } from "../src/ids.ts";
import { checkEntry } from "../src/ingest/rules.ts";
import { BUILT_IN_PLANS, PlanTable } from "../src/limits/plans.ts";
import { parseQuery } from "../src/query/parser.ts";
import { matchQuery } from "../src/query/match.ts";
import { scan } from "../src/query/execute.ts";
import { runCandidate } from "../src/query/page.ts";
import { planQuery } from "../src/query/plan.ts";
import type { Entry } from "../src/storage/entries.ts";
import { loghubEntries, syntheticEntry } from "./data.ts";

const SYNTHETIC = Number(process.env.BENCH_QUERY_ENTRIES ?? 1_000_000);
const BLOCK = 1000;
const RUNS = 25;
const T0 = Date.UTC(2026, 10, 12);
const SPAN_MS = 10 * 86_400_000; // the data covers ten days of server time

export async function benchQuery() {
  const dir = mkdtempSync(join(tmpdir(), "sluice-qbench-"));
  const s = compose({ dataDir: dir, plans: new PlanTable(), adminToken: "bench", log: () => {}, ipRatePerMinute: -1, clock: () => T0 + SPAN_MS });
  const { app } = s;
  try {
    const ws = await s.admin.createWorkspace({ name: "bench" });
    const key = (await s.admin.createKey(ws.id, { environment: "production", type: "rw" })).key;

    // load: bulk-sized blocks spread evenly over the span, Loghub lines mixed in (one in 32)
    const real = loghubEntries();
    const total = SYNTHETIC + real.length;
    const blocks = Math.ceil(total / BLOCK);
    const ids = new IdGenerator();
    const plan = BUILT_IN_PLANS[3];
    const t0 = performance.now();
    for (let b = 0; b < blocks; b++) {
      const raws = Array.from({ length: Math.min(BLOCK, total - b * BLOCK) }, (_, i) => {
        const n = b * BLOCK + i;
        return n % 32 === 0 && n / 32 < real.length ? real[n / 32] : syntheticEntry(n);
      });
      const { ms, ids: fresh } = ids.next(raws.length, T0 + Math.floor((b * SPAN_MS) / blocks));
      const entries = raws.map((r, i) => ({ ...checkEntry(r, i, plan).entry!, id: fresh[i] }) as unknown as Entry);
      await s.entries.append({ ws: ws.id, env: "production" }, ms, entries, -1);
    }
    const loadSecs = (performance.now() - t0) / 1000;

    const post = async (body: Record<string, unknown>) => {
      const r = await app.handle(
        new Request("http://localhost/api/v1/workspace/logs/query", {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      );
      if (r.status !== 200) throw new Error(`BUG: ${r.status} ${await r.text()}`);
      return { entries: (await r.json()) as { id: string }[], next: [r.headers.get("x-next-cursor-id"), r.headers.get("x-next-cursor-ts")] };
    };
    const hour = new Date(T0 + SPAN_MS / 2).toISOString();
    const hourEnd = new Date(T0 + SPAN_MS / 2 + 3_600_000).toISOString();
    const cases: [string, Record<string, unknown>][] = [
      ["latest page", {}],
      ["level=error", { query: "level=error" }],
      ["a tag", { query: "tag=svc-3" }],
      ["action~ substring", { query: "action~pay" }],
      ["action= exact", { query: "action=order.paid" }],
      ["JSON-field equality", { query: "metadata.status_code=404" }],
      ["two-word full-text", { query: 'message@"slow checkout"' }],
      ["rare message substring", { query: 'message~"request 777777 "' }],
      ["one-hour window", { from: hour, to: hourEnd }],
      ["three-term query", { query: "level=warn tag=region-2 action~order" }],
      ["a rare tag (Loghub OpenSSH, 0.2%)", { query: "tag=openssh" }],
      ["rare full-text phrase (Loghub)", { query: '"authentication failure"' }],
    ];
    const rows: Record<string, string | number>[] = [];
    for (const [name, body] of cases) {
      const ms = await timeIt(() => post(body));
      const chosen = await timeIt(() => Promise.resolve(engine(s, ws.id, body, "chosen")));
      const baseline = await timeIt(() => Promise.resolve(engine(s, ws.id, body, "range")), 5);
      const got = (await post(body)).entries.map((e) => e.id);
      if (JSON.stringify(got) !== JSON.stringify(reference(s, ws.id, body))) throw new Error(`BUG: ${name} differs from the reference full scan`);
      rows.push({
        query: name,
        "http p50": ms.p50,
        "http p95": ms.p95,
        "engine p50": chosen.p50,
        "engine, full scan p50": baseline.p50,
        plan: engine(s, ws.id, body, "chosen").plan,
        matches: got.length,
      });
    }
    // page 20 through the cursor, beside page 1 of the same query
    const pageN = async (n: number) => {
      let body: Record<string, unknown> = { query: "level=warn" };
      for (let i = 1; i < n; i++) {
        const { next } = await post(body);
        body = { query: "level=warn", cursorID: next[0], cursorTS: next[1] };
      }
      return body;
    };
    const p20 = await pageN(20);
    const page20 = await timeIt(() => post(p20));
    const page1 = await timeIt(() => post({ query: "level=warn" }));
    rows.push({
      query: "page 20 through the cursor (level=warn)",
      "http p50": page20.p50,
      "http p95": page20.p95,
      "engine p50": `page 1 http p50: ${page1.p50}`,
      matches: 50,
    });
    return { entries: total, loadSecs, rows };
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function request(body: Record<string, unknown>) {
  const query = parseQuery((body.query as string) ?? "");
  const range = { fromMs: body.from ? Date.parse(body.from as string) : 0, toMs: body.to ? Date.parse(body.to as string) : 8.64e15 };
  return { query, range };
}

/** engine runs one page below HTTP, on the plan the planner chose or forced onto the full range scan. */
function engine(s: ReturnType<typeof compose>, ws: string, body: Record<string, unknown>, which: "chosen" | "range") {
  const { query, range } = request(body);
  const plan = planQuery(s.entries, { ws: ws, env: "production" }, query, range);
  const candidate = which === "chosen" ? plan.chosen : plan.candidates.find((c) => c.index === "range")!;
  runCandidate(s.entries, { ws: ws, env: "production" }, query, plan.range, candidate, 50);
  return { plan: `${plan.chosen.index}${plan.chosen.term ? ` (${plan.chosen.term})` : ""}` };
}

/** reference answers the slow, obvious way: every entry of the range through the reference matcher. */
function reference(s: ReturnType<typeof compose>, ws: string, body: Record<string, unknown>): string[] {
  const { query, range } = request(body);
  const out: string[] = [];
  for (const row of scan(s.entries, { ws: ws, env: "production" }, range)) {
    if (matchQuery(query, row, "production")) out.push(row.entry.id);
    if (out.length === 50) break;
  }
  return out;
}

/** timeIt runs f once to warm up, then `runs` times, and returns the p50 and p95 in ms. */
export async function timeIt(f: () => Promise<unknown>, runs = RUNS): Promise<{ p50: number; p95: number }> {
  return (await timeTogether([f], runs))[0];
}

/** timeTogether times several calls in turn, `runs` rounds, so that the machine's noise falls on each alike. */
export async function timeTogether(fs: (() => Promise<unknown>)[], runs = RUNS): Promise<{ p50: number; p95: number }[]> {
  for (const f of fs) await f(); // warm
  const ms: number[][] = fs.map(() => []);
  for (let i = 0; i < runs; i++) {
    for (const [k, f] of fs.entries()) {
      const t = performance.now();
      await f();
      ms[k].push(performance.now() - t);
    }
  }
  return ms.map((m) => {
    m.sort((a, b) => a - b);
    const at = (q: number) => Number(m[Math.min(m.length - 1, Math.floor(q * m.length))].toFixed(2));
    return { p50: at(0.5), p95: at(0.95) };
  });
}

if (import.meta.main) {
  const r = await benchQuery();
  console.log(`queries over ${r.entries.toLocaleString("en-US")} entries (loaded in ${r.loadSecs.toFixed(1)} s), ms through app.handle`);
  console.table(r.rows);
}
