// Contract §17, exactness: random LogQL log queries and count_over_time over a seeded corpus, against a reference
// model of §17 (labels, filters, [start, end), order, limit) and of Prometheus range semantics, written here.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../../helpers/sluice.ts";

let s: TestSluice;
let key = "";
const T0 = Date.parse("2026-11-21T08:00:00.000Z");
const SPAN = 600_000;
const ACTIONS = ["login", "logout", "pay", "pay.refund"];
const LEVELS = ["debug", "info", "warn", "error"];
const REGIONS = ["eu", "us", "ap"];
const WORDS = ["alpha", "beta", "gamma", "delta", "timeout"];

interface Doc {
  id: string;
  ms: number;
  action: string;
  level: string;
  region: string;
  message: string;
}
const corpus: Doc[] = [];

function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = random(35);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];

beforeAll(async () => {
  s = startTestSluice(undefined, { ipRatePerMinute: -1 });
  key = await (await s.workspace()).key("staging", "rw");
  const docs = Array.from({ length: 600 }, () => ({
    action: pick(ACTIONS),
    level: pick(LEVELS),
    region: pick(REGIONS),
    message: `${pick(WORDS)} ${pick(WORDS)} ${Math.floor(rnd() * 100)}`,
    ms: T0 + Math.floor(rnd() * 400) * 1500, // several entries share a millisecond
  }));
  const r = await s.call("POST", `${WS}/logs/bulk`, {
    key,
    body: docs.map((d) =>
      entry({ action: d.action, level: d.level, message: d.message, context: { region: d.region }, clientTimestamp: new Date(d.ms).toISOString() }),
    ),
  });
  expect(r.status).toBe(201);
  const { ids } = (await r.json()) as { ids: string[] };
  for (const [i, d] of docs.entries()) corpus.push({ ...d, id: ids[i] });
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

type Matcher = [name: "action" | "level" | "region", op: "=" | "!=" | "=~" | "!~", value: string];
type LineFilter = [op: "|=" | "!=" | "|~", value: string];

function randomMatcher(): Matcher {
  const name = pick(["action", "level", "region"] as const);
  const values = name === "action" ? ACTIONS : name === "level" ? LEVELS : REGIONS;
  const op = pick(["=", "!=", "=~", "!~"] as const);
  const value = op === "=" || op === "!=" ? pick(values) : pick([`${pick(values).slice(0, 2)}.*`, `${pick(values)}|${pick(values)}`, "pay"]);
  return [name, op, value];
}
const randomFilter = (): LineFilter => {
  const op = pick(["|=", "!=", "|~"] as const);
  return [op, op === "|~" ? `${pick(WORDS)}|${pick(WORDS)} 1` : pick(WORDS)];
};

const labelOf = (d: Doc, name: string) => (name === "region" ? d.region : name === "level" ? d.level : d.action);
const matches = (d: Doc, [name, op, value]: Matcher) => {
  const v = labelOf(d, name);
  const re = new RegExp(`^(?:${value})$`);
  return op === "=" ? v === value : op === "!=" ? v !== value : op === "=~" ? re.test(v) : !re.test(v);
};
const passes = (d: Doc, [op, value]: LineFilter) =>
  op === "|=" ? d.message.includes(value) : op === "!=" ? !d.message.includes(value) : new RegExp(value).test(d.message);
const quote = (v: string) => JSON.stringify(v);
const logql = (ms: Matcher[], fs: LineFilter[]) =>
  `{${ms.map(([n, o, v]) => `${n}${o}${quote(v)}`).join(", ")}}${fs.map(([o, v]) => ` ${o} ${quote(v)}`).join("")}`;
const order = (a: Doc, b: Doc) => a.ms - b.ms || (a.id < b.id ? -1 : 1);

async function get(params: Record<string, string>) {
  const r = await s.app.handle(new Request(`http://localhost/loki/api/v1/query_range?${new URLSearchParams(params)}`, { headers: { "x-api-key": key } }));
  const body = (await r.json()) as any;
  expect({ params, status: r.status }).toEqual({ params, status: 200 });
  return body.data;
}

test("random log queries return exactly the reference's first `limit` entries of [start, end) in direction", async () => {
  let seen = 0;
  for (let round = 0; round < 60; round++) {
    const matchers = [randomMatcher(), ...(rnd() < 0.5 ? [randomMatcher()] : [])];
    const filters = Array.from({ length: Math.floor(rnd() * 3) }, randomFilter);
    const start = T0 + Math.floor(rnd() * SPAN * 0.6);
    const end = start + Math.floor(rnd() * SPAN * 0.6);
    const limit = 1 + Math.floor(rnd() * 120);
    const direction = pick(["forward", "backward"] as const);
    const expected = corpus
      .filter((d) => d.ms >= start && d.ms < end && matchers.every((m) => matches(d, m)) && filters.every((f) => passes(d, f)))
      .sort((a, b) => (direction === "forward" ? order(a, b) : order(b, a)))
      .slice(0, limit)
      .map((d) => [`${d.ms}000000`, d.message]);
    const data = await get({ query: logql(matchers, filters), start: `${start}000000`, end: `${end}000000`, limit: String(limit), direction });
    seen += expected.length;
    // streams are one per entry (sluice_id is merged in), so the answer's order is the streams' order
    expect({ round, got: (data.result as any[]).flatMap((st) => st.values) }).toEqual({ round, got: expected });
  }
  expect(seen).toBeGreaterThan(300); // the rounds are not all empty
});

test("random sum by (level) (count_over_time(…)) equals the reference count of (t − range, t] at every step", async () => {
  let points = 0;
  for (let round = 0; round < 30; round++) {
    const matchers = [randomMatcher()];
    const filters = Array.from({ length: Math.floor(rnd() * 2) }, randomFilter);
    const rangeMs = pick([1000, 1500, 7000, 60_000, 90_000]);
    const stepMs = pick([1500, 5000, 30_000, 60_000]);
    const start = T0 - 60_000 + Math.floor(rnd() * SPAN);
    const end = start + Math.floor(rnd() * 300_000);
    const q = `sum by (level) (count_over_time(${logql(matchers, filters)} [${rangeMs}ms]))`;
    const data = await get({ query: q, start: `${start}000000`, end: `${end}000000`, step: `${stepMs}ms` });
    const expected: Record<string, [number, string][]> = {};
    for (let t = start; t <= end; t += stepMs) {
      const counts = new Map<string, number>();
      for (const d of corpus) {
        if (d.ms > t - rangeMs && d.ms <= t && matchers.every((m) => matches(d, m)) && filters.every((f) => passes(d, f)))
          counts.set(d.level, (counts.get(d.level) ?? 0) + 1);
      }
      for (const [level, n] of counts) (expected[level] ??= []).push([t / 1000, String(n)]);
      points += counts.size;
    }
    const got = Object.fromEntries((data.result as any[]).map((r) => [r.metric.level, r.values]));
    expect({ round, q, got }).toEqual({ round, q, got: expected });
  }
  expect(points).toBeGreaterThan(100);
});
