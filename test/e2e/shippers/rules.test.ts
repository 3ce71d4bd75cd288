// Contract §11, what every shipper route shares: logs:write, the key's environment, 429 with Retry-After and nothing
// stored, OTLP's partialSuccess in the request's encoding, counters by protocol and reason, and the rejection list.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ExportLogsServiceRequest, ExportLogsServiceResponse } from "../../../src/ingest/protocols/schemas.ts";
import { BUILT_IN_PLANS, type Plan } from "../../../src/limits/plans.ts";
import { storedEntries } from "../../helpers/shippers.ts";
import { removeDir, startTestSluice, WS, type TestSluice } from "../../helpers/sluice.ts";

const TINY: Plan = { ...BUILT_IN_PLANS[0], code: "tiny", logs_per_month: 3, requests_per_minute: -1, validate_requests_per_minute: -1 };
const SLOW: Plan = { ...BUILT_IN_PLANS[3], code: "slow", requests_per_minute: 2 };

let s: TestSluice;
beforeAll(() => {
  s = startTestSluice(undefined, { plans: [...BUILT_IN_PLANS, TINY, SLOW] });
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

const lokiBody = (lines: string[]) =>
  JSON.stringify({ streams: [{ stream: { job: "j" }, values: lines.map((l) => [`${Date.parse("2026-11-22T10:00:00Z")}000000`, l]) }] });
const esBody = (messages: string[]) => messages.map((m) => `{"create":{}}\n${JSON.stringify({ message: m })}\n`).join("");
const otlpJson = (bodies: string[]) => JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: bodies.map((b) => ({ body: { stringValue: b } })) }] }] });

function send(path: string, key: string, type: string, body: string | Uint8Array, auth: "x-api-key" | "bearer" = "x-api-key") {
  const headers: Record<string, string> = { "content-type": type };
  if (auth === "bearer") headers.authorization = `Bearer ${key}`;
  else headers["x-api-key"] = key;
  return s.app.handle(new Request(`http://localhost${path}`, { method: "POST", headers, body }));
}

const ROUTES = [
  ["/otlp/v1/logs", "application/json", otlpJson(["a"])],
  ["/loki/api/v1/push", "application/json", lokiBody(["a"])],
  ["/es/_bulk", "application/x-ndjson", esBody(["a"])],
] as const;

test("every route needs logs:write: no key 401, a read-only key 403", async () => {
  const ro = await (await s.workspace()).key("development", "ro");
  for (const [path, type, body] of ROUTES) {
    expect((await s.app.handle(new Request(`http://localhost${path}`, { method: "POST", headers: { "content-type": type }, body }))).status).toBe(401);
    expect((await send(path, ro, type, body)).status).toBe(403);
  }
});

test("entries go to the key's workspace and environment, whatever the payload names", async () => {
  const ws = await s.workspace();
  const prod = await ws.key("production", "rw");
  const r = await send("/es/_bulk", prod, "application/x-ndjson", '{"create":{}}\n{"message":"m","environment":"development"}\n');
  expect(r.status).toBe(200);
  expect((await storedEntries(s, prod)).map((e) => e.message)).toEqual(["m"]);
  expect(await storedEntries(s, await ws.key("development", "rw"))).toEqual([]);
});

test("the monthly quota: 429 with Retry-After and nothing stored, on every route", async () => {
  const key = await (await s.workspace("tiny")).key("development", "rw");
  expect((await send("/es/_bulk", key, "application/x-ndjson", esBody(["1", "2"]))).status).toBe(200);
  for (const [path, type] of ROUTES) {
    const body = path.startsWith("/otlp") ? otlpJson(["x", "y"]) : path.startsWith("/loki") ? lokiBody(["x", "y"]) : esBody(["x", "y"]);
    const r = await send(path, key, type, body);
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  }
  expect((await storedEntries(s, key)).map((e) => e.message)).toEqual(["1", "2"]);
});

test("the rate limit: 429 with Retry-After", async () => {
  const key = await (await s.workspace("slow")).key("development", "rw");
  const statuses: number[] = [];
  let retryAfter = "";
  for (let i = 0; i < 3; i++) {
    const r = await send("/loki/api/v1/push", key, "application/json", lokiBody(["a"]));
    statuses.push(r.status);
    retryAfter = r.headers.get("retry-after") ?? retryAfter;
  }
  expect(statuses).toEqual([204, 204, 429]);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
});

