// Contract §17, the Loki query API rule by rule: routes, keys, parameters, times, the entry as Loki sees it, log queries.
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

async function tenant(bodies: Record<string, unknown>[], env: "development" | "production" = "development") {
  const ws = await s.workspace();
  const key = await ws.key(env, "rw");
  if (bodies.length > 0) {
    const r = await s.call("POST", `${WS}/logs/bulk`, { key, body: bodies.map((b) => entry(b)) });
    expect(r.status).toBe(201);
  }
  return key;
}

const loki = async (key: string | undefined, path: string, params: Record<string, string> = {}, headers: Record<string, string> = {}) => {
  const h: Record<string, string> = { ...headers };
  if (key !== undefined && !h.authorization) h["x-api-key"] = key;
  const r = await s.app.handle(new Request(`http://localhost/loki/api/v1/${path}?${new URLSearchParams(params)}`, { headers: h }));
  return { status: r.status, body: (await r.json()) as any };
};

const window = { start: ns(T0 - 3_600_000), end: ns(T0 + 3_600_000) };

test('query vector(1)+vector(1) answers a vector of one sample "2" (Grafana\'s data source test)', async () => {
  const key = await tenant([]);
  const r = await loki(key, "query", { query: "vector(1)+vector(1)", time: "4000000000", direction: "" });
  expect(r.status).toBe(200);
  expect(r.body).toEqual({ status: "success", data: { resultType: "vector", result: [{ metric: {}, value: [4000000000, "2"] }] } });
});

test("keys: X-API-Key, Authorization ApiKey and Bearer, Basic with the key as password; X-Scope-OrgID is ignored", async () => {
  const key = await tenant([{ action: "a", clientTimestamp: iso(T0) }]);
  const basic = `Basic ${Buffer.from(`anyone:${key}`).toString("base64")}`;
  const ways: Record<string, string>[] = [
    { "x-api-key": key },
    { authorization: `ApiKey ${key}` },
    { authorization: `Bearer ${key}` },
    { authorization: basic },
  ];
  for (const headers of ways) {
    const r = await loki(undefined, "query_range", { query: '{action="a"}', ...window }, { ...headers, "x-scope-orgid": "someone-else" });
    expect({ headers, status: r.status, n: r.body.data?.result?.[0]?.values?.length }).toEqual({ headers, status: 200, n: 1 });
  }
  const none = await loki(undefined, "labels");
  expect(none.status).toBe(401);
  expect(none.body.status).toBe("error");
  const wrong = await loki(undefined, "labels", {}, { authorization: "Bearer sk_nope" });
  expect(wrong.status).toBe(401);
});

test("a write-only key may not read: 403", async () => {
  const ws = await s.workspace();
  const w = await ws.key("development", "wo");
  expect((await loki(w, "labels")).status).toBe(403);
});

test("errors take Loki's shape: 400 {status:error, errorType:bad_data, error, message}", async () => {
  const key = await tenant([]);
  const r = await loki(key, "query_range", { query: "{a=" });
  expect(r.status).toBe(400);
  expect(r.body.status).toBe("error");
  expect(r.body.errorType).toBe("bad_data");
  expect(r.body.error).toContain("position");
  expect(r.body.message).toBe(r.body.error);
  expect((await loki(key, "query_range", {})).body.errorType).toBe("bad_data");
});

test("GET and POST: parameters from the URL, and from a form body on POST", async () => {
  const key = await tenant([{ action: "posted", clientTimestamp: iso(T0) }]);
  const form = new URLSearchParams({ query: '{action="posted"}', ...window });
  const post = await s.app.handle(
    new Request("http://localhost/loki/api/v1/query_range", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/x-www-form-urlencoded" },
      body: form,
    }),
  );
  expect(post.status).toBe(200);
  expect(((await post.json()) as any).data.result[0].values.length).toBe(1);
  // a Prometheus-style rule evaluator posts with the parameters in the URL and an empty JSON-typed body
  const url = new URLSearchParams({ query: 'count_over_time({action="posted"}[2h])', time: String(T0 / 1000 + 60) });
  const vm = await s.app.handle(
    new Request(`http://localhost/loki/api/v1/query?${url}`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" } }),
  );
  expect(vm.status).toBe(200);
  expect(((await vm.json()) as any).data.result[0].value[1]).toBe("1");
});

