// Alert evaluation (contract §16) on a real Sluice: the test moves the server's clock and runs the evaluator the server
// runs on its timer (tick), then reads GET /alerts, /alerts/history and /alerts/rules/preview. One test per rule.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { removeDir, startTestSluice, type TestSluice, WS } from "../helpers/sluice.ts";

const A = `${WS}/alerts`;
const BASE = Date.parse("2026-11-27T10:00:00.000Z");
let now = BASE;
let s: TestSluice;
let key: string;

beforeAll(async () => {
  s = startTestSluice(undefined, { clock: () => now, alertMinEveryMs: 1000 });
  key = await (await s.workspace()).key("development", "rw", { scopes: ["*"] });
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

/** fresh gives each test its own workspace environment, so that rules and entries of one test never meet another's. */
async function fresh() {
  key = await (await s.workspace()).key("development", "rw", { scopes: ["*"] });
}

async function write(entries: Record<string, unknown>[], atMs: number) {
  now = atMs;
  const body = entries.map((e) => ({ action: "a", level: "info", clientTimestamp: new Date(atMs).toISOString(), ...e }));
  const r = await s.call("POST", `${WS}/logs/bulk`, { key, body });
  expect(r.status).toBe(201);
}

async function makeRule(over: Record<string, unknown>) {
  const r = await s.call("POST", `${A}/rules`, {
    key,
    body: { name: "r", query: "", condition: { op: ">", threshold: 0 }, window: "1m", every: "1m", ...over },
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { id: string }).id;
}

/** evaluateAt sets the clock and runs the evaluator as its timer does. */
async function evaluateAt(ms: number) {
  now = ms;
  await s.svc.evaluator.tick();
}

type Instance = {
  rule_id: string;
  group: Record<string, string | null> | null;
  state: string;
  value: number | null;
  active_since: string;
  last_evaluated_at: string;
};
const alerts = async (ruleId: string) => ((await (await s.call("GET", A, { key })).json()) as Instance[]).filter((a) => a.rule_id === ruleId);
const history = async (ruleId: string) =>
  (await (await s.call("GET", `${A}/history?rule_id=${ruleId}`, { key })).json()) as {
    at: string;
    from_state: string;
    to_state: string;
    value: number;
    group: unknown;
  }[];

test("evaluation runs at t = k·every (epoch-aligned) over [t − delay − window, t − delay) on the server axis", async () => {
  await fresh();
  const t = BASE + 10 * 60_000; // 10:10:00
  await write([{ level: "error" }], t - 90_000 - 1); // 10:08:29.999: before the window
  await write([{ level: "error" }, { level: "error" }], t - 90_000); // window start, inclusive
  await write([{ level: "error" }], t - 30_001); // last ms inside
  await write([{ level: "error" }], t - 30_000); // window end, exclusive
  const id = await makeRule({ query: "level=error", window: "1m", every: "1m", delay: "30s" });
  await evaluateAt(t + 59_000); // the latest instant is still 10:10:00
  const [a] = await alerts(id);
  expect(a).toMatchObject({ state: "firing", value: 3, group: null, last_evaluated_at: new Date(t).toISOString() });
});

test("without group_by an empty window counts 0, so 'fewer than N' rules fire", async () => {
  await fresh();
  const id = await makeRule({ query: "action=heartbeat", condition: { op: "<", threshold: 1 } });
  await evaluateAt(BASE + 20 * 60_000 + 5);
  const [a] = await alerts(id);
  expect(a).toMatchObject({ state: "firing", value: 0 });
});

test("states go inactive → pending → firing after `for` → inactive, and history lists each transition", async () => {
  await fresh();
  const t0 = BASE + 30 * 60_000;
  const id = await makeRule({ query: "level=error", for: "2m", window: "1m", every: "1m" });
  await write([{ level: "error" }], t0 - 1000);
  await evaluateAt(t0);
  expect((await alerts(id))[0]).toMatchObject({ state: "pending", value: 1 });
  await write([{ level: "error" }], t0 + 59_000);
  await evaluateAt(t0 + 60_000);
  expect((await alerts(id))[0].state).toBe("pending"); // held 1 min of the 2
  await write([{ level: "error" }], t0 + 119_000);
  await evaluateAt(t0 + 120_000);
  expect((await alerts(id))[0]).toMatchObject({ state: "firing", active_since: new Date(t0).toISOString() });
  await evaluateAt(t0 + 180_000); // nothing in the last minute
  expect(await alerts(id)).toEqual([]);
  const h = await history(id);
  expect(h.map((x) => `${x.from_state}→${x.to_state}`)).toEqual(["inactive→pending", "pending→firing", "firing→inactive"]);
  expect(h[2].value).toBe(0);
});

test("a condition that fails while pending returns the group to inactive without firing", async () => {
  await fresh();
  const t0 = BASE + 40 * 60_000;
  const id = await makeRule({ query: "level=error", for: "5m" });
  await write([{ level: "error" }], t0 - 1);
  await evaluateAt(t0);
  await evaluateAt(t0 + 60_000);
  expect(await alerts(id)).toEqual([]);
  expect((await history(id)).map((x) => x.to_state)).toEqual(["pending", "inactive"]);
});

test("group_by splits the value per group (up to 3 fields, tag once per tag, null group for missing values)", async () => {
  await fresh();
  const t = BASE + 50 * 60_000;
  await write(
    [
      { level: "error", tags: ["a", "b"], metadata: { svc: "api" } },
      { level: "error", tags: ["a"], metadata: { svc: "api" } },
      { level: "warn", metadata: { svc: "db" } },
    ],
    t - 1000,
  );
  const id = await makeRule({ group_by: ["level", "tag", "metadata.svc"] });
  await evaluateAt(t);
  const got = (await alerts(id)).map((a) => [JSON.stringify(a.group), a.value]).sort();
  expect(got).toEqual(
    [
      [JSON.stringify({ level: "error", tag: "a", "metadata.svc": "api" }), 2],
      [JSON.stringify({ level: "error", tag: "b", "metadata.svc": "api" }), 1],
      [JSON.stringify({ level: "warn", tag: null, "metadata.svc": "db" }), 1],
    ].sort(),
  );
});

test("more than 1,000 groups in one evaluation puts the rule in state error with a reason", async () => {
  await fresh();
  const t = BASE + 60 * 60_000;
  await write(
    Array.from({ length: 1001 }, (_, i) => ({ metadata: { n: i } })),
    t - 1000,
  );
  const id = await makeRule({ group_by: ["metadata.n"] });
  await evaluateAt(t);
  const a = (await alerts(id)) as (Instance & { reason?: string })[];
  expect(a).toHaveLength(1);
  expect(a[0].state).toBe("error");
  expect(a[0].reason).toContain("1000 groups");
});

test("aggregates: numeric ones take number values only, percentiles are exact nearest-rank", async () => {
  await fresh();
  const t = BASE + 70 * 60_000;
  const ms = [5, 1, 9, 3, 7, 2, 8, 4, 6, 10];
  await write([...ms.map((m) => ({ metadata: { ms: m, user: `u${m % 3}` } })), { metadata: { ms: "11" } }, { metadata: {} }], t - 1000);
  const want: Record<string, number> = { count_distinct: 3, sum: 55, avg: 5.5, min: 1, max: 10, p50: 5, p90: 9, p95: 10, p99: 10 };
  const ids: Record<string, string> = {};
  for (const fn of Object.keys(want)) ids[fn] = await makeRule({ aggregate: { fn, field: fn === "count_distinct" ? "metadata.user" : "metadata.ms" } });
  await evaluateAt(t);
  for (const [fn, value] of Object.entries(want)) expect({ fn, value: (await alerts(ids[fn]))[0]?.value }).toEqual({ fn, value });
});

test("the client axis reads client timestamps", async () => {
  await fresh();
  const t = BASE + 80 * 60_000;
  await write([{ clientTimestamp: new Date(t - 30_000).toISOString() }, { clientTimestamp: new Date(t - 3_600_000).toISOString() }], t - 1000);
  const client = await makeRule({ axis: "client", window: "1m" });
  const server = await makeRule({ axis: "server", window: "1m" });
  await evaluateAt(t);
  expect((await alerts(client))[0].value).toBe(1);
  expect((await alerts(server))[0].value).toBe(2);
});

test("a disabled rule is not evaluated", async () => {
  await fresh();
  const id = await makeRule({ query: "", condition: { op: ">=", threshold: 0 }, enabled: false });
  await evaluateAt(BASE + 90 * 60_000);
  expect(await alerts(id)).toEqual([]);
});

test("states survive a restart: a firing group is still firing after it", async () => {
  await fresh();
  const t = BASE + 100 * 60_000;
  await write([{ level: "fatal" }], t - 1000);
  const id = await makeRule({ query: "level=fatal" });
  await evaluateAt(t);
  const before = await alerts(id);
  await s.close();
  s = startTestSluice(s.dir, { clock: () => now, alertMinEveryMs: 1000 });
  expect(await alerts(id)).toEqual(before);
});

test("GET /alerts lists the value and last_evaluated_at of the latest evaluation, also after a restart", async () => {
  await fresh();
  const t = BASE + 105 * 60_000;
  await write([{ level: "fatal" }], t - 1000);
  const id = await makeRule({ query: "level=fatal" });
  await evaluateAt(t);
  await write([{ level: "fatal" }, { level: "fatal" }], t + 59_000);
  await evaluateAt(t + 60_000);
  const want = [{ state: "firing", value: 2, active_since: new Date(t).toISOString(), last_evaluated_at: new Date(t + 60_000).toISOString() }];
  expect(await alerts(id)).toMatchObject(want);
  await s.close();
  s = startTestSluice(s.dir, { clock: () => now, alertMinEveryMs: 1000 });
  expect(await alerts(id)).toMatchObject(want);
});

test("an evaluation never delays writes: evaluations that change no state are stored together, not a transaction each", async () => {
  await fresh();
  const t = BASE + 110 * 60_000;
  await write([{ level: "fatal" }, { level: "info" }], t - 1000);
  const ids = [await makeRule({ query: "level=fatal" }), await makeRule({ query: "" }), await makeRule({ query: "level=info" })];
  await evaluateAt(t);
  await write([{ level: "fatal" }, { level: "info" }], t + 59_000);
  const store = s.svc.alerts.store;
  const calls = { evaluations: 0, rounds: 0 };
  const [evaluation, readings] = [store.commitEvaluation.bind(store), store.commitReadings.bind(store)];
  store.commitEvaluation = (...a) => {
    calls.evaluations++;
    return evaluation(...a);
  };
  store.commitReadings = (...a) => {
    calls.rounds++;
    return readings(...a);
  };
  try {
    await evaluateAt(t + 60_000);
  } finally {
    store.commitEvaluation = evaluation;
    store.commitReadings = readings;
  }
  expect(calls).toEqual({ evaluations: 0, rounds: 1 });
  for (const id of ids) expect(await alerts(id)).toMatchObject([{ state: "firing", last_evaluated_at: new Date(t + 60_000).toISOString() }]);
});

test("an evaluation never delays writes: a round of many rules gives the event loop back between them", async () => {
  await fresh();
  const t = BASE + 112 * 60_000;
  await write([{ level: "error" }, { level: "info" }], t - 1000);
  for (let i = 0; i < 100; i++) await makeRule({ query: i % 2 ? "level=error" : "", group_by: ["level"], window: "5m" });
  await evaluateAt(t); // every group starts firing; the next round only reads values
  let turn = 0;
  let on = true;
  const next = () => {
    turn++;
    if (on) setImmediate(next);
  };
  setImmediate(next);
  const evaluator = s.svc.evaluator;
  const evaluate = evaluator.evaluate.bind(evaluator);
  const turns = new Set<number>();
  evaluator.evaluate = (...a) => {
    turns.add(turn);
    return evaluate(...a);
  };
  try {
    await evaluateAt(t + 60_000);
  } finally {
    evaluator.evaluate = evaluate;
    on = false;
  }
  expect(turns.size).toBeGreaterThan(1); // one turn for all: a write arriving meanwhile waits for the whole round
});

test("preview gives every evaluation the rule would have made, and its incidents, computed as live evaluation", async () => {
  await fresh();
  const t0 = BASE + 120 * 60_000;
  await write([{ level: "error" }, { level: "error" }], t0 + 10_000);
  await write([{ level: "error" }], t0 + 130_000);
  now = t0 + 10 * 60_000;
  const rule = { name: "p", query: "level=error", condition: { op: ">", threshold: 0 }, window: "1m", every: "1m" };
  const r = await s.call("POST", `${A}/rules/preview`, { key, body: { rule, from: new Date(t0).toISOString(), to: new Date(t0 + 5 * 60_000).toISOString() } });
  expect(r.status).toBe(200);
  const p = (await r.json()) as { evaluations: { at: string; groups: { value: number; state: string }[] }[]; incidents: unknown[] };
  expect(p.evaluations.map((e) => [e.at.slice(11, 19), e.groups[0].value, e.groups[0].state])).toEqual([
    ["12:00:00", 0, "inactive"],
    ["12:01:00", 2, "firing"],
    ["12:02:00", 0, "inactive"],
    ["12:03:00", 1, "firing"],
    ["12:04:00", 0, "inactive"],
  ]);
  expect(p.incidents).toEqual([
    { group: null, started_at: "2026-11-27T12:01:00.000Z", resolved_at: "2026-11-27T12:02:00.000Z", peak: 2 },
    { group: null, started_at: "2026-11-27T12:03:00.000Z", resolved_at: "2026-11-27T12:04:00.000Z", peak: 1 },
  ]);
  const bad = await s.call("POST", `${A}/rules/preview`, {
    key,
    body: { rule: { ...rule, window: "9d" }, from: new Date(t0).toISOString(), to: new Date(t0 + 60_000).toISOString() },
  });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(await bad.json())).toContain('"field":"rule.window"');
});

test("on the server axis an evaluation waits for the writes under way that will be stored inside its window", async () => {
  const ws = await s.workspace();
  key = await ws.key("development", "rw", { scopes: ["*"] });
  const t = BASE + 140 * 60_000;
  const id = await makeRule({ query: "", condition: { op: ">=", threshold: 0 } });
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  s.svc.entries.inFlight.track({ ws: ws.id, env: "development" }, { ms: t - 1, id: "00000000-0000-7000-8000-000000000000" }, held); // a write drawn at t − 1 ms, not yet committed
  now = t;
  let done = false;
  const rule = await (await s.call("GET", `${A}/rules/${id}`, { key })).json();
  const evaluation = s.svc.evaluator.evaluate({ ws: ws.id, env: "development" }, rule, t).then(() => (done = true)); // what tick runs for this rule
  await Bun.sleep(100);
  expect(done).toBe(false);
  release();
  await evaluation;
  expect((await alerts(id))[0]).toMatchObject({ state: "firing", value: 0 }); // it waited; the write stored nothing
});

test("an evaluation that fails puts the rule in state error with the reason, and counts as done until the next instant", async () => {
  const ws = await s.workspace();
  key = await ws.key("development", "rw", { scopes: ["*"] });
  const id = await makeRule({ query: "" });
  const tenant = { ws: ws.id, env: "development" as const };
  const stored = s.svc.alerts.rule(tenant, id);
  await s.svc.alerts.store.put("rule", tenant, id, { ...stored, query: 'message="open' }); // a stored rule its query no longer reads (as after a grammar change)
  const t = BASE + 150 * 60_000;
  await evaluateAt(t);
  const [a] = (await alerts(id)) as (Instance & { reason?: string })[];
  expect(a.state).toBe("error");
  expect(a.reason).toContain("the evaluation failed");
  expect(s.svc.alerts.store.lastEvaluated(tenant, id)).toBe(t);
});
