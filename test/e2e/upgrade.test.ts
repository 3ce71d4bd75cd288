// Upgrades (contract §15): a data directory written by an earlier Sluice opens with this one and answers the same.
// test/fixtures/format-5 was written by commit 120de70 (block format 5) with make-format-5.ts, which says how.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compose } from "../../src/compose.ts";
import { BUILT_IN_PLANS, PlanTable } from "../../src/limits/plans.ts";
import { entryAt, listed, QUERIES, sha256 } from "../fixtures/make-format-5.ts";

const FIXTURE = join(import.meta.dir, "..", "fixtures", "format-5");
const answers = JSON.parse(readFileSync(join(FIXTURE, "answers.json"), "utf8")) as {
  keys: Record<string, string>;
  entries: Record<string, { count: number; sha256: string }>;
  queries: Record<string, Record<string, string>>;
};

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** fixtureDir lays the fixture's LMDB file in a fresh data directory. */
function fixtureDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sluice-upgrade-"));
  dirs.push(dir);
  writeFileSync(join(dir, "sluice.mdb"), Bun.zstdDecompressSync(readFileSync(join(FIXTURE, "sluice.mdb.zst"))));
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
async function sameAnswers(s: Sluice): Promise<void> {
  for (const [env, key] of Object.entries(answers.keys)) {
    expect(await listed((path) => call(s, key, path))).toEqual(answers.entries[env]);
    for (const query of QUERIES)
      expect([query, sha256(await (await call(s, key, "/logs/query", { query, pageSize: 100 })).text())]).toEqual([query, answers.queries[env][query]]);
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