test("times: a number with . is seconds, an integer of at most 10 digits seconds, longer nanoseconds, else RFC 3339; since", async () => {
  const key = await tenant([
    { action: "t", clientTimestamp: iso(T0 - 1) },
    { action: "t", clientTimestamp: iso(T0) },
    { action: "t", clientTimestamp: iso(T0 + 1000) },
  ]);
  const count = async (params: Record<string, string>) =>
    ((await loki(key, "query_range", { query: '{action="t"}', ...params })).body.data.result as any[]).reduce((n, st) => n + st.values.length, 0);
  const s0 = T0 / 1000;
  // [start, end) covers T0 and not T0 − 1 ms nor T0 + 1 s
  expect(await count({ start: `${s0}.000`, end: `${s0}.5` })).toBe(1);
  expect(await count({ start: String(s0), end: String(s0 + 1) })).toBe(1);
  expect(await count({ start: ns(T0), end: ns(T0 + 1000) })).toBe(1);
  expect(await count({ start: iso(T0), end: iso(T0 + 1000) })).toBe(1);
  expect(await count({ start: `${T0}000001`, end: ns(T0 + 1000) })).toBe(0); // one nanosecond after T0: T0 is out
  expect(await count({ start: ns(T0 - 1), end: ns(T0 + 1001) })).toBe(3);
  expect(await count({ end: ns(T0 + 1), since: "1ms" })).toBe(1);
  const bad = await loki(key, "query_range", { query: '{action="t"}', start: "yesterday" });
  expect(bad.status).toBe(400);
  expect(bad.body.errorType).toBe("bad_data");
});

test("log query: exactly the first `limit` entries of [start, end) in direction, ordered by (client_timestamp, id)", async () => {
  const bodies = Array.from({ length: 30 }, (_, i) => ({ action: "ord", message: `m${i}`, clientTimestamp: iso(T0 + Math.floor(i / 3) * 1000) }));
  const key = await tenant(bodies);
  const lines = async (params: Record<string, string>) =>
    ((await loki(key, "query_range", { query: '{action="ord"}', ...window, ...params })).body.data.result as any[]).flatMap((st) =>
      st.values.map((v: string[]) => v),
    );
  const back = await lines({ limit: "7" });
  // three entries share each millisecond; ids increase in input order, so m29, m28, m27 come first backward
  expect(back.map((v) => v[1])).toEqual(["m29", "m28", "m27", "m26", "m25", "m24", "m23"]);
  expect(back[0][0]).toBe(ns(T0 + 9000));
  const fwd = await lines({ limit: "4", direction: "forward" });
  expect(fwd.map((v) => v[1])).toEqual(["m0", "m1", "m2", "m3"]);
  const all = await lines({ limit: "1000", direction: "FORWARD", start: ns(T0 + 1000), end: ns(T0 + 3000) });
  expect(all.map((v) => v[1])).toEqual(["m3", "m4", "m5", "m6", "m7", "m8"]);
  expect((await loki(key, "query_range", { query: '{action="ord"}', limit: "0" })).status).toBe(400);
  expect((await loki(key, "query_range", { query: '{action="ord"}', direction: "sideways" })).status).toBe(400);
});

test("stream labels: environment, level, detected_level, action, service_name, context leaves flattened with _; line is message or metadata JSON", async () => {
  const key = await tenant([
    { action: "lbl", level: "warn", message: "hello", context: { service: { name: "svc" }, region: "eu", "k-8": 5 }, clientTimestamp: iso(T0) },
    { action: "lbl2", level: "error", message: null, metadata: { http: { status: 500 } }, clientTimestamp: iso(T0 + 1) },
  ]);
  const r = await loki(key, "query_range", { query: '{environment="development"}', ...window, direction: "forward" });
  expect(r.body.data.result.map((st: any) => st.values)).toEqual([[[ns(T0), "hello"]], [[ns(T0 + 1), '{"http":{"status":500}}']]]);
  expect(r.body.data.result[0].stream).toEqual({
    environment: "development",
    level: "warn",
    detected_level: "warn",
    action: "lbl",
    service_name: "svc",
    region: "eu",
    k_8: "5",
    sluice_id: expect.any(String),
  });
  const first = r.body.data.result[0].stream;
  expect(first.service_name).toBe("svc");
  const second = r.body.data.result[1].stream;
  expect(second.service_name).toBe("lbl2"); // no context service: the action
  expect(second.metadata_http_status).toBe("500"); // merged in without categorize-labels
});

