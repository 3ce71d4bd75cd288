// Contract §17, exactness over many blocks: a log query reads newest first and stops once no block left can hold one
// of the first `limit` entries, and a count by column labels adds a block whose client times share one step's range
// without reading them. Blocks here hold narrow, edge-straddling, wide and out-of-order client times, and every
// answer is checked against a reference model written here. How far a read goes: test/unit/loki/first-entries.test.ts.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../../helpers/sluice.ts";

let s: TestSluice;
let key = "";
const MIN = 60_000;
const T0 = Date.parse("2026-11-21T08:00:00.000Z"); // on a minute
const SPAN = 30 * MIN;
const ACTIONS = ["login", "logout", "pay"];
const LEVELS = ["debug", "info", "warn", "error"];

interface Doc {
  id: string;
  ms: number;
  action: string;
  level: string;
  message: string;
}
const corpus: Doc[] = [];
let writes = 0;

function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = random(3517);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];

/** client times of one block: inside a few seconds, across a minute's edge, over the whole span, or the oldest ones last */
function blockTimes(w: number, n: number): number[] {
  const kind = w % 5;
  if (kind === 0) {
    const at = T0 + Math.floor(rnd() * SPAN);
    return Array.from({ length: n }, () => at + Math.floor(rnd() * 3000));
  }
  if (kind === 1) {
    const edge = T0 + MIN * (1 + Math.floor(rnd() * 28));
    return Array.from({ length: n }, (_, i) => edge + (i % 5) - 2); // edge − 2 … edge + 2
  }
  if (kind === 2) return Array.from({ length: n }, () => T0 + Math.floor(rnd() * SPAN));
  if (kind === 3) return Array.from({ length: n }, () => T0 + Math.floor(rnd() * 2 * MIN)); // old client times, written late
  return Array.from({ length: n }, () => T0 + SPAN - 3 * MIN + Math.floor(rnd() * 3 * MIN)); // the newest
}

