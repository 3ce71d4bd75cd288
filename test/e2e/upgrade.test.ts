// Upgrades (contract §15): a data directory written by an earlier Sluice opens with this one and answers the same.
// test/fixtures/format-5 was written by commit 120de70 (block format 5) with make-format-5.ts, which says how;
// test/fixtures/format-6-8df112b by commit 8df112b the same way: block format 6 with every text, number and code as
// a text or a byte, before the objects' places, the messages' numbers and codes of a few bits were stored apart.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open as lmdbOpen } from "lmdb";
import { compose } from "../../src/compose.ts";
import { IdGenerator } from "../../src/ids.ts";
import { RUNTIME_ENV } from "../../src/runtime.ts";
import { INDEX_LAYOUT } from "../../src/storage/layout.ts";
import { BUILT_IN_PLANS, PlanTable } from "../../src/limits/plans.ts";
import { entryAt, listed, QUERIES, sha256 } from "../fixtures/make-format-5.ts";
import { diesWithTest } from "../helpers/process.ts";

const FIXTURE = join(import.meta.dir, "..", "fixtures", "format-5");
const TEXTS_FIXTURE = join(import.meta.dir, "..", "fixtures", "format-6-8df112b");
type Answers = {
  keys: Record<string, string>;
  entries: Record<string, { count: number; sha256: string }>;
  queries: Record<string, Record<string, string>>;
};
const answersOf = (fixture: string) => JSON.parse(readFileSync(join(fixture, "answers.json"), "utf8")) as Answers;
const answers = answersOf(FIXTURE);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** fixtureDir lays a fixture's LMDB file in a fresh data directory. */
function fixtureDir(fixture = FIXTURE): string {
  const dir = mkdtempSync(join(tmpdir(), "sluice-upgrade-"));
  dirs.push(dir);
  writeFileSync(join(dir, "sluice.mdb"), Bun.zstdDecompressSync(readFileSync(join(fixture, "sluice.mdb.zst"))));
  return dir;
}

const ADMIN = "upgrade-test-admin";
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

/** sameAnswers checks every environment's entries (same ids, same JSON, same order) and every query's answer. */
async function sameAnswers(s: Sluice, expected: Answers = answers): Promise<void> {
  for (const [env, key] of Object.entries(expected.keys)) {
    expect(await listed((path) => call(s, key, path))).toEqual(expected.entries[env]);
    for (const query of QUERIES)
      expect([query, sha256(await (await call(s, key, "/logs/query", { query, pageSize: 100 })).text())]).toEqual([query, expected.queries[env][query]]);
  }
}

test("a data directory of block format 5 opens, and every entry, key and query answers as the code that wrote it did", async () => {
  const s = open(fixtureDir());
  try {
    await sameAnswers(s);
  } finally {
    await s.close();
  }
});

test("blocks of format 5 merged into parts answer every entry, key and query as the code that wrote them did", async () => {
  const s = open(fixtureDir());
  try {
    let parts = 0;
    for (const t of s.entries.stats.all()) parts += await s.entries.merger.mergeTenant(t, { ageMs: 0, idleMs: 0 });
    expect(parts).toBeGreaterThan(0); // its single-entry writes are merged; its bulk blocks of 700 stay as they are
    await sameAnswers(s);
  } finally {
    await s.close();
  }
});

test("a data directory written with texts and bytes (8df112b) opens, and every entry, key and query answers as the code that wrote it did", async () => {
  const s = open(fixtureDir(TEXTS_FIXTURE));
  try {
    await sameAnswers(s, answersOf(TEXTS_FIXTURE));
  } finally {
    await s.close();
  }
});

test("blocks written with texts and bytes (8df112b), merged into parts stored with numbers and codes apart, answer every entry, key and query as before", async () => {
  const s = open(fixtureDir(TEXTS_FIXTURE));
  try {
    let parts = 0;
    for (const t of s.entries.stats.all()) parts += await s.entries.merger.mergeTenant(t, { ageMs: 0, idleMs: 0 });
    expect(parts).toBeGreaterThan(0);
    await sameAnswers(s, answersOf(TEXTS_FIXTURE));
  } finally {
    await s.close();
  }
});

test("a data directory of block format 5 reports what each environment stores once open, counted from its blocks", async () => {
  const s = open(fixtureDir());
  try {
    const res = await s.app.handle(new Request("http://sluice/api/v1/admin/storage", { headers: { Authorization: `Bearer ${ADMIN}` } }));
    const report = (await res.json()) as { environments: { environment: string; entries: number; raw_bytes: number }[] };
    for (const [env, key] of Object.entries(answers.keys)) {
      let raw = 0;
      await listed(async (path) => {
        const page = await call(s, key, path);
        for (const e of (await page.clone().json()) as unknown[]) raw += Buffer.byteLength(JSON.stringify(e));
        return page;
      });
      const row = report.environments.find((e) => e.environment === env);
      expect([env, row?.entries, row?.raw_bytes]).toEqual([env, answers.entries[env].count, raw]);
    }
  } finally {
    await s.close();
  }
});

