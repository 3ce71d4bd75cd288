// Filter segments merged in the background (needle-index.ts, needle-segment.ts mergedParts) on a real LMDB: a merged
// segment answers every needle as its sources did, during the merges and after, for a query that listed the sources
// before they went, and after a restart that finds sources a crash left stored.
import { afterAll, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IdGenerator } from "../../../src/ids.ts";
import { openDatabases, type Databases } from "../../../src/storage/db.ts";
import { EntryStore } from "../../../src/storage/entries.ts";
import type { ScanRange } from "../../../src/storage/keys.ts";
import { DEFAULT_PACE } from "../../../src/storage/merge/merge.ts";
import { REGION_WORDS, pathTerm, probeHolds, probeOf, substringTerms, type Needle } from "../../../src/storage/indexes/needles.ts";
import { segmentBlocks } from "../../../src/storage/indexes/needle-search.ts";
import {
  FAN,
  MAX_LEVEL,
  mergedParts,
  offsetsOf,
  partitionsLog,
  sealedParts,
  segmentOf,
  type FilteredBlock,
} from "../../../src/storage/indexes/needle-segment.ts";
import { UsageStore } from "../../../src/storage/usage.ts";
import { writeNumberedBlocks } from "../../helpers/needle-blocks.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const T0 = Date.parse("2026-11-28T10:00:00.000Z");
const tenant = { ws: "ws-merge", env: "production" as const };
const ALL: ScanRange = { fromMs: 0, toMs: 8.64e15 };
const SEGMENT = 40; // entries a seal: 4 blocks of 10
const BLOCKS = SEGMENT / 10;

function open(dir: string): { dbs: Databases; store: EntryStore } {
  const dbs = openDatabases(dir, () => {});
  return { dbs, store: new EntryStore(dbs, new UsageStore(dbs.usage), SEGMENT) };
}
function fresh() {
  const dir = mkdtempSync(join(tmpdir(), "sluice-needle-merge-"));
  dirs.push(dir);
  return { dir, ...open(dir) };
}

/** writeBlocks writes blocks [from, from + count) of 10 entries (test/helpers/needle-blocks.ts). */
const writeBlocks = (store: EntryStore, count: number, from = 0) =>
  writeNumberedBlocks({ store, tenant, ids: new IdGenerator(), t0: T0, action: "needle.merge" }, count, from);

const order = (b: number, i: number) => [pathTerm("metadata", ["order"], `o-${b}-${i}`)];
const found = (store: EntryStore, needle: Needle, range = ALL) => [...store.needleBlocks(tenant, needle, range)].map((r) => [r.ms - T0, r.positions]);
/** the levels of the stored directories */
const directories = (dbs: Databases) =>
  [...dbs.filters.getKeys({ snapshot: false })].filter((k) => (k as unknown[])[2] === 0).map((k) => ((k as unknown[])[5] as number | undefined) ?? 0);
const until = async (done: () => boolean, check: () => void = () => {}) => {
  for (let i = 0; i < 400 && !done(); i++) {
    check();
    await new Promise((r) => setTimeout(r, 25));
  }
  expect(done()).toBe(true);
};

/** needles of every kind over blocks [0, blocks): each block's values, a substring of many partitions, alternatives, ranges, a cursor */
function answers(store: EntryStore, blocks: number) {
  const out: unknown[] = [];
  for (let b = 0; b < blocks; b++) out.push(found(store, [order(b, b % 10)]));
  out.push(found(store, [substringTerms("ref 13x9", "message")]));
  out.push(found(store, [substringTerms("ref ", "message")]));
  out.push(found(store, [order(2, 1), order(blocks - 3, 0), order(blocks + 5, 0)]));
  out.push(found(store, [substringTerms("ref ", "message")], { fromMs: T0 + 5, toMs: T0 + blocks - 7 }));
  out.push(found(store, [substringTerms("ref ", "message")], { ...ALL, after: { ms: T0 + 20, id: "\uffff" } }));
  return out;
}

