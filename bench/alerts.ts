// alerts bench: the CPU one round of 100 alert rules costs (the evaluator's own evaluations, at one instant) over
// synthetic entries spread across a day, as a share of one core per 10 s period (contract §16 asks at most 10%).
// Baseline in the same run: the same rules' windows counted through POST /logs/hits (app.handle), each count rule's
// value checked against it (a difference stops the run with BUG:). Then how soon a notice follows the evaluation that
// decided it (alerts-notice.ts), single-POST latency without and with the rules evaluated, paired in this run
// (alerts-writes.ts), and the first round after a start (no counts kept across it) with POSTs beside it.
// BENCH_ALERT_ENTRIES (1,000,000) sets the size.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Rule } from "../src/alerts/rules.ts";
import { compose } from "../src/compose.ts";
import { IdGenerator } from "../src/ids.ts";
import { checkEntry } from "../src/ingest/rules.ts";
import { BUILT_IN_PLANS, PlanTable } from "../src/limits/plans.ts";
import type { Entry } from "../src/storage/entries.ts";
import { syntheticEntry } from "./data.ts";
import { noticeLatency } from "./alerts-notice.ts";
import { bulkCost, latencies, postsDuring, writeLatency } from "./alerts-writes.ts";

const ENTRIES = Number(process.env.BENCH_ALERT_ENTRIES ?? 1_000_000);
const RULES = 100;
const BLOCK = 1000;
const SPAN_MS = 86_400_000;
const T0 = Date.UTC(2026, 10, 26);
const QUERIES = ["level=error", "level=error,fatal", "metadata.status_code>=500", "tag=svc-3", "action~login", "actor.role=admin level=warn", "timeout", ""];
const GROUPS = [[], [], ["level"], ["tag"], ["metadata.status_code"]];
const WINDOWS = ["1m", "5m", "15m", "1h"];

