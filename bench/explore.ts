// explore bench: hits, facets and context over synthetic entries, and live tails, through the real app
// (app.handle) on a real LMDB. Baselines in the same run: each count against counting the same entries by paging
// the read path's executor (what paging POST /logs/query does, without the HTTP of each page), context against
// GET /logs/{id}; the tail's latency against the 201 of the write it follows; ingest with 100 open tails against
// ingest with none, in alternating rounds. Every count is checked against its baseline.
// BENCH_EXPLORE_ENTRIES sets the entry count (default 1,000,000).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compose } from "../src/compose.ts";
import { IdGenerator } from "../src/ids.ts";
import { checkEntry } from "../src/ingest/rules.ts";
import { BUILT_IN_PLANS, PlanTable } from "../src/limits/plans.ts";
import { compileQuery } from "../src/query/compile.ts";
import { rows } from "../src/query/execute.ts";
import { parseQuery } from "../src/query/parser.ts";
import { planQuery } from "../src/query/plan.ts";
import type { Entry } from "../src/storage/entries.ts";
import { syntheticEntry } from "./data.ts";
import { timeIt } from "./query.ts";

const ENTRIES = Number(process.env.BENCH_EXPLORE_ENTRIES ?? 1_000_000);
const BLOCK = 1000;
const T0 = Date.UTC(2026, 10, 12);
const SPAN_MS = 10 * 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const EVENT = Buffer.from("event: entry");