test("structured metadata: actor_/target_/metadata_ leaves, tags, sluice_id; the third element with categorize-labels, usable in filters and by()", async () => {
  const key = await tenant([
    {
      action: "sm",
      actor: { id: "u1" },
      target: { kind: "doc" },
      metadata: { http: { status: 404 } },
      tags: ["a", "b"],
      message: "x",
      clientTimestamp: iso(T0),
    },
    { action: "sm", actor: { id: "u2" }, metadata: { http: { status: 200 } }, message: "y", clientTimestamp: iso(T0 + 1) },
  ]);
  const r = await loki(
    key,
    "query_range",
    { query: '{action="sm"} | metadata_http_status >= 400', ...window },
    { "x-loki-response-encoding-flags": "categorize-labels" },
  );
  expect(r.body.data.encodingFlags).toEqual(["categorize-labels"]);
  expect(r.body.data.result.length).toBe(1);
  const [value] = r.body.data.result[0].values;
  expect(value[1]).toBe("x");
  expect(value[2].structuredMetadata).toEqual({ actor_id: "u1", target_kind: "doc", metadata_http_status: "404", tags: "a,b", sluice_id: expect.any(String) });
  expect(r.body.data.result[0].stream.actor_id).toBeUndefined();
  const by = await loki(key, "query", { query: 'sum by (actor_id) (count_over_time({action="sm"}[1h]))', time: String(T0 / 1000 + 10) });
  expect(by.body.data.result.map((x: any) => [x.metric, x.value[1]]).sort()).toEqual([
    [{ actor_id: "u1" }, "1"],
    [{ actor_id: "u2" }, "1"],
  ]);
  // without by, structured metadata does not split series
  const plain = await loki(key, "query", { query: 'count_over_time({action="sm"}[1h])', time: String(T0 / 1000 + 10) });
  expect(plain.body.data.result.map((x: any) => x.value[1])).toEqual(["2"]);
});

test("a selector naming another environment than the key's matches nothing (200, empty)", async () => {
  const key = await tenant([{ action: "env", clientTimestamp: iso(T0) }]);
  const r = await loki(key, "query_range", { query: '{environment="production"}', ...window });
  expect(r.status).toBe(200);
  expect(r.body.data.result).toEqual([]);
  expect((await loki(key, "query_range", { query: '{environment=~"dev.*"}', ...window })).body.data.result.length).toBe(1);
});

test("line filters |= != |~ !~ with or; selector regexes fully anchored; label filters with and, or, numbers, durations, bytes", async () => {
  const key = await tenant([
    { action: "lf", message: "GET /a 200 took=15ms size=2KB", clientTimestamp: iso(T0) },
    { action: "lf", message: "POST /b 500 took=2s size=10B", clientTimestamp: iso(T0 + 1) },
    { action: "lfx", message: "GET /c 404 took=1ms size=1MB", clientTimestamp: iso(T0 + 2) },
  ]);
  const lines = async (q: string) =>
    ((await loki(key, "query_range", { query: q, ...window, direction: "forward" })).body.data.result as any[]).flatMap((st) =>
      st.values.map((v: string[]) => v[1].split(" ")[1]),
    );
  expect(await lines('{action="lf"} |= "GET"')).toEqual(["/a"]);
  expect(await lines('{action=~"lf.*"} != "GET"')).toEqual(["/b"]);
  expect(await lines('{action=~"lf"}')).toEqual(["/a", "/b"]); // anchored: lfx is not lf
  expect(await lines('{action=~"lf.*"} |~ "/(a|c)"')).toEqual(["/a", "/c"]);
  expect(await lines('{action=~"lf.*"} |= "/a" or "/b"')).toEqual(["/a", "/b"]);
  expect(await lines('{action=~"lf.*"} !~ "5\\\\d\\\\d" != "/c"')).toEqual(["/a"]);
  expect(await lines('{action=~"lf.*"} | logfmt | took > 10ms')).toEqual(["/a", "/b"]);
  expect(await lines('{action=~"lf.*"} | logfmt | size >= 2KB and took < 1s')).toEqual(["/a", "/c"]);
  expect(await lines('{action=~"lf.*"} | logfmt | took = 2s or size = 1MB')).toEqual(["/b", "/c"]);
  expect(await lines('{action=~"lf.*"} | level = "info", action != "lfx"')).toEqual(["/a", "/b"]);
});