test("OTLP partial success: partialSuccess {rejectedLogRecords, errorMessage} in protobuf and in JSON; the rest stored", async () => {
  const key = await (await s.workspace("free")).key("development", "rw");
  const big = "x".repeat(800);
  const proto = ExportLogsServiceRequest.encode(
    ExportLogsServiceRequest.fromObject({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: "ok" } }, { body: { stringValue: big } }] }] }] }),
  ).finish();
  const r = await send("/otlp/v1/logs", key, "application/x-protobuf", proto, "bearer");
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("application/x-protobuf");
  const decoded = ExportLogsServiceResponse.toObject(ExportLogsServiceResponse.decode(new Uint8Array(await r.arrayBuffer())), { longs: Number }) as {
    partialSuccess: { rejectedLogRecords: number; errorMessage: string };
  };
  expect(decoded.partialSuccess.rejectedLogRecords).toBe(1);
  expect(decoded.partialSuccess.errorMessage).toContain("record 1");
  const j = await send("/otlp/v1/logs", key, "application/json", otlpJson(["fine", big]));
  expect(await j.json()).toEqual({ partialSuccess: { rejectedLogRecords: 1, errorMessage: expect.stringContaining("700") } });
  const all = await send("/otlp/v1/logs", key, "application/json", otlpJson(["fine"]));
  expect(await all.json()).toEqual({});
  expect((await storedEntries(s, key)).map((e) => e.message)).toEqual(["ok", "fine", "fine"]);
});

test("GET /ingest/rejections: the last 100 rejected entries of the key's workspace environment, newest first, samples cut at 1,000 characters", async () => {
  const ws = await s.workspace("free");
  const key = await ws.key("development", "rw");
  const other = await ws.key("production", "rw");
  await send("/loki/api/v1/push", other, "application/json", lokiBody(["y".repeat(900)]));
  const list = async () =>
    (await (await s.call("GET", `${WS}/ingest/rejections`, { key })).json()) as {
      at: string;
      protocol: string;
      reason: string;
      field: string;
      sample: string;
    }[];
  expect((await send("/loki/api/v1/push", key, "application/json", lokiBody(Array.from({ length: 5 }, (_, i) => `${i}:${"z".repeat(1200)}`)))).status).toBe(
    400,
  );
  const first = await list();
  expect(first.map((x) => x.sample.slice(0, 20))).toEqual(
    [4, 3, 2, 1, 0].map((i) => JSON.stringify([`${Date.parse("2026-11-22T10:00:00Z")}000000`, `${i}:z`]).slice(0, 20)),
  );
  expect(first.map((x) => x.sample.length)).toEqual([1000, 1000, 1000, 1000, 1000]);
  await send("/es/_bulk", key, "application/x-ndjson", esBody(Array.from({ length: 100 }, (_, i) => `${i}:${"z".repeat(750)}`)));
  const last = await list();
  expect(last.length).toBe(100);
  expect(last[0]).toMatchObject({ protocol: "es", field: "" });
  expect(last[0].sample.startsWith('{"message":"99:')).toBe(true);
  expect(last[0].reason).toContain("700");
  expect(last.at(-1)?.sample.startsWith('{"message":"0:')).toBe(true);
  const theirs = (await (await s.call("GET", `${WS}/ingest/rejections`, { key: other })).json()) as { protocol: string }[];
  expect(theirs.map((x) => x.protocol)).toEqual(["loki"]);
  const ro = await ws.key("development", "wo");
  expect((await s.call("GET", `${WS}/ingest/rejections`, { key: ro })).status).toBe(403);
});

test("/metrics counts received, stored and rejected entries by protocol and reason, and requests refused whole", async () => {
  const key = await (await s.workspace("free")).key("development", "rw");
  const metric = async (line: RegExp) => Number(line.exec(await (await s.call("GET", "/metrics")).text())?.[1] ?? 0);
  const received = /sluice_shipper_entries_total\{protocol="loki",outcome="received",reason=""\} (\d+)/;
  const stored = /sluice_shipper_entries_total\{protocol="loki",outcome="stored",reason=""\} (\d+)/;
  const rejected = /sluice_shipper_entries_total\{protocol="loki",outcome="rejected",reason="invalid_entry"\} (\d+)/;
  const undecodable = /sluice_shipper_requests_refused_total\{protocol="loki",reason="undecodable"\} (\d+)/;
  const before = await Promise.all([received, stored, rejected, undecodable].map(metric));
  await send("/loki/api/v1/push", key, "application/json", lokiBody(["ok", "w".repeat(900), "ok too"]));
  await send("/loki/api/v1/push", key, "application/json", "{nope");
  const after = await Promise.all([received, stored, rejected, undecodable].map(metric));
  expect(after.map((v, i) => v - before[i])).toEqual([3, 2, 1, 1]);
});
