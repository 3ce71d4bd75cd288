// Contract §17, metric queries: Prometheus range semantics ((t − range, t], points at start + k·step ≤ end), range and
// vector aggregations, binary operators, and Grafana's logs-volume query.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../../helpers/sluice.ts";

let s: TestSluice;
beforeAll(() => {
  s = startTestSluice(undefined, { ipRatePerMinute: -1 });
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

const T0 = Date.parse("2026-11-20T10:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();
const ns = (ms: number) => `${ms}000000`;

async function tenant(bodies: Record<string, unknown>[]) {
  const key = await (await s.workspace()).key("development", "rw");
  const r = await s.call("POST", `${WS}/logs/bulk`, { key, body: bodies.map((b) => entry(b)) });
  expect(r.status).toBe(201);
  return key;
}

const loki = async (key: string, path: string, params: Record<string, string>) => {
  const r = await s.app.handle(new Request(`http://localhost/loki/api/v1/${path}?${new URLSearchParams(params)}`, { headers: { "x-api-key": key } }));
  return { status: r.status, body: (await r.json()) as any };
};
const points = (body: any) =>
  Object.fromEntries((body.data.result as any[]).map((r) => [JSON.stringify(r.metric), r.values.map(([t, v]: [number, string]) => [t, Number(v)])]));

test("count_over_time counts (t − range, t] exactly; points at start + k·step ≤ end; empty ranges give no point", async () => {
  // one entry a second from T0 to T0 + 9 s
  const key = await tenant(Array.from({ length: 10 }, (_, i) => ({ action: "c", clientTimestamp: iso(T0 + i * 1000) })));
  const r = await loki(key, "query_range", { query: 'count_over_time({action="c"}[3s])', start: ns(T0), end: ns(T0 + 10_000), step: "3s" });
  expect(r.status).toBe(200);
  expect(r.body.data.resultType).toBe("matrix");
  const s0 = T0 / 1000;
  // at T0: (T0−3s, T0] holds T0 only; at T0+3s: T0+1..T0+3 → 3; at T0+9s: 7, 8, 9 → 3; the last point is T0+9s ≤ end
  expect(Object.values(points(r.body))).toEqual([
    [
      [s0, 1],
      [s0 + 3, 3],
      [s0 + 6, 3],
      [s0 + 9, 3],
    ],
  ]);
  const late = await loki(key, "query_range", { query: 'count_over_time({action="c"}[1s])', start: ns(T0 + 9500), end: ns(T0 + 20_000), step: "500ms" });
  // (9.5−1, 9.5] holds 9; (10−1, 10] holds 9 too (9 s < t ≤ 10 s is false for 9 s: excluded) → only 9.5 has a point
  expect(Object.values(points(late.body))).toEqual([[[s0 + 9.5, 1]]]);
});

test("more than 11,000 points is a 400; step as a duration or seconds", async () => {
  const key = await tenant([{ action: "p", clientTimestamp: iso(T0) }]);
  const q = 'count_over_time({action="p"}[1m])';
  const many = await loki(key, "query_range", { query: q, start: ns(T0), end: ns(T0 + 11_000_000), step: "1s" });
  expect(many.status).toBe(400);
  expect(many.body.errorType).toBe("bad_data");
  const edge = await loki(key, "query_range", { query: q, start: ns(T0), end: ns(T0 + 10_999_000), step: "1" });
  expect(edge.status).toBe(200);
  expect((await loki(key, "query_range", { query: q, start: ns(T0), end: ns(T0 + 60_000), step: "0" })).status).toBe(400);
});

test("rate, bytes_over_time, bytes_rate, absent_over_time, offset", async () => {
  const key = await tenant([
    { action: "r", message: "abcd", clientTimestamp: iso(T0 - 500) },
    { action: "r", message: "é", clientTimestamp: iso(T0 - 100) },
  ]);
  const at = (q: string, t = T0) => loki(key, "query", { query: q, time: ns(t) }).then((r) => r.body.data.result.map((x: any) => Number(x.value[1])));
  expect(await at('rate({action="r"}[2s])')).toEqual([1]);
  expect(await at('bytes_over_time({action="r"}[1s])')).toEqual([6]);
  expect(await at('bytes_rate({action="r"}[2s])')).toEqual([3]);
  expect(await at('absent_over_time({action="r"}[1s])')).toEqual([]);
  expect(await at('absent_over_time({action="none"}[1s])')).toEqual([1]);
  expect(await at('count_over_time({action="r"}[1s] offset 1s)', T0 + 1000)).toEqual([2]);
  expect(await at('count_over_time({action="r"}[1s] offset 2s)', T0 + 1000)).toEqual([]);
});

test("vector aggregations by and without, topk, bottomk, count, avg, min, max, stddev", async () => {
  const key = await tenant([
    ...Array.from({ length: 3 }, () => ({ action: "v1", level: "error", clientTimestamp: iso(T0 - 10) })),
    ...Array.from({ length: 2 }, () => ({ action: "v2", level: "error", clientTimestamp: iso(T0 - 10) })),
    { action: "v3", level: "info", clientTimestamp: iso(T0 - 10) },
  ]);
  const at = async (q: string) => {
    const r = await loki(key, "query", { query: q, time: ns(T0) });
    expect(r.status).toBe(200);
    return (r.body.data.result as any[]).map((x) => [x.metric, Number(x.value[1])]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  };
  const inner = 'count_over_time({action=~"v.*"}[1m])';
  expect(await at(`sum by (level) (${inner})`)).toEqual([
    [{ level: "error" }, 5],
    [{ level: "info" }, 1],
  ]);
  expect(await at(`sum(${inner}) by (level)`)).toEqual(await at(`sum by (level) (${inner})`));
  expect(await at(`sum(${inner})`)).toEqual([[{}, 6]]);
  expect(await at(`count(${inner})`)).toEqual([[{}, 3]]);
  expect(await at(`max(${inner})`)).toEqual([[{}, 3]]);
  expect(await at(`min(${inner})`)).toEqual([[{}, 1]]);
  expect(await at(`avg(${inner})`)).toEqual([[{}, 2]]);
  expect(await at(`stdvar(${inner})`)).toEqual([[{}, 2 / 3]]);
  const top = await at(`topk(1, sum by (action) (${inner}))`);
  expect(top).toEqual([[{ action: "v1" }, 3]]);
  expect(await at(`bottomk(1, sum by (action) (${inner}))`)).toEqual([[{ action: "v3" }, 1]]);
  const without = await at(`sum without (level, detected_level, environment, service_name, sluice_id) (${inner})`);
  expect(without.map(([m]) => Object.keys(m).sort())).toEqual([["action"], ["action"], ["action"]]);
});

test("binary operators: arithmetic with scalars, comparisons filter (or give 0/1 with bool), vector matching on labels, and/or/unless", async () => {
  const key = await tenant([
    ...Array.from({ length: 4 }, () => ({ action: "b1", clientTimestamp: iso(T0 - 10) })),
    { action: "b2", clientTimestamp: iso(T0 - 10) },
  ]);
  const at = async (q: string) => {
    const r = await loki(key, "query", { query: q, time: ns(T0) });
    expect({ q, status: r.status }).toEqual({ q, status: 200 });
    if (r.body.data.resultType === "scalar") return Number(r.body.data.result[1]);
    return (r.body.data.result as any[]).map((x) => [x.metric.action ?? null, Number(x.value[1])]).sort();
  };
  const c = 'sum by (action) (count_over_time({action=~"b."}[1m]))';
  expect(await at(`${c} * 2 + 1`)).toEqual([
    ["b1", 9],
    ["b2", 3],
  ]);
  expect(await at(`${c} > 2`)).toEqual([["b1", 4]]);
  expect(await at(`${c} > bool 2`)).toEqual([
    ["b1", 1],
    ["b2", 0],
  ]);
  expect(await at(`${c} / ${c}`)).toEqual([
    ["b1", 1],
    ["b2", 1],
  ]);
  expect(await at(`${c} and (${c} > 2)`)).toEqual([["b1", 4]]);
  expect(await at(`${c} unless (${c} > 2)`)).toEqual([["b2", 1]]);
  expect(await at("2 ^ 3 - 1")).toBe(7);
  expect(await at("vector(2) * 3")).toEqual([[null, 6]]);
});

test("Grafana's logs-volume query: sum by (level, detected_level) (count_over_time(<expr> | drop __error__[$__auto]))", async () => {
  const key = await tenant([
    { action: "vol", level: "error", message: "a", clientTimestamp: iso(T0 + 1000) },
    { action: "vol", level: "error", message: "b", clientTimestamp: iso(T0 + 61_000) },
    { action: "vol", level: "info", message: "c", clientTimestamp: iso(T0 + 61_500) },
  ]);
  const r = await loki(key, "query_range", {
    query: 'sum by (level, detected_level) (count_over_time({action="vol"} |= "" | json | drop __error__[1m]))',
    start: ns(T0),
    end: ns(T0 + 120_000),
    step: "60000ms",
  });
  expect(r.status).toBe(200);
  const s0 = T0 / 1000;
  expect(points(r.body)).toEqual({
    [JSON.stringify({ level: "error", detected_level: "error" })]: [
      [s0 + 60, 1],
      [s0 + 120, 1],
    ],
    [JSON.stringify({ level: "info", detected_level: "info" })]: [[s0 + 120, 1]],
  });
  const older = await loki(key, "query_range", {
    query: 'sum by (level) (count_over_time({action="vol"}[1m]))',
    start: ns(T0),
    end: ns(T0 + 120_000),
    step: "60s",
  });
  expect(Object.keys(points(older.body)).sort()).toEqual([JSON.stringify({ level: "error" }), JSON.stringify({ level: "info" })]);
});

test("json and logfmt produce labels that split series and filter; __error__ marks lines they cannot read", async () => {
  const key = await tenant([
    { action: "j", message: '{"status":200,"user":{"name":"ann"}}', clientTimestamp: iso(T0 - 10) },
    { action: "j", message: '{"status":500,"user":{"name":"bob"}}', clientTimestamp: iso(T0 - 10) },
    { action: "j", message: "not json", clientTimestamp: iso(T0 - 10) },
  ]);
  const at = async (q: string) =>
    ((await loki(key, "query", { query: q, time: ns(T0) })).body.data.result as any[])
      .map((x) => [x.metric.user_name ?? x.metric.__error__ ?? null, Number(x.value[1])])
      .sort();
  expect(await at('sum by (user_name) (count_over_time({action="j"} | json | status >= 500 [1m]))')).toEqual([["bob", 1]]);
  expect(await at('sum by (__error__) (count_over_time({action="j"} | json | __error__ != "" [1m]))')).toEqual([["JSONParserErr", 1]]);
  expect(await at('sum(count_over_time({action="j"} | json | drop __error__ [1m]))')).toEqual([[null, 3]]);
});

test("unwrap: sum/avg/min/max/first/last/stddev/stdvar/quantile_over_time and rate over a label, duration() and bytes(), grouped by", async () => {
  const key = await tenant([
    { action: "u", message: "took=100ms size=1KB n=1 route=/a", clientTimestamp: iso(T0 - 30) },
    { action: "u", message: "took=2s size=3KB n=4 route=/a", clientTimestamp: iso(T0 - 20) },
    { action: "u", message: "took=300ms size=2KB n=7 route=/b", clientTimestamp: iso(T0 - 10) },
    { action: "u", message: "took=oops size=x n=oops route=/b", clientTimestamp: iso(T0 - 5) },
  ]);
  const at = async (q: string) => {
    const r = await loki(key, "query", { query: q, time: ns(T0) });
    expect({ q, status: r.status }).toEqual({ q, status: 200 });
    return (r.body.data.result as any[]).map((x) => [x.metric.route ?? null, Number(x.value[1])]).sort();
  };
  const base = '{action="u"} | logfmt';
  expect(await at(`sum(sum_over_time(${base} | unwrap n [1m]))`)).toEqual([[null, 12]]);
  expect(await at(`sum_over_time(${base} | unwrap n | __error__="" [1m]) by (route)`)).toEqual([
    ["/a", 5],
    ["/b", 7],
  ]);
  expect(await at(`avg_over_time(${base} | unwrap n [1m]) by (route)`)).toEqual([
    ["/a", 2.5],
    ["/b", 7],
  ]);
  expect(await at(`max_over_time(${base} | unwrap duration(took) [1m]) by (route)`)).toEqual([
    ["/a", 2],
    ["/b", 0.3],
  ]);
  expect(await at(`min_over_time(${base} | unwrap bytes(size) [1m]) by (route)`)).toEqual([
    ["/a", 1000],
    ["/b", 2000],
  ]);
  expect(await at(`first_over_time(${base} | unwrap n [1m]) by (route)`)).toEqual([
    ["/a", 1],
    ["/b", 7],
  ]);
  expect(await at(`last_over_time(${base} | unwrap n [1m]) by (route)`)).toEqual([
    ["/a", 4],
    ["/b", 7],
  ]);
  expect(await at(`quantile_over_time(0.5, ${base} | unwrap n [1m]) by (route)`)).toEqual([
    ["/a", 2.5],
    ["/b", 7],
  ]);
  expect(await at(`stdvar_over_time(${base} | unwrap n [1m]) by (route)`)).toEqual([
    ["/a", 2.25],
    ["/b", 0],
  ]);
  expect(await at(`stddev_over_time(${base} | unwrap n [1m]) by (route)`)).toEqual([
    ["/a", 1.5],
    ["/b", 0],
  ]);
  expect(await at(`sum(rate(${base} | unwrap n [2s]))`)).toEqual([[null, 6]]);
});

test("vector matching: on (…) and ignoring (…) pair samples one-to-one; group_left (…) many-to-one with included labels", async () => {
  const key = await tenant([
    ...Array.from({ length: 6 }, (_, i) => ({ action: "m1", level: i < 4 ? "error" : "info", clientTimestamp: iso(T0 - 10) })),
    ...Array.from({ length: 2 }, () => ({ action: "m2", level: "error", clientTimestamp: iso(T0 - 10) })),
  ]);
  const at = async (q: string) => {
    const r = await loki(key, "query", { query: q, time: ns(T0) });
    expect({ q, status: r.status, error: r.body.error }).toEqual({ q, status: 200, error: undefined });
    return (r.body.data.result as any[]).map((x) => [x.metric, Number(x.value[1])]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  };
  const byBoth = 'sum by (action, level) (count_over_time({action=~"m."}[1m]))';
  const byAction = 'sum by (action) (count_over_time({action=~"m."}[1m]))';
  // the share of each level in its action: many (action, level) to one (action)
  expect(await at(`${byBoth} / on (action) group_left ${byAction}`)).toEqual([
    [{ action: "m1", level: "error" }, 4 / 6],
    [{ action: "m1", level: "info" }, 2 / 6],
    [{ action: "m2", level: "error" }, 1],
  ]);
  expect(await at(`${byBoth} / ignoring (level) group_left ${byAction}`)).toEqual(await at(`${byBoth} / on (action) group_left ${byAction}`));
  expect(await at(`sum by (level) (count_over_time({action="m1"}[1m])) - on (level) sum by (level) (count_over_time({action="m2"}[1m]))`)).toEqual([
    [{ level: "error" }, 2],
  ]);
  // group_right: the right side repeats; the kept value of a comparison is the left operand's
  expect(await at(`${byAction} >= on (action) group_right ${byBoth}`)).toEqual([
    [{ action: "m1", level: "error" }, 6],
    [{ action: "m1", level: "info" }, 6],
    [{ action: "m2", level: "error" }, 2],
  ]);
  const r = await loki(key, "query", { query: `${byBoth} / on (action) ${byAction}`, time: ns(T0) });
  expect(r.status).toBe(400); // two (action, level) samples of m1 match one: many-to-one needs group_left
});