test("anything not supported is a 400 naming the construct", async () => {
  const key = await tenant([]);
  for (const [q, named] of [
    ['{a="b"} | line_format "{{ .a | ToUpper }}"', "{{.a | ToUpper}}"],
    ['{a="b"} | logfmt --strict', "--strict"],
    ['label_replace(vector(1), "a", "$1", "b", "(.*)")', "label_replace"],
    ['rate_counter({a="b"} | unwrap x [1m])', "rate_counter"],
    ['sum_over_time({a="b"}[1m])', "sum_over_time without unwrap"],
  ]) {
    const r = await loki(key, "query_range", { query: q, ...window });
    expect({ q, status: r.status, type: r.body.errorType, named: r.body.error.includes(named) }).toEqual({ q, status: 400, type: "bad_data", named: true });
  }
});

test("detected_labels and /loki/api/v2alpha/tail answer 404, so Grafana falls back", async () => {
  const key = await tenant([]);
  expect((await loki(key, "detected_labels")).status).toBe(404);
  const tail = await s.app.handle(new Request("http://localhost/loki/api/v2alpha/tail", { headers: { "x-api-key": key } }));
  expect(tail.status).toBe(404);
});

test("a hostile regex on a hostile line is answered within 2 s (linear-time RE2)", async () => {
  const key = await tenant([{ action: "re", message: `${"a".repeat(5000)}!`, clientTimestamp: iso(T0) }]);
  const started = performance.now();
  const r = await loki(key, "query_range", { query: '{action=~"(a+)+$"} |~ "(a|a)*(a|aa)*(a*)*b" | action =~ "(x+x+)+y"', ...window });
  expect(r.status).toBe(200);
  expect(r.body.data.result).toEqual([]);
  expect(performance.now() - started).toBeLessThan(2000);
});

test("parsers regexp, pattern, unpack and json/logfmt; line_format and label_format with {{.label}} templates", async () => {
  const key = await tenant([
    { action: "px", message: '10.0.0.1 - GET /a 200 {"user":"ann"}', clientTimestamp: iso(T0) },
    { action: "pu", message: '{"_entry":"inner line","pod":"p1"}', clientTimestamp: iso(T0 + 1) },
  ]);
  const one = async (q: string) => {
    const r = await loki(key, "query_range", { query: q, ...window }, { "x-loki-response-encoding-flags": "categorize-labels" });
    expect({ q, status: r.status }).toEqual({ q, status: 200 });
    const [value] = r.body.data.result[0].values;
    return { line: value[1], parsed: value[2].parsed ?? {} };
  };
  expect((await one('{action="px"} | regexp `^(?P<ip>\\S+) - (?P<method>\\w+)`')).parsed).toEqual({ ip: "10.0.0.1", method: "GET" });
  expect((await one('{action="px"} | pattern "<ip> - <method> <path> <status> <_>"')).parsed).toEqual({
    ip: "10.0.0.1",
    method: "GET",
    path: "/a",
    status: "200",
  });
  expect(await one('{action="pu"} | unpack')).toEqual({ line: "inner line", parsed: { pod: "p1" } });
  expect((await one('{action="px"} | pattern "<ip> - <method> <_>" | line_format "{{.method}} from {{ .ip }} [{{.level}}]"')).line).toBe(
    "GET from 10.0.0.1 [info]",
  );
  const formatted = await one('{action="px"} | pattern "<ip> - <method> <_>" | label_format verb=method, who="{{.ip}}/{{.action}}"');
  expect(formatted.parsed).toEqual({ ip: "10.0.0.1", verb: "GET", who: "10.0.0.1/px" });
  expect((await one('{action="px"} | pattern "<ip> - <method> <_>" | method="GET" | line_format "{{__line__}}!"')).line).toEndWith("}!");
});

