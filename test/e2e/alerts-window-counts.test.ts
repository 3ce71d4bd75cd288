// A count rule's kept cells (window-counts.ts): an evaluation adds up cells earlier evaluations counted, so each test
// changes the entries inside a window after its cells were counted and checks the next evaluation against POST
// /logs/hits over the same window. One test per way the entries of a counted cell change.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { evaluateRule } from "../../src/alerts/evaluate.ts";
import type { Rule } from "../../src/alerts/rules.ts";
import { WindowCounts } from "../../src/alerts/window-counts.ts";
import { IdGenerator } from "../../src/ids.ts";
import { checkEntry } from "../../src/ingest/rules.ts";
import { BUILT_IN_PLANS } from "../../src/limits/plans.ts";
import { TimeSlicer } from "../../src/query/slice.ts";
import { openDatabases } from "../../src/storage/db.ts";
import { type Entry, EntryStore } from "../../src/storage/entries.ts";
import { UsageStore } from "../../src/storage/usage.ts";
import { removeDir, startTestSluice, type TestSluice, WS } from "../helpers/sluice.ts";

const BASE = Date.parse("2026-11-27T10:00:00.000Z");
const LEVELS = ["info", "warn", "error"];
let now = BASE;
let s: TestSluice;
let key: string;
let tenant: { ws: string; env: "development" };

