// /metrics in Prometheus text format, and one structured access-log line per request that never holds a key or a body.
import { afterAll, describe, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS } from "../helpers/sluice.ts";

const lines: Record<string, unknown>[] = [];
const s = startTestSluice(undefined, { accessLog: (l) => void lines.push(l) });
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

/** sample reads one series' value from the exposition text. */
const sample = (text: string, series: string): number => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? NaN : Number(line.slice(series.length + 1));
};
const scrape = async () => {
  await Bun.sleep(5); // metrics are recorded just after each response is sent
  const r = await s.call("GET", "/metrics");
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("text/plain");
  return r.text();
};

describe("metrics", () => {
  test("GET /metrics counts requests by route, method and status, entries ingested and body bytes", async () => {
    const ws = await s.workspace();
    const key = await ws.key("development", "rw");
    const before = await scrape();
    const bulk = Array.from({ length: 7 }, () => entry({ message: "counted" }));
    expect((await s.call("POST", `${WS}/logs/bulk`, { key, body: bulk })).status).toBe(201);
    expect((await s.call("POST", `${WS}/logs`, { key, body: entry() })).status).toBe(201);
    expect((await s.call("GET", `${WS}/logs/${crypto.randomUUID()}`, { key })).status).toBe(404);
    const after = await scrape();
    const bulkSeries = 'sluice_http_requests_total{route="/api/v1/workspace/logs/bulk",method="POST",status="201"}';
    expect((sample(after, bulkSeries) || 0) - (sample(before, bulkSeries) || 0)).toBe(1);
    expect(sample(after, 'sluice_http_requests_total{route="/api/v1/workspace/logs/:id",method="GET",status="404"}')).toBeGreaterThanOrEqual(1);
    expect(sample(after, "sluice_entries_ingested_total") - (sample(before, "sluice_entries_ingested_total") || 0)).toBe(8);
    const bytesSeries = 'sluice_request_body_bytes_total{route="/api/v1/workspace/logs/bulk"}';
    expect(sample(after, bytesSeries) - (sample(before, bytesSeries) || 0)).toBe(Buffer.byteLength(JSON.stringify(bulk)));
  });

  test("GET /metrics has latency histograms, the LMDB file size, full-text segments and process metrics", async () => {
    const text = await scrape();
    expect(text).toContain('sluice_http_request_duration_seconds_bucket{le="0.005",route="/api/v1/workspace/logs/bulk",method="POST"}');
    expect(sample(text, "sluice_lmdb_file_bytes")).toBeGreaterThan(0);
    expect(sample(text, 'sluice_fulltext_segments{state="active"}')).toBeGreaterThanOrEqual(1);
    expect(text).toContain("sluice_process_cpu_seconds_total");
  });

  test("GET /metrics counts rate-limit rejections by error code", async () => {
    const t = startTestSluice(undefined, {
      plans: [
        {
          code: "tiny",
          logs_per_month: -1,
          log_retention_days: 30,
          requests_per_minute: 1,
          validate_requests_per_minute: -1,
          max_log_size: 1000,
          max_batch_size: 10,
          max_metadata_depth: 3,
          max_tags: 5,
        },
      ],
    });
    const ws = await t.workspace("tiny");
    const key = await ws.key("development", "rw");
    expect((await t.call("GET", `${WS}/usage`, { key })).status).toBe(200);
    expect((await t.call("GET", `${WS}/usage`, { key })).status).toBe(429);
    await Bun.sleep(5);
    const text = await (await t.call("GET", "/metrics")).text();
    expect(sample(text, 'sluice_rate_limit_rejections_total{code="RATE_LIMIT_PLAN_EXCEEDED"}')).toBe(1);
    await t.close();
    removeDir(t.dir);
  });
});

describe("access log", () => {
  test("every request writes one access-log line with its request_id, route, status, duration and body bytes", async () => {
    const ws = await s.workspace();
    const key = await ws.key("development", "rw");
    lines.length = 0;
    const body = entry();
    const r = await s.call("POST", `${WS}/logs`, { key, body });
    const missing = await s.call("GET", "/nowhere");
    const { id } = (await r.clone().json()) as { id: string };
    await s.call("GET", `${WS}/logs/${id}?x=1`, { key });
    await Bun.sleep(5);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ msg: "request", request_id: r.headers.get("x-request-id"), method: "POST", route: "/api/v1/workspace/logs", status: 201 });
    expect(lines[1]).toMatchObject({ request_id: missing.headers.get("x-request-id"), route: "unmatched", status: 404 });
    expect(lines.map((l) => l.path)).toEqual(["/api/v1/workspace/logs", "/nowhere", `/api/v1/workspace/logs/${id}`]); // the path sent, without its query
    expect(lines[0].duration_ms).toBeGreaterThan(0); // it waited for a commit
    expect(lines[0].body_bytes).toBe(Buffer.byteLength(JSON.stringify(body)));
    expect(lines[1].body_bytes).toBe(0);
  });

  test("the access log never holds an API key, the admin token, a body or a query string", async () => {
    const ws = await s.workspace();
    const key = await ws.key("development", "rw");
    lines.length = 0;
    const secretWord = `secret-${crypto.randomUUID()}`;
    await s.call("POST", `${WS}/logs`, { key, body: entry({ message: secretWord }) });
    await s.call("GET", `${WS}/logs?message=${secretWord}`, { headers: { authorization: `ApiKey ${key}` } });
    await s.call("POST", `${WS}/logs/query`, { key, body: { query: secretWord } });
    await s.admin("GET", "/workspaces");
    await Bun.sleep(5);
    const text = JSON.stringify(lines);
    expect(lines).toHaveLength(4);
    expect(lines[1].path).toBe(`${WS}/logs`);
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(-20));
    expect(text).not.toContain(secretWord);
    expect(text).not.toContain("test-admin-token");
  });
});