test("sealed segments are merged FAN of a level at a time up to MAX_LEVEL, and every needle finds what it found before, during the merges and after", async () => {
  const { dbs, store } = fresh();
  const segments = FAN ** MAX_LEVEL + FAN + 1; // one of the top level, one of the level below, one left alone
  await writeBlocks(store, segments * BLOCKS);
  await new Promise((r) => setTimeout(r, 20));
  expect(directories(dbs)).toEqual(Array(segments).fill(0));
  const before = answers(store, segments * BLOCKS);
  expect((before[0] as unknown[]).length).toBe(1); // one entry's value is in one block
  store.startMerging({ ...DEFAULT_PACE, retireMs: 0 });
  const levels = () => directories(dbs).sort().join();
  await until(
    () => levels() === "0,1,2",
    () => expect(answers(store, segments * BLOCKS)).toEqual(before),
  );
  expect(answers(store, segments * BLOCKS)).toEqual(before);
  await store.settled();
  await dbs.root.close();
});

test("a query that listed segments before they were merged and removed finds the same blocks", async () => {
  const { dbs, store } = fresh();
  await writeBlocks(store, FAN * BLOCKS);
  await new Promise((r) => setTimeout(r, 20));
  const everyBlock: Needle = [substringTerms("ref ", "message")];
  const expected = found(store, everyBlock);
  const listed = store.needleBlocks(tenant, everyBlock, ALL)[Symbol.iterator]();
  const first = listed.next().value!; // the newest segment opened; the others are listed, not read yet
  store.startMerging({ ...DEFAULT_PACE, retireMs: 0 });
  await until(() => directories(dbs).join() === "1");
  const rest = [...{ [Symbol.iterator]: () => listed }].map((r) => [r.ms - T0, r.positions]);
  expect([[first.ms - T0, first.positions], ...rest]).toEqual(expected);
  await store.settled();
  await dbs.root.close();
});

test("after a restart, sources a crash left stored beside their merged segment are skipped, and removed once merging runs", async () => {
  const { dir, dbs, store } = fresh();
  await writeBlocks(store, FAN * BLOCKS + 1);
  await new Promise((r) => setTimeout(r, 20));
  const before = answers(store, FAN * BLOCKS + 1);
  store.startMerging({ ...DEFAULT_PACE, retireMs: 3_600_000 }); // the sources stay, as a kill -9 leaves them
  await until(() => directories(dbs).includes(1));
  await store.settled();
  await dbs.root.close();
  const again = open(dir);
  expect(directories(again.dbs).sort().join()).toBe(`${"0,".repeat(FAN)}1`);
  expect(answers(again.store, FAN * BLOCKS + 1)).toEqual(before); // no block twice
  again.store.startMerging({ ...DEFAULT_PACE, retireMs: 0 });
  await until(() => directories(again.dbs).join() === "1");
  expect(answers(again.store, FAN * BLOCKS + 1)).toEqual(before);
  await again.store.settled();
  await again.dbs.root.close();
});

test("retention drops a merged segment once its every block went", async () => {
  const { dbs, store } = fresh();
  await writeBlocks(store, FAN * BLOCKS);
  await new Promise((r) => setTimeout(r, 20));
  store.startMerging({ ...DEFAULT_PACE, retireMs: 0 });
  await until(() => directories(dbs).join() === "1");
  while ((await store.deleteBefore(tenant, T0 + 10, 100)) > 0);
  expect(directories(dbs)).toEqual([1]);
  expect(found(store, [order(12, 0)])).toEqual([[12, null]]);
  while ((await store.deleteBefore(tenant, T0 + FAN * BLOCKS, 100)) > 0);
  expect(directories(dbs)).toEqual([]);
  await store.settled();
  await dbs.root.close();
});

/** filteredBlocks makes blocks of filters of the given millisecond and region counts, each word drawn by `word`. */
const filteredBlocks = (spec: { ms: number; stripes: number[] }[], word: () => number): FilteredBlock[] =>
  spec.map((b, i) => ({
    ms: T0 + b.ms,
    firstId: `id-${String(i).padStart(4, "0")}`,
    size: b.stripes.length * 512,
    stripes: b.stripes.map((regions) => Uint32Array.from({ length: regions * REGION_WORDS }, word)),
  }));

