// loki bench: the Loki query API (contract §17) beside the native reads it maps onto, through the real app
// (app.handle) on a real LMDB. Baselines in the same run: a query_range logs query against POST /logs/query with the
// same filter, and sum by (level) (count_over_time(…[1m])) over 24 h against POST /logs/hits grouped by level on the
// client axis. Every answer is checked against its baseline (BUG: otherwise).
//
// Each row times the Loki call and its native baseline in pairs, many rounds, the one going first changing each
// round, so that the machine's noise falls on both alike; it prints both p50s, their ratio, and the median of the
// rounds' own ratios (the steadier of the two when the load changes during a run).
//
// BENCH_LOKI_ENTRIES sets the entry count (default 1,000,000); BENCH_LOKI_ROUNDS the pairs of a log query (300; the
// 24 h count takes a fortieth, `labels` a tenth, at least 5). BENCH_LOKI_DIR keeps the data directory: a later run
// with the same count reads it instead of loading again, so two checkouts can be timed on the same data.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compose } from "../src/compose.ts";
import { IdGenerator } from "../src/ids.ts";
import { checkEntry } from "../src/ingest/rules.ts";
import { BUILT_IN_PLANS, PlanTable } from "../src/limits/plans.ts";
import type { Entry } from "../src/storage/entries.ts";
import { syntheticEntry } from "./data.ts";

const ENTRIES = Number(process.env.BENCH_LOKI_ENTRIES ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_LOKI_ROUNDS ?? 300);
const KEPT_DIR = process.env.BENCH_LOKI_DIR;
const BLOCK = 1000;
const HITS_BUCKETS = 1000; // the most buckets one hits answer holds
const T0 = Date.UTC(2026, 10, 1); // syntheticEntry's client times start here, 37 ms apart
const ns = (ms: number) => `${ms}000000`;
// log queries and the native query with the same answer here (every bench entry has a lowercase message)
const LOG_QUERIES: [logql: string, native: string][] = [
  ['{level="error"}', "level=error"],
  ['{action="payment.failed"}', 'action="payment.failed"'],
  ['{level="error"} |= "timeout"', "level=error message~timeout"],
  ['{level=~"warn|error"} |= "cache" != "miss"', "level=warn,error message~cache message!~miss"],
];

/** Answer is the part of the answers read here: Loki's streams or matrix, and hits' total. */
interface Answer {
  data: { result: { stream: Record<string, string>; values: [unknown, string][] }[] };
  total: number;
}

/** Paired is a row's figures: each call's p50 in ms, the ratio of the p50s, and the median of each round's ratio. */
interface Paired {
  loki: number;
  native: number;
  ratio: number;
  pairRatio: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** timePairs times `loki` and `native` once each a round, `rounds` rounds after a warm-up, taking turns at going first. */
export async function timePairs(loki: () => Promise<unknown>, native: () => Promise<unknown>, rounds: number): Promise<Paired> {
  for (let i = 0; i < Math.min(20, rounds); i++) {
    await loki();
    await native();
  }
  const l: number[] = [];
  const n: number[] = [];
  const time = async (f: () => Promise<unknown>, into: number[]) => {
    const t = performance.now();
    await f();
    into.push(performance.now() - t);
  };
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      await time(loki, l);
      await time(native, n);
    } else {
      await time(native, n);
      await time(loki, l);
    }
  }
  return { loki: median(l), native: median(n), ratio: median(l) / median(n), pairRatio: median(l.map((x, i) => x / n[i])) };
}

const row = (what: string, p: Paired, baseline: string) =>
  `${what}: Loki p50 ${p.loki.toFixed(2)} ms, ${baseline} p50 ${p.native.toFixed(2)} ms, ×${p.ratio.toFixed(2)} (a round's own ratio: median ×${p.pairRatio.toFixed(2)})`;

