// Bounded memory (issue 33's goal: memory does not grow with the data): what the server keeps on its heap per stored
// block must not grow with the entries written. A write's ids are slices of one string; an index that keeps a block's
// first id as such a slice keeps all of its write's ids (36 bytes an entry, without end).
// A phase of 100k entries moves the heap by a few bytes an entry either way: the bound sits between that and 36.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../helpers/sluice.ts";

const WRITES = 100; // a phase: 100 bulk writes of 1,000 distinct entries
const BATCH = 1_000;
let s: TestSluice;
let key: string;
let written = 0;

beforeAll(async () => {
  s = startTestSluice();
  key = await (await s.workspace("unlimited")).key("production", "rw");
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

/** writePhase writes WRITES bulk bodies of distinct entries, lets the background work settle and returns the live heap. */
async function writePhase(): Promise<number> {
  for (let w = 0; w < WRITES; w++) {
    const body = Array.from({ length: BATCH }, () => {
      const i = written++;
      return entry({ action: `job.step${i % 40}`, message: `step ${i} of job ${i % 977} done`, context: { request_id: `req-${i}` } });
    });
    const r = await s.call("POST", `${WS}/logs/bulk`, { key, body });
    expect(r.status).toBe(201);
  }
  await Bun.sleep(500); // postings and filters flushed, the full-text worker caught up
  Bun.gc(true);
  return heapStats().heapSize;
}

test("the heap does not grow with the entries written: under 20 bytes an entry between 200k and 300k entries", async () => {
  await writePhase(); // the first phase fills what is bounded: caches, held postings, the first segments
  const before = await writePhase();
  const after = await writePhase();
  expect((after - before) / (WRITES * BATCH)).toBeLessThan(20);
}, 120_000);
