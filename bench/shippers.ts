// shippers bench (contract §11): the same entries ingested natively (POST /logs/bulk), as OTLP protobuf and as Loki
// snappy protobuf, in batches of 1,000 from 4 concurrent clients against one Sluice, one run each. Each protocol's
// entries/s is read against native bulk's of the same run; the target is at least 0.7×. Checks the count via /usage.
// BENCH_SHIPPER_ENTRIES sets the entries per protocol (default 200,000).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compressSync } from "snappy";
import { ExportLogsServiceRequest, PushRequest } from "../src/ingest/protocols/schemas.ts";
import { loghubEntries, syntheticEntry } from "./data.ts";
import { BATCH, CLIENTS } from "./ingest.ts";
import { startSluice } from "./servers.ts";

const TOTAL = Number(process.env.BENCH_SHIPPER_ENTRIES ?? 200_000);
const BODIES = 32;
const SEVERITY: Record<string, number> = { trace: 1, debug: 5, info: 9, warn: 13, error: 17, fatal: 21 };
type Entry = Record<string, unknown> & { action: string; level: string; message: string; clientTimestamp: string };

/** batches makes BODIES distinct 1,000-entry batches: one in five of Loghub lines, the rest synthetic (as bench/ingest.ts). */
function batches(): Entry[][] {
  const real = loghubEntries();
  return Array.from({ length: BODIES }, (_, b) =>
    Array.from({ length: BATCH }, (_, i) => (i % 5 === 0 ? real[(b * BATCH + i) % real.length] : syntheticEntry(b * BATCH + i)) as Entry),
  );
}

/** fields are an entry's attributes beyond the OTLP/Loki fields: its tags, objects and metadata, flat. */
function fields(e: Entry): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  if (Array.isArray(e.tags)) out.tags = e.tags.join(",");
  for (const part of ["actor", "context", "metadata"] as const) {
    const o = e[part] as Record<string, unknown> | undefined;
    if (o) for (const [k, v] of Object.entries(o)) out[`${part}.${k}`] = typeof v === "number" ? v : String(v);
  }
  return out;
}

const nanos = (e: Entry) => `${Date.parse(e.clientTimestamp)}000000`;

function otlpBody(batch: Entry[]): Uint8Array {
  const logRecords = batch.map((e) => ({
    timeUnixNano: nanos(e),
    severityNumber: SEVERITY[e.level],
    severityText: e.level,
    eventName: e.action,
    body: { stringValue: e.message },
    attributes: Object.entries(fields(e)).map(([key, v]) => ({ key, value: typeof v === "number" ? { intValue: v } : { stringValue: v } })),
  }));
  const request = {
    resourceLogs: [
      { resource: { attributes: [{ key: "service.name", value: { stringValue: "bench" } }] }, scopeLogs: [{ scope: { name: "bench" }, logRecords }] },
    ],
  };
  return ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject(request)).finish();
}

function lokiBody(batch: Entry[]): Uint8Array {
  const streams = new Map<string, { timestamp: { seconds: number; nanos: number }; line: string }[]>();
  for (const e of batch) {
    const labels = `{job="bench", service_name="${e.action.replace(/["\\]/g, "_")}", level="${e.level}"}`;
    const ms = Date.parse(e.clientTimestamp);
    const line = JSON.stringify({ msg: e.message, ...fields(e) });
    if (!streams.has(labels)) streams.set(labels, []);
    streams.get(labels)!.push({ timestamp: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 }, line });
  }
  const request = { streams: [...streams].map(([labels, entries]) => ({ labels, entries })) };
  return compressSync(Buffer.from(PushRequest.encode(PushRequest.fromObject(request)).finish()));
}

/** drive sends TOTAL entries from CLIENTS concurrent loops and returns entries per second. */
async function drive(url: string, headers: Record<string, string>, payloads: (string | Uint8Array)[], ok: number): Promise<number> {
  const requests = Math.ceil(TOTAL / BATCH);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < requests) {
        const i = next++;
        const r = await fetch(url, { method: "POST", headers, body: payloads[i % payloads.length] });
        if (r.status !== ok) throw new Error(`request ${i} to ${url}: ${r.status} ${await r.text()}`);
        await r.arrayBuffer();
      }
    }),
  );
  return (requests * BATCH) / ((performance.now() - t0) / 1000);
}

export async function benchShippers() {
  const all = batches();
  const native = all.map((b) => JSON.stringify(b));
  const otlp = all.map(otlpBody);
  const loki = all.map(lokiBody);
  const dir = mkdtempSync(join(tmpdir(), "sluice-bench-shippers-"));
  try {
    const sluice = await startSluice(dir, { SLUICE_IP_RATE_PER_MIN: "-1", SLUICE_ACCESS_LOG: "off" });
    const key = { "x-api-key": sluice.key };
    const nativeRate = await drive(`${sluice.base}/api/v1/workspace/logs/bulk`, { ...key, "content-type": "application/json" }, native, 201);
    const otlpRate = await drive(`${sluice.base}/otlp/v1/logs`, { ...key, "content-type": "application/x-protobuf" }, otlp, 200);
    const lokiRate = await drive(`${sluice.base}/loki/api/v1/push`, { ...key, "content-type": "application/x-protobuf" }, loki, 204);
    const usage = (await (await fetch(`${sluice.base}/api/v1/workspace/usage`, { headers: key })).json()) as { used: number };
    const expected = 3 * Math.ceil(TOTAL / BATCH) * BATCH;
    sluice.proc.kill("SIGTERM");
    await sluice.exited;
    if (usage.used !== expected) throw new Error(`BUG: stored ${usage.used} entries, expected ${expected}`);
    const bytes = (p: (string | Uint8Array)[]) => p.reduce((n, b) => n + (typeof b === "string" ? Buffer.byteLength(b) : b.byteLength), 0) / p.length;
    return { entries: TOTAL, nativeRate, otlpRate, lokiRate, bodyBytes: { native: bytes(native), otlp: bytes(otlp), loki: bytes(loki) } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const r = await benchShippers();
  const f = (n: number) => Math.round(n).toLocaleString("en-US");
  console.log(`shipper ingest, ${f(r.entries)} entries per protocol, ${BATCH}/request, ${CLIENTS} clients, one run`);
  console.log(`  native bulk (JSON, ${f(r.bodyBytes.native)} B/body): ${f(r.nativeRate)} entries/s`);
  console.log(
    `  OTLP protobuf (${f(r.bodyBytes.otlp)} B/body): ${f(r.otlpRate)} entries/s = ${(r.otlpRate / r.nativeRate).toFixed(2)}× native (target ≥ 0.7×)`,
  );
  console.log(
    `  Loki snappy protobuf (${f(r.bodyBytes.loki)} B/body): ${f(r.lokiRate)} entries/s = ${(r.lokiRate / r.nativeRate).toFixed(2)}× native (target ≥ 0.7×)`,
  );
}