/** cpuMs is this process's CPU time so far, user and system. */
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export async function benchAlerts() {
  const dir = mkdtempSync(join(tmpdir(), "sluice-abench-"));
  // the server's clock runs from where the bench last set it, so that POSTs one after another get their own milliseconds
  let now = T0 + SPAN_MS;
  let setAt = performance.now();
  const clockNow = () => now + Math.floor(performance.now() - setAt);
  const setClock = (ms: number) => {
    now = ms;
    setAt = performance.now();
  };
  const options = {
    dataDir: dir,
    plans: new PlanTable(),
    adminToken: "bench",
    log: () => {},
    ipRatePerMinute: -1,
    clock: clockNow,
    alertMinEveryMs: 10_000,
  };
  let s = compose(options);
  try {
    const ws = await s.admin.createWorkspace({ name: "bench", plan: "unlimited" });
    const key = (await s.admin.createKey(ws.id, { environment: "production", type: "rw", scopes: ["*"] })).key;
    const tenant = { ws: ws.id, env: "production" as const };
    const ids = new IdGenerator();
    const blocks = Math.ceil(ENTRIES / BLOCK);
    const t0 = performance.now();
    for (let b = 0; b < blocks; b++) {
      const raws = Array.from({ length: Math.min(BLOCK, ENTRIES - b * BLOCK) }, (_, i) => syntheticEntry(b * BLOCK + i));
      const { ms, ids: fresh } = ids.next(raws.length, T0 + Math.floor((b * SPAN_MS) / blocks));
      const entries = raws.map((r, i) => ({ ...checkEntry(r, i, BUILT_IN_PLANS[3]).entry!, id: fresh[i] }) as unknown as Entry);
      await s.entries.append(tenant, ms, entries, -1);
    }
    await s.entries.settled();
    console.error(`loaded ${ENTRIES} entries in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const call = async (path: string, body: unknown, k = key) => {
      const r = await s.app.handle(
        new Request(`http://localhost/api/v1/workspace${path}`, {
          method: "POST",
          headers: { "x-api-key": k, "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      );
      if (r.status >= 300) throw new Error(`BUG: ${path} answered ${r.status} ${await r.text()}`);
      // biome-ignore lint/suspicious/noExplicitAny: each answer is checked where it is read
      return r.json() as Promise<any>;
    };
    const rules: Rule[] = [];
    for (let i = 0; i < RULES; i++) {
      const body = {
        name: `r${i}`,
        query: QUERIES[i % QUERIES.length],
        group_by: GROUPS[i % GROUPS.length],
        window: WINDOWS[i % WINDOWS.length],
        every: "10s",
        condition: { op: ">=", threshold: 0 },
      };
      rules.push(await call("/alerts/rules", body));
    }
    /** round runs the evaluator's tick at the next 10 s instant: every rule is due; its CPU and wall time */
    const round = async () => {
      setClock((Math.floor(clockNow() / 10_000) + 1) * 10_000 + 1000);
      const wall = performance.now();
      const cpu = cpuMs();
      await s.evaluator.tick();
      return { cpu: cpuMs() - cpu, wall: performance.now() - wall };
    };
    const first = await round(); // every group starts firing: transitions, notices decided
    const steady = await round(); // the groups keep their states: what each 10 s costs from then on
    const at = Math.floor(now / 10_000) * 10_000;
    const [roundCpu, roundWall] = [steady.cpu, steady.wall];
    // the baseline: the same windows counted by POST /logs/hits; each rule's groups must equal its series
    const hitsWall = performance.now();
    const hitsCpu = cpuMs();
    // biome-ignore lint/suspicious/noExplicitAny: each answer is checked where it is read
    const answers: any[] = [];
    for (const r of rules) {
      const windowMs = { "1m": 60_000, "5m": 300_000, "15m": 900_000, "1h": 3_600_000 }[r.window]!;
      const body: Record<string, unknown> = {
        query: r.query,
        from: new Date(at - windowMs).toISOString(),
        to: new Date(at).toISOString(),
        step: r.window,
        limit: 100,
      };
      if (r.group_by.length) body.groupBy = r.group_by[0];
      answers.push(await call("/logs/hits", body));
    }
    const baseCpu = cpuMs() - hitsCpu;
    const baseWall = performance.now() - hitsWall;
    const states = s.alerts.alerts(tenant);
    rules.forEach((r, i) => {
      const mine = states.filter((a) => a.rule_id === r.id).map((a) => [JSON.stringify(a.group), a.value]);
      const want = r.group_by.length
        ? answers[i].series.filter((x: { total: number }) => x.total > 0).map((x: { group: unknown; total: number }) => [JSON.stringify(x.group), x.total])
        : [["null", answers[i].total]];
      if (JSON.stringify(mine.sort()) !== JSON.stringify(want.sort()))
        throw new Error(`BUG: rule ${r.name} (${r.query}) evaluated ${JSON.stringify(mine)}, /logs/hits counts ${JSON.stringify(want)}`);
    });
    const share = (ms: number) => `${((100 * ms) / 10_000).toFixed(2)}% of one core per 10 s`;
    const out = [
      { what: "the first round (every group starts firing)", cpu_ms: first.cpu.toFixed(0), wall_ms: first.wall.toFixed(0), cost: share(first.cpu) },
      {
        what: `a round of ${RULES} rules (every 10s) over ${ENTRIES.toLocaleString("en")} entries`,
        cpu_ms: roundCpu.toFixed(0),
        wall_ms: roundWall.toFixed(0),
        cost: share(roundCpu),
      },
      { what: "baseline: the same windows through POST /logs/hits", cpu_ms: baseCpu.toFixed(0), wall_ms: baseWall.toFixed(0), cost: share(baseCpu) },
    ];
    console.table(out);
    const devKey = (await s.admin.createKey(ws.id, { environment: "development", type: "rw", scopes: ["*"] })).key;
    const notices = await noticeLatency(s, setClock, clockNow, call, devKey);
    console.table([{ what: "notice after the round whose evaluation decided it", ...notices }]);
    const single = { action: "bench.write", level: "info", clientTimestamp: new Date(T0 + SPAN_MS).toISOString() };
    const post = async () => void (await call("/logs", single));
    const other = await s.admin.createWorkspace({ name: "no rules", plan: "unlimited" });
    const otherKey = (await s.admin.createKey(other.id, { environment: "production", type: "rw", scopes: ["*"] })).key;
    const writes = await writeLatency(async () => void (await call("/logs", single, otherKey)), post, round);
    console.table(writes.pooled);
    // the first round after a start: a clean stop saves the count rules' cells and the start adopts those whose blocks
    // are unchanged; once alone for its CPU, then after a second start with POSTs beside it, and POSTs over as long a
    // span without a round after it
    const stops: number[] = [];
    const starts: number[] = [];
    const restart = async () => {
      let t = performance.now();
      await s.close();
      stops.push(performance.now() - t);
      t = performance.now();
      s = compose(options);
      starts.push(performance.now() - t);
      await postsDuring(post, Bun.sleep(3000)); // the start's own work (indexes loaded, code warmed) is not the round's
    };
    await restart();
    const alone = await round();
    await restart();
    const wall = performance.now();
    const during = await postsDuring(post, round());
    const span = performance.now() - wall;
    const after = await postsDuring(post, Bun.sleep(span));
    console.table([
      { what: "the first round after a start", cpu_ms: alone.cpu.toFixed(0), wall_ms: alone.wall.toFixed(0), cost: share(alone.cpu) },
      { what: "the next round", cpu_ms: (await round()).cpu.toFixed(0) },
      { what: "a clean stop (saves the cells), each of the two", wall_ms: stops.map((ms) => ms.toFixed(0)).join(", ") },
      { what: "the start until it serves (adopts the cells), each of the two", wall_ms: starts.map((ms) => ms.toFixed(0)).join(", ") },
    ]);
    const restarted = [
      latencies(
        "single POST begun while the first round after a start ran",
        during.map((p) => p.ms),
      ),
      latencies(
        "  as long a span right after it, no evaluation",
        after.map((p) => p.ms),
      ),
    ];
    console.table(restarted);
    // last: what the bulk bodies leave in the newest cells would be counted again by a first round after a start
    const bulkBody = (i: number) =>
      Array.from({ length: BLOCK }, (_, k) => ({ ...syntheticEntry(ENTRIES + i * BLOCK + k), clientTimestamp: single.clientTimestamp }));
    const bulk = await bulkCost(
      async (i) => (await call("/logs/bulk", bulkBody(i), otherKey)).count,
      async (i) => (await call("/logs/bulk", bulkBody(i))).count,
    );
    console.table(bulk);
    return { rounds: out, notices, writes, bulk, restart: { cpu: alone.cpu, wall: alone.wall, posts: restarted } };
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await benchAlerts();
