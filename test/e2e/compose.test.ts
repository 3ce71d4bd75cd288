// The composition root: each composed Sluice owns its parts, worker threads included, so two in one process (as
// tests and a cluster node's partitions have) stay independent, and close() ends one without touching the other.
import { afterAll, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../helpers/sluice.ts";

const opened: TestSluice[] = [];
afterAll(() => {
  for (const s of opened) removeDir(s.dir);
});

/** use writes a bulk large enough for the ingest worker and finds it by a word, through the full-text worker */
async function use(s: TestSluice, key: string, word: string): Promise<number> {
  const body = Array.from({ length: 400 }, (_, i) => entry({ message: `${word} entry ${i} ${"x".repeat(150)}` }));
  const res = await s.call("POST", `${WS}/logs/bulk`, { key, body });
  expect(res.status).toBe(201);
  const found = await s.call("POST", `${WS}/logs/query`, { key, body: { query: word, pageSize: 100 } });
  expect(found.status).toBe(200);
  return ((await found.json()) as unknown[]).length;
}

test("two Sluices in one process own their worker threads: closing one leaves the other's bulk ingest and full text working", async () => {
  const a = startTestSluice(undefined, { ipRatePerMinute: -1 });
  const b = startTestSluice(undefined, { ipRatePerMinute: -1 });
  opened.push(a, b);
  const keyA = await (await a.workspace()).key("development", "rw");
  const keyB = await (await b.workspace()).key("development", "rw");
  expect(await use(a, keyA, "alpha")).toBe(100);
  expect(await use(b, keyB, "bravo")).toBe(100);
  expect(await use(a, keyA, "bravo")).toBe(100); // each finds only its own entries
  await a.close();
  expect(await use(b, keyB, "charlie")).toBe(100);
  expect(await use(b, keyB, "alpha")).toBe(100);
  await b.close();
});