test("entries written after the upgrade sit beside the earlier ones: both read, and the earlier ones answer the same across a restart", async () => {
  const dir = fixtureDir();
  let s = open(dir);
  const key = answers.keys.production;
  const batch = Array.from({ length: 600 }, (_, i) => ({ ...entryAt(100_000 + i), clientTimestamp: new Date(Date.UTC(2026, 11, 1) + i).toISOString() }));
  const res = await call(s, key, "/logs/bulk", batch);
  expect(res.status).toBe(201);
  const { ids } = (await res.json()) as { ids: string[] };
  const read = await call(s, key, `/logs/${ids[321]}`);
  expect(((await read.json()) as { message: unknown }).message).toBe(entryAt(100_321).message);
  await s.close();
  s = open(dir);
  try {
    const after = await listed((path) => call(s, key, path));
    expect(after.count).toBe(answers.entries.production.count + batch.length);
    expect(await listed((path) => call(s, answers.keys.development, path))).toEqual(answers.entries.development);
  } finally {
    await s.close();
  }
});

test("a kill -9 while the upgrade builds the index layout loses nothing: the next start builds it again, and every entry, count and client window answers", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-upgrade-kill-"));
  dirs.push(dir);
  let s = open(dir);
  const ws = await s.admin.createWorkspace({ name: "upgrade", plan: "unlimited" });
  const key = (await s.admin.createKey(ws.id, { environment: "production", type: "rw" })).key;
  const tenant = { ws: ws.id, env: "production" as const };
  const ids = new IdGenerator();
  const BLOCKS = 5_000; // the build stores bounds 1,024 blocks a transaction: a kill between two finds some stored
  for (let turn = 0; turn < BLOCKS; turn += 250) {
    const writes: Promise<unknown>[] = []; // one event turn's appends commit in one transaction
    for (let b = turn; b < turn + 250; b++) {
      const { ms, ids: fresh } = ids.next(3, Date.UTC(2026, 10, 1) + b);
      const clientMs = Date.UTC(2026, 9, 1) + b * 60_000;
      const entries = fresh.map((id, i) => ({
        id,
        level: "info" as const,
        action: "upgrade.kill",
        message: `block ${b} entry ${i}`,
        tags: [],
        clientMs,
        actor: null,
        target: null,
        context: null,
        metadata: null,
      }));
      writes.push(s.entries.append(tenant, ms, entries, -1));
    }
    await Promise.all(writes);
  }
  const report = async () => {
    const res = await s.app.handle(new Request("http://sluice/api/v1/admin/storage", { headers: { Authorization: `Bearer ${ADMIN}` } }));
    const rows = ((await res.json()) as { environments: { environment: string; entries: number; raw_bytes: number }[] }).environments;
    return rows.map((r) => [r.environment, r.entries, r.raw_bytes]); // disk bytes change with the file, not with what it holds
  };
  const window = `client_timestamp>=${new Date(Date.UTC(2026, 9, 1) + 4_321 * 60_000).toISOString()} client_timestamp<${new Date(Date.UTC(2026, 9, 1) + 4_322 * 60_000).toISOString()}`;
  const answer = async () => (await (await call(s, key, "/logs/query", { query: window, pageSize: 100 })).json()) as { message: string }[];
  const before = { report: await report(), window: await answer() };
  expect(before.window.map((e) => e.message).sort()).toEqual([0, 1, 2].map((i) => `block 4321 entry ${i}`));
  s.dbs.layout.putSync("indexes", 5); // as a directory the code before bounds wrote
  await s.close();

  // kill the server once the build has stored some bounds but not yet the layout version
  const proc = Bun.spawn(diesWithTest([process.execPath, "src/main.ts"]), {
    cwd: join(import.meta.dir, "..", ".."),
    env: { ...process.env, ...RUNTIME_ENV, SLUICE_DATA_DIR: dir, SLUICE_HOST: "127.0.0.1", SLUICE_PORT: "0" },
    stdout: "ignore",
    stderr: "ignore",
  });
  const watch = lmdbOpen({ path: join(dir, "sluice.mdb"), maxDbs: 32, readOnly: true });
  const bounds = watch.openDB({ name: "bounds" });
  const layout = watch.openDB({ name: "layout" });
  let killedMidway = false;
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await Bun.sleep(1)) {
    if (bounds.getKeysCount({ snapshot: false } as never) > 0 && layout.get("indexes") === 5) {
      proc.kill("SIGKILL");
      killedMidway = true;
      break;
    }
    if (layout.get("indexes") === INDEX_LAYOUT) break;
  }
  proc.kill("SIGKILL"); // also when the build was missed: then it listens, and the test fails below
  await proc.exited;
  await watch.close();
  expect(killedMidway).toBe(true);

  s = open(dir);
  try {
    expect(s.dbs.layout.get("indexes")).toBe(INDEX_LAYOUT);
    expect(await report()).toEqual(before.report);
    expect(await answer()).toEqual(before.window);
    expect([...s.dbs.bounds.getKeys({})].filter((k) => typeof (k as unknown[])[0] === "string")).toHaveLength(BLOCKS); // a block's bounds; the others list blocks by their latest
  } finally {
    await s.close();
  }
}, 90_000);
