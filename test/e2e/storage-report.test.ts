// What storage costs, visible (contract §15): GET /api/v1/admin/storage, `sluice storage` and the /metrics gauges
// report entries, raw bytes (each entry's JSON as GET /logs/{id} returns it), disk bytes and their ratio.
import { afterAll, expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../helpers/process.ts";
import { removeDir, startTestSluice, WS, type TestSluice } from "../helpers/sluice.ts";

interface Figures {
  entries: number;
  raw_bytes: number;
  disk_bytes: number;
  ratio: number;
}
interface Report {
  total: Figures;
  data_dir_bytes: number;
  environments: (Figures & { workspace_id: string; environment: string })[];
}

const opened: TestSluice[] = [];
afterAll(async () => {
  for (const s of opened) {
    await s.close().catch(() => {});
    removeDir(s.dir);
  }
});

/** entryAt is a distinct entry with text beyond ASCII, control characters, objects and numbers JSON prints oddly. */
const entryAt = (i: number) => ({
  action: `order.${i % 5}`,
  level: ["info", "error", "warn"][i % 3],
  message: i % 7 === 0 ? null : `paid ${i} ünï ☕${i % 4 === 0 ? "\u0000\u001f" : ""}`,
  tags: i % 2 ? ["checkout", `t${i}`] : [],
  metadata: i % 3 ? { n: i % 5 === 0 ? 1e21 : i, deep: { a: [i, null] } } : null,
  actor: i % 4 ? { id: `u${i}` } : null,
  clientTimestamp: new Date(Date.UTC(2026, 10, 20) + i * 1000).toISOString(),
});

/** fill writes `count` entries for a key, in bulk and one by one, and returns their ids. */
async function fill(s: TestSluice, key: string, count: number): Promise<string[]> {
  const bulk = await s.call("POST", `${WS}/logs/bulk`, { key, body: Array.from({ length: count - 3 }, (_, i) => entryAt(i)) });
  expect(bulk.status).toBe(201);
  const ids = ((await bulk.json()) as { ids: string[] }).ids;
  for (let i = count - 3; i < count; i++) {
    const one = await s.call("POST", `${WS}/logs`, { key, body: entryAt(i) });
    expect(one.status).toBe(201);
    ids.push(((await one.json()) as { id: string }).id);
  }
  return ids;
}

/** rawOf adds up the bytes of each entry's JSON as GET /logs/{id} returns it. */
async function rawOf(s: TestSluice, key: string, ids: string[]): Promise<number> {
  let n = 0;
  for (const id of ids) n += (await (await s.call("GET", `${WS}/logs/${id}`, { key })).arrayBuffer()).byteLength;
  return n;
}

const allocated = (dir: string) => readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).blocks * 512, 0);

async function report(s: TestSluice): Promise<Report> {
  const res = await s.admin("GET", "/storage");
  expect(res.status).toBe(200);
  return (await res.json()) as Report;
}

let s: TestSluice;
const written: { ws: string; env: string; key: string; ids: string[] }[] = [];

test("the storage report lists each workspace environment's entries and raw bytes, each entry's JSON as GET /logs/{id} returns it", async () => {
  s = startTestSluice();
  opened.push(s);
  for (const [plan, env, count] of [
    ["unlimited", "production", 1500],
    ["unlimited", "development", 40],
  ] as const) {
    const ws = await s.workspace(plan);
    const key = await ws.key(env, "rw");
    written.push({ ws: ws.id, env, key, ids: await fill(s, key, count) });
  }
  const r = await report(s);
  for (const w of written) {
    const row = r.environments.find((e) => e.workspace_id === w.ws && e.environment === w.env)!;
    expect(row.entries).toBe(w.ids.length);
    expect(row.raw_bytes).toBe(await rawOf(s, w.key, w.ids));
    expect(row.ratio).toBeCloseTo(row.disk_bytes / row.raw_bytes, 3);
  }
  expect(r.total.entries).toBe(1540);
  expect(r.total.raw_bytes).toBe(r.environments.reduce((n, e) => n + e.raw_bytes, 0));
});

test("the storage report's disk bytes add up to the data directory's allocated size, within 1%", async () => {
  const r = await report(s);
  const onDisk = allocated(s.dir);
  expect(Math.abs(r.data_dir_bytes - onDisk) / onDisk).toBeLessThan(0.01);
  expect(Math.abs(r.total.disk_bytes - onDisk) / onDisk).toBeLessThan(0.01);
  expect(r.environments.reduce((n, e) => n + e.disk_bytes, 0)).toBe(r.total.disk_bytes);
  for (const e of r.environments) expect(e.disk_bytes).toBeGreaterThan(0);
});