test("a merged segment is laid out as sealing its sources' blocks at once would lay it out, whatever their order", () => {
  const block = fc.record({
    ms: fc.integer({ min: 0, max: 50 }),
    stripes: fc.array(fc.constantFrom(1, 2, 3, 4, 6, 12), { minLength: 1, maxLength: 3 }),
  });
  fc.assert(
    fc.property(fc.array(block, { minLength: FAN, maxLength: 16 }), fc.integer({ min: 0, max: 2 ** 31 }), (spec, seed) => {
      let x = seed;
      const word = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
      const blocks = filteredBlocks(spec, word);
      const whole = sealedParts(blocks);
      // the same blocks sealed as FAN segments, each of any of them (blocks interleave across segments)
      const groups: FilteredBlock[][] = Array.from({ length: FAN }, () => []);
      for (const [i, b] of blocks.entries()) groups[i < FAN ? i : word() % FAN].push(b);
      const sealed = groups.map((g) => sealedParts(g));
      if (sealed.some((s) => s.directory.p !== whole.directory.p)) return; // a merge joins segments of one partition count only
      const sources = sealed.map((s) => segmentOf(s.key, s.directory));
      const merged = mergedParts(sources, (k, p) => sealed[k].partitions[p])!;
      expect(merged.key).toEqual(whole.key);
      expect({ ...merged.directory, l: undefined, from: undefined }).toEqual({ ...whole.directory, l: undefined, from: undefined });
      expect(merged.partitions).toEqual(whole.partitions);
    }),
    { numRuns: 200 },
  );
});

test("a sealed segment finds a term in exactly the stripes whose own filter holds it, whatever their region counts (powers of two and three times one)", () => {
  const block = fc.record({
    ms: fc.integer({ min: 0, max: 50 }),
    stripes: fc.array(fc.constantFrom(1, 2, 3, 4, 6, 8, 12, 16, 24, 48, 96, 128), { minLength: 1, maxLength: 3 }),
  });
  fc.assert(
    fc.property(fc.array(block, { minLength: 1, maxLength: 12 }), fc.integer({ min: 0, max: 2 ** 31 }), (spec, seed) => {
      let x = seed;
      const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
      const word = () => next() & next() & next(); // an eighth of the bits set: some terms hold, most do not
      const blocks = filteredBlocks(spec, word);
      const sealed = sealedParts(blocks);
      const segment = segmentOf(sealed.key, sealed.directory);
      const partitions = new Map(sealed.partitions.map((words, p) => [p, words]));
      for (let t = 0; t < 50; t++) {
        const probe = probeOf({ h: next(), k: 2 });
        // the reference: the stripe's own filter, the term in region h mod R
        const expected = blocks
          .filter((b) => b.stripes.some((words) => probeHolds(words, (probe.h % (words.length / REGION_WORDS)) * REGION_WORDS, probe)))
          .map((b) => b.ms);
        const got = segmentBlocks(segment, partitions, [[probe]], ALL).map((r) => r.ms);
        expect(got.sort()).toEqual(expected.sort());
      }
    }),
    { numRuns: 200 },
  );
});

test("a segment takes the median stripe's partitions unless repeating its smaller stripes in each would add over an eighth", () => {
  const stored = (rc: number[]) => offsetsOf(rc, partitionsLog(rc)).total * 2 ** partitionsLog(rc);
  const sum = (rc: number[]) => rc.reduce((n, r) => n + r, 0);
  expect(2 ** partitionsLog(Array(128).fill(96))).toBe(32); // the largest power of two dividing 96
  expect(2 ** partitionsLog(Array(128).fill(256))).toBe(256);
  expect(2 ** partitionsLog([...Array(120).fill(128), ...Array(8).fill(1)])).toBe(128); // a few tail stripes repeated: 6% more
  const loghub = [...Array(110).fill(256), ...Array(18).fill(192)]; // at 256 partitions each 192 would be stored 4 times (41% more), at 128 twice (11%)
  expect(2 ** partitionsLog(loghub)).toBe(128);
  expect(2 ** partitionsLog([...Array(90).fill(256), ...Array(38).fill(192)])).toBe(64); // at 128, 26% more
  for (const rc of [loghub, [...Array(64).fill(96), ...Array(64).fill(128)], [...Array(90).fill(64), ...Array(38).fill(3)]]) {
    expect(stored(rc)).toBeLessThanOrEqual(sum(rc) * 1.125);
  }
});
