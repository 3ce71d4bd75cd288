// Merged parts (storage/merge/merge.ts): small blocks merged in the background answer every read as before, through a kill -9
// in the middle of the merge and through retention, and the storage report counts what is stored.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open as lmdbOpen } from "lmdb";
import { compose } from "../../src/compose.ts";
import { IdGenerator } from "../../src/ids.ts";
import { RUNTIME_ENV } from "../../src/runtime.ts";
import type { Environment, Level } from "../../src/schema.ts";
import type { Entry } from "../../src/storage/entries.ts";
import { FRONTIER_MS } from "../../src/storage/format/part.ts";
import { BUILT_IN_PLANS, PlanTable } from "../../src/limits/plans.ts";
import { entryAt, listed, QUERIES, sha256 } from "../fixtures/make-format-5.ts";
import { diesWithTest } from "../helpers/process.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const ADMIN = "merge-test-admin";
const T = Date.UTC(2026, 10, 1);
const ALL = { ageMs: 0, idleMs: 0 };
const open = (dataDir: string) => compose({ dataDir, plans: new PlanTable(BUILT_IN_PLANS), adminToken: ADMIN, storageLog: () => {} });
type Sluice = ReturnType<typeof open>;
const call = (s: Sluice, key: string, path: string, body?: unknown) =>
  s.app.handle(
    new Request(`http://sluice/api/v1/workspace${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );

/** seeded makes a data directory holding n entries written one a request, a second apart, days ago: n small blocks, all due for a merge. */
async function seeded(n: number) {
  const dir = mkdtempSync(join(tmpdir(), "sluice-merge-"));
  dirs.push(dir);
  const s = open(dir);
  const ws = await s.admin.createWorkspace({ name: "merge", plan: "unlimited" });
  const key = (await s.admin.createKey(ws.id, { environment: "production", type: "rw" })).key;
  const tenant = { ws: ws.id, env: "production" as Environment };
  const ids = new IdGenerator();
  for (let turn = 0; turn < n; turn += 500) {
    const writes: Promise<unknown>[] = []; // one event turn's appends commit in one transaction
    for (let i = turn; i < Math.min(n, turn + 500); i++) {
      const {
        ms,
        ids: [id],
      } = ids.next(1, T + i * 1000);
      const e = entryAt(i) as Record<string, unknown> & { level: Level; clientTimestamp: string };
      const entry = { ...e, id, clientMs: Date.parse(e.clientTimestamp) } as unknown as Entry;
      writes.push(s.entries.append(tenant, ms, [entry], -1));
    }
    await Promise.all(writes);
  }
  return { dir, s, key, tenant };
}

/** answers are every entry as GET /logs pages through them, each query's answer, and the storage report's counts. */
async function answers(s: Sluice, key: string) {
  const queries: Record<string, string> = {};
  for (const query of QUERIES) queries[query] = sha256(await (await call(s, key, "/logs/query", { query, pageSize: 100 })).text());
  const report = await s.app.handle(new Request("http://sluice/api/v1/admin/storage", { headers: { Authorization: `Bearer ${ADMIN}` } }));
  const rows = ((await report.json()) as { environments: { environment: string; entries: number; raw_bytes: number }[] }).environments;
  return { entries: await listed((path) => call(s, key, path)), queries, report: rows.map((r) => [r.environment, r.entries, r.raw_bytes]) };
}

/** partKeys lists a tenant's parts (not its merge frontier). */
const partKeys = (s: Sluice, ws: string) => [...s.dbs.parts.getKeys({ start: [ws, "production", 0], end: [ws, "production", 8.64e15] })];

/** storedBytes sums what a tenant's values in entries and parts hold: the storage report's block bytes must equal it. */
function storedBytes(s: Sluice, ws: string): number {
  let bytes = 0;
  for (const { value } of s.dbs.entries.getRange({ start: [ws, "production", 0], end: [ws, "production", 8.64e15] })) bytes += (value as Uint8Array).length;
  for (const { value } of s.dbs.parts.getRange({ start: [ws, "production", 0], end: [ws, "production", 8.64e15] })) bytes += (value as Uint8Array).length;
  return bytes;
}

test("a kill -9 during a merge loses nothing and duplicates nothing: every entry, every query and the storage report answer as before, and the merge goes on at the next start", async () => {
  const N = 13_000; // single-entry blocks: four parts of 4,096 entries or so, so a kill after the first finds the others unmerged
  let { dir, s, key, tenant } = await seeded(N);
  const before = await answers(s, key);
  expect(before.entries.count).toBe(N);
  await s.close();

  // the server merges in the background; kill it once it has committed its first part
  const proc = Bun.spawn(diesWithTest([process.execPath, "src/main.ts"]), {
    cwd: join(import.meta.dir, "..", ".."),
    env: { ...process.env, ...RUNTIME_ENV, SLUICE_DATA_DIR: dir, SLUICE_HOST: "127.0.0.1", SLUICE_PORT: "0" },
    stdout: "ignore",
    stderr: "ignore",
  });
  const watch = lmdbOpen({ path: join(dir, "sluice.mdb"), maxDbs: 32, readOnly: true });
  const parts = watch.openDB({ name: "parts" });
  let seen = 0;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline && seen === 0; await Bun.sleep(1))
    seen = [...parts.getKeys({ snapshot: false } as never)].filter((k) => (k as unknown[])[2] !== FRONTIER_MS).length;
  proc.kill("SIGKILL");
  await proc.exited;
  await watch.close();
  expect(seen).toBeGreaterThan(0);

  s = open(dir);
  try {
    const merged = partKeys(s, tenant.ws).length;
    expect(merged).toBeGreaterThan(0);
    expect(await answers(s, key)).toEqual(before);
    expect(s.entries.stats.all().find((t) => t.env === "production")!.blockBytes).toBe(storedBytes(s, tenant.ws));
    // the merge goes on from where the killed one stopped, and every answer stays the same
    expect(await s.entries.merger.mergeTenant(tenant, ALL)).toBeGreaterThan(0);
    expect(partKeys(s, tenant.ws).length).toBeGreaterThan(merged);
    expect(await answers(s, key)).toEqual(before);
    expect(s.entries.stats.all().find((t) => t.env === "production")!.blockBytes).toBe(storedBytes(s, tenant.ws));
  } finally {
    await s.close();
  }
}, 120_000);

test("reads during a merge answer exactly what they answered before it: every entry, query and count, while parts commit", async () => {
  const { s, key, tenant } = await seeded(9_000);
  try {
    const before = await answers(s, key);
    let merging = true;
    const merge = s.entries.merger.mergeTenant(tenant, ALL).finally(() => (merging = false));
    let reads = 0;
    while (merging) {
      expect(await answers(s, key)).toEqual(before);
      reads++;
    }
    expect(await merge).toBeGreaterThan(1);
    expect(reads).toBeGreaterThan(0);
    expect(await answers(s, key)).toEqual(before);
  } finally {
    await s.close();
  }
}, 120_000);

test("merged blocks are stored smaller than the blocks they replace, and answer the same", async () => {
  const { s, key, tenant } = await seeded(3_000);
  try {
    const before = await answers(s, key);
    const bytes = storedBytes(s, tenant.ws);
    expect(await s.entries.merger.mergeTenant(tenant, ALL)).toBe(1); // 3,000 entries: one part, closed as the run went idle
    expect(await answers(s, key)).toEqual(before);
    expect(storedBytes(s, tenant.ws)).toBeLessThan(bytes / 2);
  } finally {
    await s.close();
  }
}, 60_000);

test("retention deletes a merged block's entries with it, and its part with the part's last block; the storage report counts what is left", async () => {
  const { s, key, tenant } = await seeded(3_000);
  try {
    await s.entries.merger.mergeTenant(tenant, ALL);
    expect(partKeys(s, tenant.ws)).toHaveLength(1);
    const figures = () => s.entries.stats.all().find((t) => t.env === "production")!;
    // half the blocks go: the part stays for the other half
    for (let n: number; (n = await s.entries.deleteBefore(tenant, T + 1_500 * 1000, 64)) > 0; );
    expect(partKeys(s, tenant.ws)).toHaveLength(1);
    expect((await listed((path) => call(s, key, path))).count).toBe(1_500);
    expect(figures().entries).toBe(1_500);
    expect(figures().blockBytes).toBe(storedBytes(s, tenant.ws));
    // the rest go, and the part with its last block
    for (let n: number; (n = await s.entries.deleteBefore(tenant, T + 3_000 * 1000, 64)) > 0; );
    expect(partKeys(s, tenant.ws)).toHaveLength(0);
    expect((await listed((path) => call(s, key, path))).count).toBe(0);
    expect([figures().entries, figures().raw, figures().blockBytes]).toEqual([0, 0, 0]);
  } finally {
    await s.close();
  }
}, 60_000);

test("large blocks are left as they are, and the merge stores how far it passed over them, so a restart does not read them again", async () => {
  const { s, tenant } = await seeded(0);
  try {
    const ids = new IdGenerator();
    for (let b = 0; b < 3; b++) {
      const { ms, ids: fresh } = ids.next(300, T + b * 1000);
      const entries = fresh.map((id, i) => ({ ...(entryAt(i) as object), id, clientMs: T }) as unknown as Entry);
      await s.entries.append(tenant, ms, entries, -1);
    }
    const last = [...s.dbs.entries.getKeys({ start: [tenant.ws, "production", 0], end: [tenant.ws, "production", 8.64e15] })].pop() as unknown[];
    expect(await s.entries.merger.mergeTenant(tenant, ALL)).toBe(0);
    expect(partKeys(s, tenant.ws)).toHaveLength(0);
    const frontier = s.dbs.parts.get([tenant.ws, "production", FRONTIER_MS]) as Uint8Array;
    const view = new DataView(frontier.buffer, frontier.byteOffset, frontier.length);
    expect([view.getFloat64(0), Buffer.from(frontier.subarray(8)).toString("utf8")]).toEqual([last[2] as number, `${last[3]}\u0000`]);
  } finally {
    await s.close();
  }
}, 60_000);

test("small blocks between large ones committed while the merge runs are merged run by run, and every read answers as before", async () => {
  const { s, key, tenant } = await seeded(0);
  try {
    s.entries.startMerging({ ageMs: 8.64e15, idleMs: 0 }); // running, so commits tell it their sizes, but nothing is due yet
    const ids = new IdGenerator();
    let at = 0;
    for (let b = 0; b < 40; b++) {
      const count = b % 4 === 3 ? 300 : 1; // three small blocks, then a large one
      const { ms, ids: fresh } = ids.next(count, T + b * 1000);
      const entries = fresh.map((id) => ({ ...(entryAt(at++) as object), id, clientMs: T }) as unknown as Entry);
      await s.entries.append(tenant, ms, entries, -1);
    }
    const before = await answers(s, key);
    expect(await s.entries.merger.mergeTenant(tenant, ALL)).toBe(10); // each run of three between two large blocks
    expect(await answers(s, key)).toEqual(before);
    expect(s.entries.stats.all().find((t) => t.env === "production")!.blockBytes).toBe(storedBytes(s, tenant.ws));
  } finally {
    await s.close();
  }
}, 60_000);