test("detected_fields and detected_field/{name}/values: structured metadata and json or logfmt fields of the newest entries", async () => {
  const key = await tenant([
    { action: "df", message: "status=200 took=15ms size=2KB ok=true", actor: { id: "u1" }, clientTimestamp: iso(T0) },
    { action: "df", message: "status=500 took=1s size=1KB ok=false", actor: { id: "u2" }, clientTimestamp: iso(T0 + 1) },
    { action: "dj", message: '{"user":{"name":"ann"},"ratio":0.5}', clientTimestamp: iso(T0 + 2) },
  ]);
  const r = await loki(key, "detected_fields", { query: '{action=~"d."}', ...window, limit: "1000" });
  expect(r.status).toBe(200);
  const byLabel = Object.fromEntries((r.body.fields as any[]).map((f) => [f.label, [f.type, f.cardinality, f.parsers]]));
  expect(byLabel).toEqual({
    actor_id: ["string", 2, null],
    status: ["int", 2, ["logfmt"]],
    took: ["duration", 2, ["logfmt"]],
    size: ["bytes", 2, ["logfmt"]],
    ok: ["boolean", 2, ["logfmt"]],
    user_name: ["string", 1, ["json"]],
    ratio: ["float", 1, ["json"]],
  });
  const values = await loki(key, "detected_field/status/values", { query: '{action=~"d."}', ...window });
  expect(values.body.values).toEqual(["200", "500"]);
  // only the newest `limit` entries are read
  const newest = await loki(key, "detected_fields", { query: '{action=~"d."}', ...window, limit: "1" });
  expect((newest.body.fields as any[]).map((f) => f.label).sort()).toEqual(["ratio", "user_name"]);
});

test("index/volume and index/volume_range: line bytes per value of the selector's labels (or targetLabels)", async () => {
  const key = await tenant([
    { action: "vo", level: "info", message: "aaaa", clientTimestamp: iso(T0 - 2000) },
    { action: "vo", level: "error", message: "bb", clientTimestamp: iso(T0 - 1000) },
    { action: "vo", level: "error", message: "c", clientTimestamp: iso(T0 - 500) },
  ]);
  const r = await loki(key, "index/volume", { query: '{action="vo"}', start: ns(T0 - 60_000), end: ns(T0) });
  expect(r.body.data.resultType).toBe("vector");
  expect(r.body.data.result.map((x: any) => [x.metric, x.value[1]])).toEqual([[{ action: "vo" }, "7"]]);
  const byLevel = await loki(key, "index/volume", { query: '{action="vo"}', start: ns(T0 - 60_000), end: ns(T0), targetLabels: "level" });
  expect(byLevel.body.data.result.map((x: any) => [x.metric, x.value[1]])).toEqual([
    [{ level: "info" }, "4"],
    [{ level: "error" }, "3"],
  ]);
  const range = await loki(key, "index/volume_range", { query: '{action="vo"}', start: ns(T0 - 1500), end: ns(T0), step: "1s" });
  // at each step t the bytes of (t − step, t]: T0 − 1.5 s holds "aaaa", T0 − 0.5 s holds "bb" and "c"
  expect(range.body.data.result).toEqual([
    {
      metric: { action: "vo" },
      values: [
        [(T0 - 1500) / 1000, "4"],
        [(T0 - 500) / 1000, "3"],
      ],
    },
  ]);
});

test("json and logfmt with expressions extract only the named fields, json by path", async () => {
  const key = await tenant([
    { action: "je", message: '{"response":{"code":503,"headers":["a","b"]},"user":{"name.full":"Ann Lee"},"extra":1}', clientTimestamp: iso(T0) },
    { action: "le", message: 'status=200 took=5ms user="bob"', clientTimestamp: iso(T0 + 1) },
  ]);
  const parsed = async (q: string) => {
    const r = await loki(key, "query_range", { query: q, ...window }, { "x-loki-response-encoding-flags": "categorize-labels" });
    expect({ q, status: r.status }).toEqual({ q, status: 200 });
    return r.body.data.result[0].values[0][2].parsed;
  };
  expect(await parsed('{action="je"} | json code="response.code", first=`response.headers[0]`, name=`user["name.full"]`')).toEqual({
    code: "503",
    first: "a",
    name: "Ann Lee",
  });
  expect(await parsed('{action="je"} | json extra')).toEqual({ extra: "1" });
  expect(await parsed('{action="le"} | logfmt status, who="user"')).toEqual({ status: "200", who: "bob" });
  const filtered = await loki(key, "query_range", { query: '{action="je"} | json code="response.code" | code >= 500', ...window });
  expect(filtered.body.data.result.length).toBe(1);
});