beforeAll(async () => {
  s = startTestSluice(undefined, { ipRatePerMinute: -1 });
  key = await (await s.workspace()).key("staging", "rw");
  for (let w = 0; w < 150; w++) {
    const docs = blockTimes(w, 5 + Math.floor(rnd() * 25)).map((ms) => ({
      ms,
      action: pick(ACTIONS),
      level: pick(LEVELS),
      message: `w${w} ${pick(["alpha", "beta"])}`,
    }));
    const r = await s.call("POST", `${WS}/logs/bulk`, {
      key,
      body: docs.map((d) => entry({ action: d.action, level: d.level, message: d.message, clientTimestamp: new Date(d.ms).toISOString() })),
    });
    expect(r.status).toBe(201);
    const { ids } = (await r.json()) as { ids: string[] };
    for (const [i, d] of docs.entries()) corpus.push({ ...d, id: ids[i] });
    writes++;
  }
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

type Matcher = [name: "action" | "level", op: "=" | "!=" | "=~", value: string];
const randomMatcher = (): Matcher => {
  const name = pick(["action", "level"] as const);
  const values = name === "action" ? ACTIONS : LEVELS;
  const op = pick(["=", "!=", "=~"] as const);
  return [name, op, op === "=~" ? `${pick(values)}|${pick(values)}` : pick(values)];
};
const matches = (d: Doc, [name, op, value]: Matcher) => {
  const v = name === "level" ? d.level : d.action;
  return op === "=" ? v === value : op === "!=" ? v !== value : new RegExp(`^(?:${value})$`).test(v);
};
const selector = (ms: Matcher[]) => `{${ms.map(([n, o, v]) => `${n}${o}${JSON.stringify(v)}`).join(", ")}}`;
const order = (a: Doc, b: Doc) => a.ms - b.ms || (a.id < b.id ? -1 : 1);

async function get(params: Record<string, string>) {
  const r = await s.app.handle(new Request(`http://localhost/loki/api/v1/query_range?${new URLSearchParams(params)}`, { headers: { "x-api-key": key } }));
  const body = (await r.json()) as any;
  expect({ params, status: r.status }).toEqual({ params, status: 200 });
  return body.data;
}

test("log queries over blocks of overlapping, edge-straddling and out-of-order client times return exactly the reference's first `limit` entries", async () => {
  expect(writes).toBe(150);
  let seen = 0;
  for (let round = 0; round < 80; round++) {
    const matchers = rnd() < 0.3 ? [] : [randomMatcher(), ...(rnd() < 0.3 ? [randomMatcher()] : [])];
    const line = rnd() < 0.3 ? pick(["alpha", "beta"]) : undefined;
    const start = T0 - MIN + Math.floor(rnd() * SPAN * 0.5);
    const end = start + Math.floor(rnd() * SPAN);
    const limit = 1 + Math.floor(rnd() * 40);
    const direction = pick(["forward", "backward"] as const);
    const expected = corpus
      .filter((d) => d.ms >= start && d.ms < end && matchers.every((m) => matches(d, m)) && (!line || d.message.includes(line)))
      .sort((a, b) => (direction === "forward" ? order(a, b) : order(b, a)))
      .slice(0, limit)
      .map((d) => [`${d.ms}000000`, d.message]);
    const query = `${selector(matchers.length ? matchers : [["level", "=~", ".+"]])}${line ? ` |= ${JSON.stringify(line)}` : ""}`;
    const data = await get({ query, start: `${start}000000`, end: `${end}000000`, limit: String(limit), direction });
    seen += expected.length;
    expect({ round, query, got: (data.result as any[]).flatMap((st) => st.values) }).toEqual({ round, query, got: expected });
  }
  expect(seen).toBeGreaterThan(800);
});

test("sum by (level|action) of count_over_time and rate over column labels equals the reference count of (t − range, t] at every step", async () => {
  let points = 0;
  for (let round = 0; round < 40; round++) {
    const matchers = rnd() < 0.4 ? [] : [randomMatcher()];
    const by = pick([["level"], ["action"], ["level", "action"]]);
    const rangeMs = pick([MIN, MIN, 2 * MIN, 30_000, 7000]);
    const stepMs = pick([MIN, MIN, 30_000, 5000]);
    const rate = rnd() < 0.3;
    const start = T0 - MIN + MIN * Math.floor(rnd() * 20) + (rnd() < 0.3 ? Math.floor(rnd() * 2000) : 0);
    const end = start + Math.floor(rnd() * 20 * MIN);
    const inner = `${rate ? "rate" : "count_over_time"}(${selector(matchers.length ? matchers : [["level", "=~", ".+"]])} [${rangeMs}ms])`;
    const q = `sum by (${by.join(", ")}) (${inner})`;
    const data = await get({ query: q, start: `${start}000000`, end: `${end}000000`, step: `${stepMs}ms` });
    const expected: Record<string, [number, string][]> = {};
    for (let t = start; t <= end; t += stepMs) {
      const counts = new Map<string, number>();
      for (const d of corpus) {
        if (d.ms > t - rangeMs && d.ms <= t && matchers.every((m) => matches(d, m))) {
          const group = JSON.stringify(by.map((name) => (name === "level" ? d.level : d.action)));
          counts.set(group, (counts.get(group) ?? 0) + 1);
        }
      }
      for (const [group, n] of counts) (expected[group] ??= []).push([t / 1000, String(rate ? n / (rangeMs / 1000) : n)]);
      points += counts.size;
    }
    const got = Object.fromEntries((data.result as any[]).map((r) => [JSON.stringify(by.map((name) => r.metric[name])), r.values]));
    expect({ round, q, got }).toEqual({ round, q, got: expected });
  }
  expect(points).toBeGreaterThan(300);
});

test("a block whose client times straddle a step's edge counts each entry in its own step", async () => {
  const edge = T0 + 40 * MIN; // beyond the corpus
  const times = [edge - 1, edge, edge, edge + 1, edge + MIN - 1, edge + MIN];
  const r = await s.call("POST", `${WS}/logs/bulk`, {
    key,
    body: times.map((ms, i) => entry({ action: "edge", level: i % 2 ? "warn" : "error", message: "edge", clientTimestamp: new Date(ms).toISOString() })),
  });
  expect(r.status).toBe(201);
  const data = await get({
    query: 'sum by (level) (count_over_time({action="edge"}[1m]))',
    start: `${edge}000000`,
    end: `${edge + 2 * MIN}000000`,
    step: "60s",
  });
  const got = Object.fromEntries((data.result as any[]).map((x) => [x.metric.level, x.values]));
  // (edge − 1m, edge]: edge − 1, edge, edge; (edge, edge + 1m]: edge + 1, edge + 1m − 1, edge + 1m
  expect(got).toEqual({
    error: [
      [edge / 1000, "2"],
      [(edge + MIN) / 1000, "1"],
    ],
    warn: [
      [edge / 1000, "1"],
      [(edge + MIN) / 1000, "2"],
    ],
  });
  // inside one step's range the block is counted whole, its client times unread: the same counts
  const one = await get({
    query: 'sum by (level) (count_over_time({action="edge"}[5m]))',
    start: `${edge + 2 * MIN}000000`,
    end: `${edge + 2 * MIN}000000`,
    step: "60s",
  });
  expect(Object.fromEntries((one.result as any[]).map((x) => [x.metric.level, x.values]))).toEqual({
    error: [[(edge + 2 * MIN) / 1000, "3"]],
    warn: [[(edge + 2 * MIN) / 1000, "3"]],
  });
});

test("a block whose client times jump back and forth across steps' edges counts each entry in its own step", async () => {
  const edge = T0 + 50 * MIN; // beyond the corpus and the test before
  // out of order: each entry's step differs from the one before it, and some sit on an edge itself
  const times = [edge + 1, edge - 1, edge + MIN, edge, edge + 1, edge - MIN + 1, edge + MIN + 1, edge - MIN, edge + 2];
  const r = await s.call("POST", `${WS}/logs/bulk`, {
    key,
    body: times.map((ms) => entry({ action: "jump", level: "info", message: "jump", clientTimestamp: new Date(ms).toISOString() })),
  });
  expect(r.status).toBe(201);
  const data = await get({
    query: 'sum by (level) (count_over_time({action="jump"}[1m]))',
    start: `${edge - MIN}000000`,
    end: `${edge + 2 * MIN}000000`,
    step: "60s",
  });
  const counts = (t: number) => times.filter((ms) => ms > t - MIN && ms <= t).length;
  const expected = [edge - MIN, edge, edge + MIN, edge + 2 * MIN].filter((t) => counts(t) > 0).map((t) => [t / 1000, String(counts(t))]);
  expect((data.result as any[]).map((x) => x.values)).toEqual([expected]);
});

test("with categorize-labels the newest entries come grouped into one stream per label set, in order of first appearance", async () => {
  const start = T0 - MIN;
  const end = T0 + SPAN;
  const r = await s.app.handle(
    new Request(
      `http://localhost/loki/api/v1/query_range?${new URLSearchParams({ query: '{level=~"warn|error"}', start: `${start}000000`, end: `${end}000000`, limit: "40" })}`,
      {
        headers: { "x-api-key": key, "x-loki-response-encoding-flags": "categorize-labels" },
      },
    ),
  );
  expect(r.status).toBe(200);
  const got = ((await r.json()) as any).data.result.map((st: any) => [st.stream.level, st.stream.action, st.values.map((v: string[]) => v[0])]);
  const newest = corpus
    .filter((d) => d.level === "warn" || d.level === "error")
    .sort((a, b) => order(b, a))
    .slice(0, 40);
  const expected = new Map<string, [string, string, string[]]>();
  for (const d of newest) {
    const name = `${d.level} ${d.action}`;
    if (!expected.has(name)) expected.set(name, [d.level, d.action, []]);
    expected.get(name)![2].push(`${d.ms}000000`);
  }
  expect(got).toEqual([...expected.values()]);
  expect(expected.size).toBeLessThan(40); // some streams hold several entries
});