beforeAll(async () => {
  s = startTestSluice(undefined, { clock: () => now, alertMinEveryMs: 1000 });
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

/** fresh gives each test its own workspace environment. */
async function fresh() {
  const w = await s.workspace();
  key = await w.key("development", "rw", { scopes: ["*"] });
  tenant = { ws: w.id, env: "development" };
}

/** store commits `n` entries at server time `ms` straight into storage, as a cluster copy catching up does: at any time. */
async function store(ms: number, n: number, level = (i: number) => LEVELS[i % LEVELS.length], into: Pick<EntryStore, "append"> = s.svc.entries) {
  const raws = Array.from({ length: n }, (_, i) => ({ action: "a", level: level(i), clientTimestamp: new Date(ms).toISOString() }));
  const drawn = new IdGenerator().next(n, ms); // a generator of its own: one shared would not go back in time
  const entries = raws.map((r, i) => ({ ...checkEntry(r, i, BUILT_IN_PLANS[3]).entry!, id: drawn.ids[i] }) as unknown as Entry);
  await into.append(tenant, drawn.ms, entries, -1);
}

async function makeRule(over: Record<string, unknown>): Promise<Rule> {
  const body = { name: "r", query: "", condition: { op: ">=", threshold: 0 }, window: "1m", every: "10s", ...over };
  const r = await s.call("POST", `${WS}/alerts/rules`, { key, body });
  expect(r.status).toBe(201);
  return (await r.json()) as Rule;
}

/** evaluated is what the evaluator stores for the rule at `at`, per group, sorted. */
async function evaluated(rule: Rule, at: number) {
  now = at;
  await s.svc.evaluator.evaluate(tenant, rule, at);
  const all = (await (await s.call("GET", `${WS}/alerts`, { key })).json()) as { rule_id: string; group: unknown; value: number }[];
  return all
    .filter((a) => a.rule_id === rule.id)
    .map((a) => [JSON.stringify(a.group), a.value])
    .sort();
}

/** counted is what POST /logs/hits counts over the rule's window at `at`, in the same shape. */
async function counted(rule: Rule, at: number, windowMs: number) {
  const body: Record<string, unknown> = {
    query: rule.query,
    from: new Date(at - windowMs).toISOString(),
    to: new Date(at).toISOString(),
    step: `${windowMs}ms`,
  };
  if (rule.group_by.length) body.groupBy = rule.group_by[0];
  const hits = (await (await s.call("POST", `${WS}/logs/hits`, { key, body })).json()) as { total: number; series: { group: unknown; total: number }[] };
  if (!rule.group_by.length) return [["null", hits.total]];
  return hits.series
    .filter((x) => x.total > 0)
    .map((x) => [JSON.stringify(x.group), x.total])
    .sort();
}

test("a count rule's cells: entries stored later at a server time inside a counted window are counted by the next evaluation", async () => {
  await fresh();
  const t = BASE + 10 * 60_000;
  for (let k = 1; k <= 30; k++) await store(t - k * 1700, 3);
  const rules = [await makeRule({ query: "level=error" }), await makeRule({ group_by: ["level"], window: "5m" }), await makeRule({ query: "level!=warn" })];
  for (const r of rules) expect(await evaluated(r, t)).toEqual(await counted(r, t, r.window === "5m" ? 300_000 : 60_000));
  await store(t - 25_000, 4); // inside cells counted at t, before t + 10 s's window ends
  await store(t - 59_000, 2);
  for (const r of rules) {
    const want = await counted(r, t + 10_000, r.window === "5m" ? 300_000 : 60_000);
    expect(await evaluated(r, t + 10_000)).toEqual(want);
  }
});

test("a count rule's cells: entries committed while an evaluation counts are not kept as counted", async () => {
  await fresh();
  const t = BASE + 20 * 60_000;
  for (let k = 1; k <= 20; k++) await store(t - k * 2900, 2);
  const rule = await makeRule({ query: "" });
  const counts = new WindowCounts(s.svc.entries);
  const scope = { ...tenant, floorMs: 0 };
  let pauses = 0;
  // the count pauses before each block; once it has passed the newest ones, entries land among them
  const slice = {
    due: () => true,
    async pause() {
      if (++pauses === 4) for (const ms of [t - 1, t - 2000, t - 4000]) await store(ms, 5);
    },
  };
  const first = await evaluateRule(s.svc.entries, scope, rule, t, slice, counts);
  expect(pauses).toBeGreaterThan(4);
  const again = await evaluateRule(s.svc.entries, scope, rule, t, new TimeSlicer(10_000), counts);
  const want = await counted(rule, t, 60_000);
  expect(first.ok && first.groups[0].value).not.toEqual(want[0][1]); // the count under way missed them
  expect(again.ok && again.groups.map((g) => [JSON.stringify(g.group), g.value])).toEqual(want);
});

test("a count rule's cells: retention deleting inside a counted window takes the deleted entries out of the next evaluation", async () => {
  await fresh();
  const t = BASE + 30 * 60_000;
  for (let k = 1; k <= 40; k++) await store(t - k * 1400, 2);
  const rule = await makeRule({ query: "level=info,error" });
  const before = await evaluated(rule, t);
  expect(before).toEqual(await counted(rule, t, 60_000));
  while ((await s.svc.entries.deleteBefore(tenant, t - 20_000, 7)) > 0); // a retention sweep whose floor lies inside the window
  const want = await counted(rule, t, 60_000);
  expect(want).not.toEqual(before);
  expect(await evaluated(rule, t)).toEqual(want);
});

test("a count rule's cells: retention deleting entries counted only as they committed takes them out of the next evaluation", async () => {
  await fresh();
  const t = BASE + 35 * 60_000;
  const rule = await makeRule({ query: "" });
  await evaluated(rule, t); // nothing stored yet: each cell of the window is counted as blocks commit, none by reading
  for (let k = 1; k <= 20; k++) await store(t + k * 1000, 2);
  const later = t + 30_000;
  expect(await evaluated(rule, later)).toEqual([["null", 40]]);
  while ((await s.svc.entries.deleteBefore(tenant, t + 10_500, 64)) > 0);
  const want = await counted(rule, later, 60_000);
  expect(want).toEqual([["null", 20]]);
  expect(await evaluated(rule, later)).toEqual(want);
});

test("a count rule's cells: a cell counted as blocks committed, left below the live range when a later one is let go, takes an entry stored in it later", async () => {
  await fresh();
  const t = BASE + 37 * 60_000;
  // windows end 3 min before the evaluation: the cell [t, t + 10 s) is the last one of the window at t + 3 min 10 s
  const rule = await makeRule({ query: "", window: "5m", delay: "3m" });
  const windowMs = 300_000;
  const delayMs = 180_000;
  await evaluated(rule, t + 30_000); // nothing stored yet: from here on cells are counted as blocks commit
  await store(t + 5000, 2);
  await store(t + 30 * 60_000, 3); // a cell far ahead, let go by the next sweep of unused cells
  expect(await evaluated(rule, t + 190_000)).toEqual([["null", 2]]); // the sweep: the live range now starts past the far cell
  await store(t + 7000, 4); // a copy catching up, inside the cell counted as blocks committed
  const want = await counted(rule, t + 200_000 - delayMs, windowMs);
  expect(want).toEqual([["null", 6]]);
  expect(await evaluated(rule, t + 200_000)).toEqual(want);
});

test("a count rule's cells: after a restart, entries stored inside a window counted before it are counted", async () => {
  await fresh();
  const t = BASE + 40 * 60_000;
  const rule = await evaluatedOverAMinute(t);
  await restart();
  await store(t - 3000, 6);
  expect(await evaluated(rule, t + 10_000)).toEqual(await counted(rule, t + 10_000, 60_000));
});

/** evaluatedOverAMinute stores 12 writes in the minute before t, and evaluates a 1m count rule by level at t (checked against hits). */
async function evaluatedOverAMinute(t: number) {
  for (let k = 1; k <= 12; k++) await store(t - k * 4500, 3);
  const rule = await makeRule({ group_by: ["level"], window: "1m" });
  expect(await evaluated(rule, t)).toEqual(await counted(rule, t, 60_000));
  return rule;
}

/** restart stops the server cleanly and starts it again on the same data directory; `whileDown` works on that directory between. */
async function restart(whileDown?: (entries: EntryStore) => Promise<unknown>) {
  await s.close();
  if (whileDown) {
    // another process on the data directory: an import writing straight into storage, a retention sweep
    const dbs = openDatabases(s.dir);
    const entries = new EntryStore(dbs, new UsageStore(dbs.usage));
    await whileDown(entries);
    await entries.settled();
    await dbs.root.close();
    await entries.close();
  }
  s = startTestSluice(s.dir, { clock: () => now, alertMinEveryMs: 1000 });
}

test("a count rule's cells: a clean stop keeps them, and the first evaluation after the start counts only the new cell", async () => {
  await fresh();
  const t = BASE + 50 * 60_000;
  const rule = await evaluatedOverAMinute(t);
  await restart();
  await store(t + 4000, 5); // in the one cell no evaluation has counted
  expect(s.svc.evaluator.freshMs).toBe(0);
  expect(await evaluated(rule, t + 10_000)).toEqual(await counted(rule, t + 10_000, 60_000));
  expect(s.svc.evaluator.freshMs).toBe(10_000); // [t, t + 10 s) counted; the 50 s before it from the saved cells
});

test("a count rule's cells: a saved cell whose range got a block while the server was down is dropped at the start", async () => {
  await fresh();
  const t = BASE + 60 * 60_000;
  const rule = await evaluatedOverAMinute(t);
  await restart((entries) => store(t - 31_000, 4, undefined, entries)); // at a server time inside a saved cell
  const want = await counted(rule, t + 10_000, 60_000);
  expect(await evaluated(rule, t + 10_000)).toEqual(want);
  expect(s.svc.evaluator.freshMs).toBe(10_000); // the cell the import changed; the new one is known empty (no block stored after t)
});

test("a count rule's cells: a saved cell whose blocks retention deleted while the server was down is dropped at the start", async () => {
  await fresh();
  const t = BASE + 70 * 60_000;
  const rule = await evaluatedOverAMinute(t);
  await restart(async (entries) => {
    while ((await entries.deleteBefore(tenant, t - 42_000, 64)) > 0); // its floor inside the saved cells
  });
  expect(await evaluated(rule, t + 10_000)).toEqual(await counted(rule, t + 10_000, 60_000));
  expect(s.svc.evaluator.freshMs).toBe(10_000); // [t − 50 s, t − 40 s), which lost blocks; the new cell is known empty
});

test("a count rule's cells: blocks committed after an evaluation are counted into its cells as they commit, so the next one counts none afresh", async () => {
  await fresh();
  const t = BASE + 80 * 60_000;
  const rule = await evaluatedOverAMinute(t); // no block is stored after t: from t on, blocks are counted as they commit
  const before = s.svc.evaluator.freshMs;
  for (const ms of [t, t + 2500, t + 9999]) await store(ms, 3); // the new cell's first and last milliseconds among them
  expect(await evaluated(rule, t + 10_000)).toEqual(await counted(rule, t + 10_000, 60_000));
  expect(s.svc.evaluator.freshMs - before).toBe(0);
});

test("a count rule's cells: a coarse cell whose fine cells were all counted as blocks committed is their sum", async () => {
  await fresh();
  const COARSE_MS = 64 * 10_000; // a rule every 10 s: fine cells of 10 s, coarse ones of 64 of them
  const t = Math.ceil((BASE + 90 * 60_000) / COARSE_MS) * COARSE_MS;
  for (let ms = t - 890_000; ms < t; ms += 37_000) await store(ms, 2);
  const rule = await makeRule({ group_by: ["level"], window: "15m" });
  expect(await evaluated(rule, t)).toEqual(await counted(rule, t, 900_000));
  const before = s.svc.evaluator.freshMs;
  for (let ms = t; ms < t + 650_000; ms += 41_000) await store(ms, 2);
  const at = t + 650_000;
  expect(await evaluated(rule, at)).toEqual(await counted(rule, at, 900_000));
  // only [t − 250 s, t) afresh, inside a coarse cell the first evaluation counted whole; [t, t + 640 s) summed
  expect(s.svc.evaluator.freshMs - before).toBe(250_000);
});

test("a count rule's cells: retention deleting inside cells counted as blocks commit takes the deleted entries out", async () => {
  await fresh();
  const t = BASE + 110 * 60_000;
  const rule = await evaluatedOverAMinute(t);
  for (const ms of [t + 1000, t + 4000, t + 7000]) await store(ms, 3);
  while ((await s.svc.entries.deleteBefore(tenant, t + 5000, 64)) > 0); // a floor inside the cell being counted
  expect(await evaluated(rule, t + 10_000)).toEqual(await counted(rule, t + 10_000, 60_000));
});

test("a count rule's cells: past the bound on kept counts, cells are no longer counted as blocks commit, and values stay exact", async () => {
  await fresh();
  const t = BASE + 120 * 60_000;
  for (let k = 1; k <= 10; k++) await store(t - k * 1000 + 300, 1);
  const rule = await makeRule({ window: "10s", every: "1s" }); // cells of 1 s
  const bound = 8;
  const counts = new WindowCounts(s.svc.entries, bound);
  const scope = { ...tenant, floorMs: 0 };
  const valueAt = async (at: number) => {
    const got = await evaluateRule(s.svc.entries, scope, rule, at, new TimeSlicer(10_000), counts);
    return [["null", got.ok ? got.groups[0].value : undefined]];
  };
  expect(await valueAt(t)).toEqual(await counted(rule, t, 10_000));
  for (let k = 0; k < 6; k++) await store(t + k * 1000 + 100, 2); // each in a cell of its own
  expect(await valueAt(t + 6000)).toEqual(await counted(rule, t + 6000, 10_000));
  expect(counts.kept).toBeLessThanOrEqual(bound);
});

test("a count rule's cells: a clean stop keeps the cells counted as blocks committed, those that hold no match too", async () => {
  await fresh();
  const t = BASE + 130 * 60_000;
  for (let k = 1; k <= 12; k++) await store(t - k * 4500, 3);
  const rule = await makeRule({ query: "level=error", window: "1m" });
  expect(await evaluated(rule, t)).toEqual(await counted(rule, t, 60_000));
  for (const ms of [t + 1000, t + 12_000, t + 23_000]) await store(ms, 2, () => "info"); // none matches
  expect(await evaluated(rule, t + 30_000)).toEqual(await counted(rule, t + 30_000, 60_000));
  await restart();
  await store(t + 34_000, 3);
  expect(await evaluated(rule, t + 40_000)).toEqual(await counted(rule, t + 40_000, 60_000));
  expect(s.svc.evaluator.freshMs).toBe(10_000); // [t + 30 s, t + 40 s) alone
});
