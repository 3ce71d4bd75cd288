// Contract §17, Grafana's Loki data source replayed request by request as its source sends them
// (shared/guide/grafana-loki.md): each answer is checked for what Grafana reads from it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../../helpers/sluice.ts";

let s: TestSluice;
let key = "";
const NOW = Date.now();
const ns = (ms: number) => `${ms}000000`;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(() => {
  s = startTestSluice(undefined, { ipRatePerMinute: -1 });
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

/** grafana sends a request as Grafana's backend proxy does: Basic auth with the key as password, X-Scope-OrgID, ns times. */
async function grafana(path: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  const r = await s.app.handle(
    new Request(`http://localhost/loki/api/v1/${path}?${new URLSearchParams(params)}`, {
      headers: { authorization: `Basic ${Buffer.from(`grafana:${key}`).toString("base64")}`, "x-scope-orgid": "1", "user-agent": "Grafana/12.2.0", ...headers },
    }),
  );
  return { status: r.status, body: (await r.json()) as any };
}

test("Grafana's request sequence: health check, labels, values, series, logs, logs volume, stats", async () => {
  const ws = await s.workspace();
  key = await ws.key("production", "rw");
  const bodies = [
    ...Array.from({ length: 1200 }, (_, i) => ({
      action: "checkout",
      level: i % 10 === 0 ? "error" : "info",
      message: `order ${i} ${i % 10 === 0 ? "failed" : "ok"}`,
      context: { service_name: "shop", region: i % 2 ? "eu" : "us" },
      clientTimestamp: iso(NOW - 300_000 + i * 100),
    })),
    { action: "login", level: "warn", message: "slow", context: { service_name: "auth" }, clientTimestamp: iso(NOW - 200_000) },
  ];
  for (let i = 0; i < bodies.length; i += 500) {
    const r = await s.call("POST", `${WS}/logs/bulk`, { key, body: bodies.slice(i, i + 500).map((b) => entry(b)) });
    expect(r.status).toBe(201);
  }
  // another workspace's entries never show
  const other = await (await s.workspace()).key("production", "rw");
  expect((await s.call("POST", `${WS}/logs/bulk`, { key: other, body: [entry({ action: "elsewhere", clientTimestamp: iso(NOW - 1000) })] })).status).toBe(201);

  // 1. Save & test
  const health = await grafana("query", { query: "vector(1)+vector(1)", time: "4000000000", direction: "" });
  expect(health.status).toBe(200);
  expect(health.body.data.result).toEqual([{ metric: {}, value: [4000000000, "2"] }]);

  // 2. detected_labels probe fails → labels
  expect((await grafana("detected_labels", { start: ns(NOW - 600_000), end: ns(NOW) })).status).toBe(404);
  const labels = await grafana("labels", { start: ns(NOW - 600_000), end: ns(NOW) });
  expect(labels.status).toBe(200);
  expect(labels.body.data).toEqual(["action", "detected_level", "environment", "level", "region", "service_name"]);

  // 3. label values, with and without a selector
  expect((await grafana("label/service_name/values", { start: ns(NOW - 600_000), end: ns(NOW) })).body.data).toEqual(["auth", "shop"]);
  expect((await grafana("label/level/values", { start: ns(NOW - 600_000), end: ns(NOW), query: '{service_name="shop"}' })).body.data).toEqual([
    "error",
    "info",
  ]);

  // 4. series
  const series = await grafana("series", { "match[]": '{service_name="shop"}', start: ns(NOW - 600_000), end: ns(NOW) });
  expect(series.body.data.length).toBe(3); // info in eu and us, error (every tenth, even) in us
  expect(series.body.data.every((l: Record<string, string>) => l.service_name === "shop" && l.environment === "production")).toBe(true);

  // 5. the logs query: newest first, exactly 1,000 of the 1,200 with categorized labels
  const logs = await grafana(
    "query_range",
    { query: '{service_name="shop"}', limit: "1000", direction: "backward", start: ns(NOW - 3_600_000), end: ns(NOW), step: "2000ms" },
    { "x-loki-response-encoding-flags": "categorize-labels", "x-query-tags": "Source=grafana" },
  );
  expect(logs.status).toBe(200);
  expect(logs.body.data.resultType).toBe("streams");
  expect(logs.body.data.encodingFlags).toEqual(["categorize-labels"]);
  const values = (logs.body.data.result as any[]).flatMap((st) => st.values as [string, string, Record<string, unknown>][]);
  expect(values.length).toBe(1000);
  const times = values.map((v) => BigInt(v[0])).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  expect(times[0]).toBe(BigInt(ns(NOW - 300_000 + 1199 * 100)));
  expect(times[999]).toBe(BigInt(ns(NOW - 300_000 + 200 * 100)));
  expect(values.every((v) => typeof (v[2] as any).structuredMetadata.sluice_id === "string")).toBe(true);

  // 6. the logs volume
  const volume = await grafana(
    "query_range",
    {
      query: 'sum by (level, detected_level) (count_over_time({service_name="shop"} | drop __error__[60s]))',
      start: ns(NOW - 600_000),
      end: ns(NOW),
      step: "60000ms",
    },
    { "x-query-tags": "Source=logvolhist" },
  );
  expect(volume.status).toBe(200);
  expect(volume.body.data.resultType).toBe("matrix");
  const totals = Object.fromEntries(
    (volume.body.data.result as any[]).map((r) => [r.metric.level, r.values.reduce((n: number, v: [number, string]) => n + Number(v[1]), 0)]),
  );
  expect(totals).toEqual({ error: 120, info: 1080 }); // ranges of 60 s at steps of 60 s cover each entry once

  // 7. the query size estimate
  const stats = await grafana("index/stats", { query: '{service_name="shop"}', start: ns(NOW - 3_600_000), end: ns(NOW) });
  expect(stats.status).toBe(200);
  expect(stats.body.entries).toBe(1200);
  expect(stats.body.streams).toBe(3);
  expect(stats.body.bytes).toBeGreaterThan(0);

  // 8. fields for Explore: the shape metadataRequest unwraps ({fields, limit}; {values, limit})
  const fields = await grafana("detected_fields", { query: '{service_name="auth"}', start: ns(NOW - 3_600_000), end: ns(NOW), limit: "1000" });
  expect(fields.status).toBe(200);
  expect(fields.body).toEqual({ fields: [], limit: 1000 }); // "slow" holds no json nor logfmt field, and no metadata
  const fieldValues = await grafana("detected_field/level/values", { query: '{service_name="shop"}', start: ns(NOW - 3_600_000), end: ns(NOW) });
  expect(fieldValues.body).toEqual({ values: [], limit: 1000 }); // level is a stream label, not a field

  // 9. build info
  const build = await s.app.handle(new Request("http://localhost/loki/api/v1/status/buildinfo"));
  expect(build.status).toBe(200);
  expect(typeof ((await build.json()) as any).version).toBe("string");
});