/** load writes ENTRIES synthetic entries in blocks of 1,000, client times 37 ms apart from T0, and gives a read key. */
async function load(s: ReturnType<typeof compose>): Promise<string> {
  const ws = await s.admin.createWorkspace({ name: "bench" });
  const key = (await s.admin.createKey(ws.id, { environment: "production", type: "rw" })).key;
  const tenant = { ws: ws.id, env: "production" as const };
  const ids = new IdGenerator();
  const plan = BUILT_IN_PLANS[3];
  const t0 = performance.now();
  for (let b = 0; b * BLOCK < ENTRIES; b++) {
    const raws = Array.from({ length: Math.min(BLOCK, ENTRIES - b * BLOCK) }, (_, i) => syntheticEntry(b * BLOCK + i));
    const { ms, ids: fresh } = ids.next(raws.length, T0 + b * BLOCK * 37);
    const entries = raws.map((r, i) => ({ ...checkEntry(r, i, plan).entry!, id: fresh[i] }) as unknown as Entry);
    await s.entries.append(tenant, ms, entries, -1);
  }
  await s.entries.settled();
  console.error(`loaded ${ENTRIES} entries in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return key;
}

export async function benchLoki() {
  const dir = KEPT_DIR ?? mkdtempSync(join(tmpdir(), "sluice-lokibench-"));
  const marker = join(dir, "bench-loki.json"); // what a kept directory holds: its entry count and a key to read it with
  const kept = KEPT_DIR !== undefined && existsSync(marker) ? (JSON.parse(readFileSync(marker, "utf8")) as { entries: number; key: string }) : undefined;
  if (kept && kept.entries !== ENTRIES) throw new Error(`${dir} holds ${kept.entries} entries, not ${ENTRIES}: set BENCH_LOKI_DIR to another directory`);
  mkdirSync(dir, { recursive: true });
  const s = compose({ dataDir: dir, plans: new PlanTable(), adminToken: "bench", log: () => {}, ipRatePerMinute: -1, clock: () => T0 + 40 * 86_400_000 });
  try {
    const key = kept?.key ?? (await load(s));
    if (KEPT_DIR !== undefined && !kept) writeFileSync(marker, JSON.stringify({ entries: ENTRIES, key }));
    const call = async (path: string, init: RequestInit = {}) => {
      const r = await s.app.handle(
        new Request(`http://localhost${path}`, { ...init, headers: { "x-api-key": key, "content-type": "application/json", ...init.headers } }),
      );
      if (r.status !== 200) throw new Error(`BUG: ${path} answered ${r.status}: ${await r.text()}`);
      return r.json() as Promise<Answer>;
    };
    const endMs = T0 + ENTRIES * 37;
    console.log(`${ENTRIES.toLocaleString("en-US")} entries${kept ? ` (kept in ${dir})` : ""}, ${ROUNDS} pairs a log query`);
    // 1. the newest 100 entries of log queries that map onto a native query, against the native page
    for (const [logql, query] of LOG_QUERIES) {
      const loki = () => call(`/loki/api/v1/query_range?${new URLSearchParams({ query: logql, limit: "100", start: ns(T0), end: ns(endMs) })}`);
      const native = () => call("/api/v1/workspace/logs/query", { method: "POST", body: JSON.stringify({ query, pageSize: 100 }) });
      const lokiIds = (await loki()).data.result.map((st) => st.stream.sluice_id);
      const nativeIds = ((await native()) as unknown as { id: string }[]).map((e) => e.id);
      if (lokiIds.length === 0 || JSON.stringify(lokiIds) !== JSON.stringify(nativeIds))
        throw new Error(`BUG: the Loki logs query ${logql} and the native page differ`);
      console.log(row(`logs ${logql} limit 100`, await timePairs(loki, native, ROUNDS), `native POST /logs/query ${query}`));
    }
    // 2. counts by level per minute over 24 h (or what the data covers)
    const from = Math.max(T0, endMs - 86_400_000);
    const startMs = Math.ceil(from / 60_000) * 60_000 + 60_000;
    const lastMs = startMs + Math.floor((endMs - startMs) / 60_000) * 60_000; // the last point
    const metric = () =>
      call(
        `/loki/api/v1/query_range?${new URLSearchParams({ query: 'sum by (level) (count_over_time({environment="production"}[1m]))', start: ns(startMs), end: ns(endMs), step: "60s" })}`,
      );
    // hits answers at most 1,000 buckets: 24 h of minutes is asked in parts, one after another, and summed
    const hits = async () => {
      let total = 0;
      for (let from = startMs - 60_000; from <= lastMs; from += HITS_BUCKETS * 60_000) {
        const to = Math.min(from + HITS_BUCKETS * 60_000, lastMs + 1);
        const part = await call("/api/v1/workspace/logs/hits", {
          method: "POST",
          body: JSON.stringify({ from: new Date(from).toISOString(), to: new Date(to).toISOString(), step: "1m", groupBy: "level", axis: "client" }),
        });
        total += part.total;
      }
      return { total } as Answer;
    };
    const lokiTotal = (await metric()).data.result.reduce((n, r) => n + r.values.reduce((m, v) => m + Number(v[1]), 0), 0);
    const hitsTotal = (await hits()).total;
    // the Loki points count (t − 1m, t], the buckets [t, t + 1m): the same entries but for the millisecond at each edge
    if (Math.abs(lokiTotal - hitsTotal) > 2) throw new Error(`BUG: count_over_time totals ${lokiTotal}, hits ${hitsTotal}`);
    const hours = ((lastMs - startMs) / 3_600_000).toFixed(1);
    console.log(
      row(`sum by (level) (count_over_time([1m])) over ${hours} h`, await timePairs(metric, hits, Math.max(5, Math.round(ROUNDS / 40))), "native hits"),
    );
    // 3. the label browser: label names over the last hour of data (every entry read: exact), beside facets of level
    const hourStart = endMs - 3_600_000;
    const labelNames = () => call(`/loki/api/v1/labels?${new URLSearchParams({ start: ns(hourStart), end: ns(endMs) })}`);
    const facets = () =>
      call("/api/v1/workspace/logs/facets", {
        method: "POST",
        body: JSON.stringify({ from: new Date(hourStart).toISOString(), to: new Date(endMs).toISOString(), fields: ["level"], axis: "client" }),
      });
    console.log(row("labels over 1 h", await timePairs(labelNames, facets, Math.max(5, Math.round(ROUNDS / 10))), "native facets of level"));
  } finally {
    await s.close();
    if (KEPT_DIR === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await benchLoki();
