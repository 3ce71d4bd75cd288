// Exactness (contract §16): for random rules over random data, each evaluation's count per group equals what
// POST /logs/hits returns for the same query, window and group, entries at the window's edges included.
// ALERTS_SEED=<n> replays the same choices.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { evaluateRule } from "../../src/alerts/evaluate.ts";
import type { Rule } from "../../src/alerts/rules.ts";
import { WindowCounts } from "../../src/alerts/window-counts.ts";
import { IdGenerator } from "../../src/ids.ts";
import { checkEntry } from "../../src/ingest/rules.ts";
import { BUILT_IN_PLANS } from "../../src/limits/plans.ts";
import { TimeSlicer } from "../../src/query/slice.ts";
import type { Entry } from "../../src/storage/entries.ts";
import { removeDir, startTestSluice, type TestSluice, WS } from "../helpers/sluice.ts";

const SEED = Number(process.env.ALERTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RULES = 40;
const BASE = Date.parse("2026-11-27T10:00:00.000Z");
const SPAN_MS = 10 * 60_000;
const LEVELS = ["debug", "info", "warn", "error"];
const ACTIONS = ["user.login", "user.logout", "order.paid", "order.failed"];
const QUERIES = [
  "",
  "level=error",
  "level=error,warn",
  "action~order",
  "tag=blue",
  "metadata.code>=500",
  "metadata.code!=500",
  "failed",
  "level!=debug tag!=null",
];
// one field or none: POST /logs/hits' own count; two: the entry-by-entry pass, whose sums per first field must equal hits
const GROUPS = [[], ["level"], ["action"], ["tag"], ["metadata.code"], ["environment"], ["level", "action"], ["tag", "level"], ["metadata.code", "tag"]];
const WINDOWS = ["1s", "30s", "1m", "90s", "5m"];
const DELAYS = ["0s", "1s", "15s", "1m"];

let now = BASE;
let s: TestSluice;
let key: string;
let ws: string;

/** rng is mulberry32: small and seeded. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  return { next, pick, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)) };
}
const r = rng(SEED);

beforeAll(async () => {
  s = startTestSluice(undefined, { clock: () => now, alertMinEveryMs: 1000 });
  const w = await s.workspace();
  ws = w.id;
  key = await w.key("development", "rw", { scopes: ["*"] });
  // writes at increasing server times, many on whole seconds and minutes: the edges of the rules' windows
  const times = Array.from({ length: 150 }, () => BASE + (r.next() < 0.5 ? r.int(0, SPAN_MS / 1000) * 1000 - r.int(0, 1) : r.int(0, SPAN_MS))).sort(
    (a, b) => a - b,
  );
  for (const t of times) {
    now = t;
    expect((await s.call("POST", `${WS}/logs/bulk`, { key, body: randomEntries(t) })).status).toBe(201);
  }
  now = BASE + SPAN_MS + 5 * 60_000;
});
/** randomEntries is 1–4 entries of random level, action, tag and status code, logged up to 2 minutes before `t`. */
function randomEntries(t: number) {
  return Array.from({ length: r.int(1, 4) }, () => ({
    action: r.pick(ACTIONS),
    level: r.pick(LEVELS),
    clientTimestamp: new Date(t - r.int(0, 120_000)).toISOString(),
    tags: r.next() < 0.3 ? [] : [r.pick(["blue", "green", "red"])],
    metadata: r.next() < 0.2 ? {} : { code: r.next() < 0.2 ? String(r.pick([200, 500])) : r.pick([200, 404, 500, 503]) },
  }));
}

afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

test(`each evaluation's count equals POST /logs/hits for the same query, window and group (seed ${SEED})`, async () => {
  for (let i = 0; i < RULES; i++) {
    const body = {
      name: `x${i}`,
      query: r.pick(QUERIES),
      group_by: r.pick(GROUPS),
      axis: r.pick(["server", "client"]),
      window: r.pick(WINDOWS),
      delay: r.pick(DELAYS),
      every: "1s",
      condition: { op: ">=", threshold: 0 },
    };
    const made = await s.call("POST", `${WS}/alerts/rules`, { key, body });
    expect(made.status).toBe(201);
    const rule = (await made.json()) as Rule;
    const at = BASE + r.int(0, SPAN_MS / 1000) * 1000;
    await s.svc.evaluator.evaluate({ ws, env: "development" }, rule, at); // what the evaluator's timer runs at t
    const alerts = ((await (await s.call("GET", `${WS}/alerts`, { key })).json()) as { rule_id: string; group: unknown; value: number }[]).filter(
      (a) => a.rule_id === rule.id,
    );
    const windowMs = { "1s": 1000, "30s": 30_000, "1m": 60_000, "90s": 90_000, "5m": 300_000 }[body.window]!;
    const delayMs = { "0s": 0, "1s": 1000, "15s": 15_000, "1m": 60_000 }[body.delay]!;
    const to = at - delayMs;
    const hitsBody: Record<string, unknown> = {
      query: body.query,
      from: new Date(to - windowMs).toISOString(),
      to: new Date(to).toISOString(),
      step: body.window,
      axis: body.axis,
      limit: 100,
    };
    if (body.group_by.length) hitsBody.groupBy = body.group_by[0];
    const hits = (await (await s.call("POST", `${WS}/logs/hits`, { key, body: hitsBody })).json()) as {
      total: number;
      series: { group: unknown; total: number }[];
    };
    const want = body.group_by.length ? hits.series.filter((x) => x.total > 0).map((x) => [JSON.stringify(x.group), x.total]) : [["null", hits.total]];
    const sums = new Map<string, number>(); // a two-field rule's counts summed over its second field
    for (const a of alerts) {
      const first = body.group_by.length ? JSON.stringify({ [body.group_by[0]]: (a.group as Record<string, string | null>)[body.group_by[0]] }) : "null";
      sums.set(first, (sums.get(first) ?? 0) + a.value);
    }
    const got = body.group_by.length === 2 ? [...sums] : alerts.map((a) => [JSON.stringify(a.group), a.value]);
    expect({ rule: body, at: new Date(at).toISOString(), got: got.sort() }).toEqual({ rule: body, at: new Date(at).toISOString(), got: want.sort() });
  }
});

test(`while blocks commit between evaluations, each evaluation's count equals POST /logs/hits (seed ${SEED})`, async () => {
  const w = await s.workspace();
  const k = await w.key("development", "rw", { scopes: ["*"] });
  const tenant = { ws: w.id, env: "development" as const };
  const counts = new WindowCounts(s.svc.entries); // the evaluator's cells, on their own: they learn of every commit as its do
  const rules: Rule[] = [];
  for (let i = 0; i < 6; i++) {
    const body = {
      name: `y${i}`,
      query: r.pick(QUERIES),
      group_by: r.pick([[], [], ["level"], ["tag"], ["metadata.code"]]),
      window: r.pick(["5s", "30s", "2m", "5m"]),
      delay: r.pick(["0s", "1s", "15s"]),
      every: r.pick(["1s", "5s"]),
      condition: { op: ">=", threshold: 0 },
    };
    const made = await s.call("POST", `${WS}/alerts/rules`, { key: k, body });
    expect(made.status).toBe(201);
    rules.push((await made.json()) as Rule);
  }
  const ms = (d: string) => Number(d.slice(0, -1)) * (d.endsWith("m") ? 60_000 : 1000);
  let t = BASE + 3 * SPAN_MS;
  for (let step = 0; step < 40; step++) {
    t += r.int(1, 15) * 1000 - (r.next() < 0.3 ? r.int(1, 999) : 0);
    now = t;
    const roll = r.next();
    if (roll < 0.6) expect((await s.call("POST", `${WS}/logs/bulk`, { key: k, body: randomEntries(t) })).status).toBe(201);
    else if (roll < 0.9) {
      // a cluster copy catching up: a block stored now at an earlier server time, often inside counted cells
      const at = t - r.int(0, 150_000);
      const drawn = new IdGenerator().next(3, at);
      const entries = randomEntries(at)
        .slice(0, 3)
        .map((raw, i) => ({ ...checkEntry(raw, i, BUILT_IN_PLANS[3]).entry!, id: drawn.ids[i] }) as unknown as Entry);
      await s.svc.entries.append(tenant, drawn.ms, entries, -1);
    } else while ((await s.svc.entries.deleteBefore(tenant, t - r.int(30_000, 200_000), 64)) > 0); // a retention sweep
    for (const rule of rules) {
      const at = Math.floor(t / ms(rule.every)) * ms(rule.every);
      const got = await evaluateRule(s.svc.entries, { ...tenant, floorMs: 0 }, rule, at, new TimeSlicer(10_000), counts);
      const to = at - ms(rule.delay);
      const hitsBody: Record<string, unknown> = {
        query: rule.query,
        from: new Date(to - ms(rule.window)).toISOString(),
        to: new Date(to).toISOString(),
        step: rule.window,
        limit: 100,
      };
      if (rule.group_by.length) hitsBody.groupBy = rule.group_by[0];
      const hits = (await (await s.call("POST", `${WS}/logs/hits`, { key: k, body: hitsBody })).json()) as {
        total: number;
        series: { group: unknown; total: number }[];
      };
      const want = rule.group_by.length ? hits.series.filter((x) => x.total > 0).map((x) => [JSON.stringify(x.group), x.total]) : [["null", hits.total]];
      const values = got.ok ? got.groups.map((g) => [JSON.stringify(g.group), g.value]) : got.reason;
      expect({ rule: rule.query, by: rule.group_by, at, values }).toEqual({ rule: rule.query, by: rule.group_by, at, values: want });
    }
  }
  expect(counts.liveBlocks).toBeGreaterThan(0);
});