test("/metrics carries sluice_storage_disk_bytes and sluice_storage_raw_bytes, as the report totals them", async () => {
  const text = await (await s.call("GET", "/metrics")).text();
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)`, "m").exec(text)?.[1]);
  const r = await report(s);
  expect(gauge("sluice_storage_raw_bytes")).toBe(r.total.raw_bytes);
  expect(Math.abs(gauge("sluice_storage_disk_bytes") - r.total.disk_bytes) / r.total.disk_bytes).toBeLessThan(0.01);
});

test("retention takes the entries it deletes off the storage report", async () => {
  const [w] = written;
  const before = (await report(s)).environments.find((e) => e.environment === w.env)!;
  const gone = await s.svc.entries.deleteBefore({ ws: w.ws, env: w.env as "production" }, 8.64e15, 1_000_000);
  const kept = w.ids.length - gone;
  const after = (await report(s)).environments.find((e) => e.environment === w.env);
  expect(gone).toBeGreaterThan(0);
  expect(after?.entries ?? 0).toBe(kept);
  expect(after?.raw_bytes ?? 0).toBeLessThan(before.raw_bytes);
  if (kept === 0) expect(after).toBeUndefined();
});

test("the storage report carries over a restart, and sluice storage prints it from the data directory", async () => {
  const expected = await report(s);
  await s.close();
  const cli = await runCli(["storage", "--data-dir", s.dir]);
  expect(cli.code).toBe(0);
  const printed = JSON.parse(cli.stdout) as Report;
  expect(printed.total.entries).toBe(expected.total.entries);
  expect(printed.total.raw_bytes).toBe(expected.total.raw_bytes);
  expect(printed.environments.map((e) => [e.workspace_id, e.environment, e.entries, e.raw_bytes])).toEqual(
    expected.environments.map((e) => [e.workspace_id, e.environment, e.entries, e.raw_bytes]),
  );
  s = startTestSluice(s.dir);
  opened.push(s);
  expect((await report(s)).total.raw_bytes).toBe(expected.total.raw_bytes);
});

test("sluice compact writes a copy without the space retention freed, which opens with the same entries", async () => {
  const [, w] = written; // development: 40 entries, untouched by the retention test
  const more = await s.workspace("unlimited");
  const key = await more.key("staging", "rw");
  await fill(s, key, 3000);
  const kept = await s.call("GET", `${WS}/logs?pageSize=100`, { key: w.key });
  await s.svc.entries.deleteBefore({ ws: more.id, env: "staging" }, 8.64e15, 1_000_000);
  await s.close();
  const to = join(s.dir, "..", `${s.dir.split("/").pop()}-compact`);
  const cli = await runCli(["compact", "--to", to, "--data-dir", s.dir]);
  expect(cli.code).toBe(0);
  const { before_bytes, after_bytes } = JSON.parse(cli.stdout) as { before_bytes: number; after_bytes: number };
  expect(after_bytes).toBeLessThan(before_bytes / 2);
  expect(after_bytes).toBe(allocated(to));
  s = startTestSluice(to);
  opened.push(s);
  expect(await (await s.call("GET", `${WS}/logs?pageSize=100`, { key: w.key })).text()).toBe(await kept.text());
  expect((await report(s)).environments.find((e) => e.workspace_id === more.id)).toBeUndefined();
});

test("retention frees the space of the entries it deletes for new writes: the data file stops growing", async () => {
  const t = startTestSluice();
  opened.push(t);
  const ws = await t.workspace("unlimited");
  const key = await ws.key("production", "rw");
  const size = () => statSync(join(t.dir, "sluice.mdb")).size;
  const sizes: number[] = [];
  for (let round = 0; round < 5; round++) {
    while ((await t.svc.entries.deleteBefore({ ws: ws.id, env: "production" }, 8.64e15, 1_000_000)) > 0); // as the sweeper loops
    await fill(t, key, 3000);
    await t.svc.entries.settled(); // postings and full text stored, as they are a while after the writes
    sizes.push(size());
  }
  // the first rounds settle how many pages a deletion's copies take; after that, each round reuses what the last freed
  expect(sizes[4]).toBeLessThanOrEqual(sizes[2] * 1.05);
});