export async function benchExplore() {
  const dir = mkdtempSync(join(tmpdir(), "sluice-xbench-"));
  let now = T0 + SPAN_MS;
  const s = compose({
    dataDir: dir,
    plans: new PlanTable(),
    adminToken: "bench",
    log: () => {},
    ipRatePerMinute: -1,
    clock: () => now,
    tail: { maxPerKey: 200 },
  });
  const out: Record<string, string | number>[] = [];
  try {
    const ws = await s.admin.createWorkspace({ name: "bench" });
    const key = (await s.admin.createKey(ws.id, { environment: "production", type: "rw" })).key;
    const tenant = { ws: ws.id, env: "production" as const };
    const ids = new IdGenerator();
    const plan = BUILT_IN_PLANS[3];
    const blocks = Math.ceil(ENTRIES / BLOCK);
    const t0 = performance.now();
    const some: string[] = [];
    for (let b = 0; b < blocks; b++) {
      const raws = Array.from({ length: Math.min(BLOCK, ENTRIES - b * BLOCK) }, (_, i) => syntheticEntry(b * BLOCK + i));
      const { ms, ids: fresh } = ids.next(raws.length, T0 + Math.floor((b * SPAN_MS) / blocks));
      const entries = raws.map((r, i) => ({ ...checkEntry(r, i, plan).entry!, id: fresh[i] }) as unknown as Entry);
      await s.entries.append(tenant, ms, entries, -1);
      if (b % Math.max(1, Math.floor(blocks / 200)) === 0) some.push(fresh[b % fresh.length]);
    }
    console.error(`loaded ${ENTRIES} entries in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await s.entries.settled();

    const call = async (method: string, path: string, body?: unknown) => {
      const r = await s.app.handle(
        new Request(`http://localhost/api/v1/workspace${path}`, {
          method,
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
      if (r.status !== 200) throw new Error(`BUG: ${path} answered ${r.status} ${await r.text()}`);
      // biome-ignore lint/suspicious/noExplicitAny: each answer is checked where it is read
      return r.json() as Promise<any>;
    };
    /** the baseline: count the matching entries the way a page of POST /logs/query finds them, page after page */
    const paged = (query: string, visit: (e: Entry, ms: number) => void = () => {}) => {
      const q = parseQuery(query);
      const range = { fromMs: 0, toMs: 8.64e15 };
      const p = planQuery(s.entries, tenant, q, range);
      let n = 0;
      for (const row of rows({ store: s.entries, tenant, range: p.range, accept: compileQuery(q, tenant.env) }, p.chosen.open())) {
        n++;
        visit(row.entry, row.serverMs);
      }
      return n;
    };
    const all = { from: iso(T0), to: iso(T0 + SPAN_MS + 1) };
    const row = (what: string, figure: { p50: number; p95: number }, baseline: number, target: string) =>
      out.push({ what, "p50 ms": figure.p50, "p95 ms": figure.p95, "baseline ms": baseline, "× baseline": +(figure.p50 / baseline).toFixed(3), target });
    const base = async (f: () => unknown) => (await timeIt(async () => f(), 3)).p50;

    // hits
    let total = 0;
    const countAll = await base(() => (total = paged("")));
    const coldStart = performance.now();
    const h = await call("POST", "/logs/hits", { ...all });
    const cold = performance.now() - coldStart; // the first count reads each block's size; later ones find it kept
    if (h.total !== total || h.series[0].counts.length > 120) throw new Error(`BUG: hits total ${h.total}, paged ${total}`);
    out.push({ what: "hits, all, the first call (block sizes not yet kept)", "p50 ms": +cold.toFixed(2), target: "" });
    row(`hits, all ${ENTRIES} entries, 120 buckets`, await timeIt(() => call("POST", "/logs/hits", all), 7), countAll, "≤ 100 ms at 10M");
    const levels = new Map<string, number>();
    const countLevels = await base(() => {
      levels.clear();
      paged("", (e) => levels.set(e.level, (levels.get(e.level) ?? 0) + 1));
    });
    const g = await call("POST", "/logs/hits", { ...all, groupBy: "level" });
    for (const series of g.series) if (levels.get(series.group.level) !== series.total) throw new Error(`BUG: hits of ${series.group.level}`);
    row("hits grouped by level", await timeIt(() => call("POST", "/logs/hits", { ...all, groupBy: "level" }), 7), countLevels, "≤ 150 ms at 10M");
    let errors = 0;
    const countErrors = await base(() => (errors = paged("level=error")));
    if ((await call("POST", "/logs/hits", { ...all, query: "level=error" })).total !== errors) throw new Error("BUG: hits of level=error");
    row("hits, query level=error", await timeIt(() => call("POST", "/logs/hits", { ...all, query: "level=error" }), 7), countErrors, "≤ 200 ms at 10M");

    // facets
    const f = await call("POST", "/logs/facets", {});
    if (f.total !== total) throw new Error("BUG: facets total");
    row("facets level, action, tag", await timeIt(() => call("POST", "/logs/facets", {}), 5), countLevels, "≤ 200 ms at 1M");
    row("facets metadata.status_code", await timeIt(() => call("POST", "/logs/facets", { fields: ["metadata.status_code"] }), 5), countLevels, "≤ 1 s at 1M");

    // context
    let k = 0;
    const getOne = await timeIt(() => call("GET", `/logs/${some[k++ % some.length]}`), 50);
    row(
      "context, 20 before and 20 after",
      await timeIt(() => call("GET", `/logs/${some[k++ % some.length]}/context`), 50),
      getOne.p50,
      "≤ 10 ms at 10M (baseline: GET /logs/{id})",
    );

    // tail: from the 201 of a single write to its event, on an idle server
    now = Date.now();
    const r = await s.app.handle(new Request("http://localhost/api/v1/workspace/logs/tail", { headers: { "x-api-key": key } }));
    const reader = r.body!.getReader();
    const decoder = new TextDecoder();
    const lags: number[] = [];
    const created: number[] = [];
    for (let i = 0; i < 200; i++) {
      now = Date.now();
      const w = await s.app.handle(
        new Request("http://localhost/api/v1/workspace/logs", {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify({ action: "tail.probe", level: "info", clientTimestamp: iso(now) }),
        }),
      );
      if (w.status !== 201) throw new Error("BUG: write");
      const answered = performance.now();
      created.push(0);
      for (let text = ""; !text.includes("event: entry"); ) text += decoder.decode((await reader.read()).value);
      lags.push(performance.now() - answered);
    }
    await reader.cancel();
    lags.sort((a, b) => a - b);
    out.push({
      what: "tail: 201 → event, idle server",
      "p50 ms": +lags[100].toFixed(2),
      "p95 ms": +lags[190].toFixed(2),
      "p99 ms": +lags[198].toFixed(2),
      target: "p99 ≤ 50 ms",
    });

    // bulk ingest with 100 open tails against none, alternating rounds; one tail of a rare tag measures its lag meanwhile
    const bulkBody = (round: number, rare: boolean) =>
      JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({ ...syntheticEntry(round * 1000 + i), ...(rare && i === 999 ? { tags: ["rare-probe"] } : {}) })));
    const ingest = async (rounds: number, offset: number, probe?: (round: number) => void) => {
      const t = performance.now();
      for (let i = 0; i < rounds; i++) {
        now = Date.now();
        const w = await s.app.handle(
          new Request("http://localhost/api/v1/workspace/logs/bulk", {
            method: "POST",
            headers: { "x-api-key": key, "content-type": "application/json" },
            body: bulkBody(offset + i, probe !== undefined && i % 5 === 4),
          }),
        );
        if (w.status !== 201) throw new Error(`BUG: bulk ${w.status}`);
        if (probe && i % 5 === 4) probe(i);
      }
      return (rounds * 1000) / ((performance.now() - t) / 1000);
    };
    const openTails = async (n: number, queryOf: (i: number) => string) => {
      const readers = await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const t = await s.app.handle(
            new Request(`http://localhost/api/v1/workspace/logs/tail?query=${encodeURIComponent(queryOf(i))}`, { headers: { "x-api-key": key } }),
          );
          return t.body!.getReader();
        }),
      );
      let events = 0;
      const loops = readers.map(async (rd) => {
        // the consumer counts events in the bytes, without decoding them: it shares the process with the server
        for (let r = await rd.read(); !r.done; r = await rd.read()) {
          const bytes = Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
          for (let at = bytes.indexOf(EVENT); at >= 0; at = bytes.indexOf(EVENT, at + EVENT.length)) events++;
        }
      });
      return {
        events: () => events,
        close: async () => {
          for (const rd of readers) await rd.cancel();
          await Promise.allSettled(loops);
        },
      };
    };
    const ROUNDS = 20;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    let offset = 10_000_000;
    // 100 tails of a query nothing matches (the cost of the hub and the filters), then 100 tails of one service's tag each
    // (1 in 12 entries: together about 8 times the stream of entries, rendered once per entry and written per tail)
    const kinds: [string, (i: number) => string, number][] = [
      ["a query nothing matches", () => "tag=nothing-matches", 0],
      ["tag=svc-<i mod 12> (each 1/12 of the entries)", (i) => `tag=svc-${i % 12}`, (100 * ROUNDS * 1000) / 12],
    ];
    for (const [name, queryOf, expected] of kinds) {
      const rates: { none: number[]; hundred: number[] } = { none: [], hundred: [] };
      for (let pair = 0; pair < 4; pair++) {
        // the order alternates within pairs: what runs second meets a warmer (or busier) process
        const plain = async () => rates.none.push(await ingest(ROUNDS, (offset += ROUNDS)));
        if (pair % 2 === 0) await plain();
        const tails = await openTails(100, queryOf);
        rates.hundred.push(await ingest(ROUNDS, (offset += ROUNDS)));
        await Bun.sleep(300);
        const seen = tails.events();
        await tails.close();
        if (seen < expected * 0.8 || (expected === 0 && seen > 0)) throw new Error(`BUG: 100 tails saw ${seen} events, expected about ${expected}`);
        if (pair % 2 === 1) await plain();
      }
      out.push({
        what: `bulk ingest entries/s, 100 open tails of ${name} (median of 4 pairs of 20 bodies of 1,000, in alternating order)`,
        "p50 ms": Math.round(median(rates.hundred)),
        "baseline ms": Math.round(median(rates.none)),
        "× baseline": +(median(rates.hundred) / median(rates.none)).toFixed(3),
        target: "≥ 0.9× (cost ≤ 10%)",
      });
    }
    // a tail of a rare tag while bulk ingest runs at full speed: the lag from a probe's 201 to its event
    const rareTail = await s.app.handle(
      new Request(`http://localhost/api/v1/workspace/logs/tail?query=${encodeURIComponent("tag=rare-probe")}`, { headers: { "x-api-key": key } }),
    );
    const rareReader = rareTail.body!.getReader();
    const sent = new Map<number, number>();
    const rareLags: number[] = [];
    const reading = (async () => {
      let k = 0;
      for (let r = await rareReader.read(); !r.done; r = await rareReader.read()) {
        const n = (decoder.decode(r.value).match(/event: entry/g) ?? []).length;
        for (let j = 0; j < n; j++, k++) rareLags.push(performance.now() - (sent.get(k) ?? performance.now()));
      }
    })();
    let probes = 0;
    await ingest(50, (offset += 50), () => sent.set(probes++, performance.now()));
    await Bun.sleep(1000);
    await rareReader.cancel();
    await reading.catch(() => {});
    if (rareLags.length !== probes) throw new Error(`BUG: the rare tail saw ${rareLags.length} of ${probes} probes`);
    rareLags.sort((a, b) => a - b);
    out.push({
      what: "rare-tag tail lag during bulk ingest",
      "p50 ms": +rareLags[Math.floor(rareLags.length / 2)].toFixed(2),
      "p99 ms": +rareLags[rareLags.length - 1].toFixed(2),
      target: "≤ 1,000 ms",
    });
    return out;
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const rows = await benchExplore();
  console.table(rows);
}
