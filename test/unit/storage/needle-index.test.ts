// The filter index (needle-index.ts) on a real LMDB: held filters and sealed segments find the same blocks, newest
// first, within a range and after a cursor; a restart finds both; retention drops whole segments; an older data
// directory gets its filters built.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IdGenerator } from "../../../src/ids.ts";
import { openDatabases, type Databases } from "../../../src/storage/db.ts";
import { EntryStore, type Entry } from "../../../src/storage/entries.ts";
import type { ScanRange } from "../../../src/storage/keys.ts";
import { INDEX_LAYOUT } from "../../../src/storage/layout.ts";
import { STRIPE, pathTerm, substringTerms, type Needle } from "../../../src/storage/indexes/needles.ts";
import { UsageStore } from "../../../src/storage/usage.ts";
import { writeNumberedBlocks } from "../../helpers/needle-blocks.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const T0 = Date.parse("2026-11-24T10:00:00.000Z");
const tenant = { ws: "ws-needles", env: "production" as const };
const ALL: ScanRange = { fromMs: 0, toMs: 8.64e15 };

function open(dir: string, segmentEntries = 40): { dbs: Databases; store: EntryStore } {
  const dbs = openDatabases(dir, () => {});
  return { dbs, store: new EntryStore(dbs, new UsageStore(dbs.usage), segmentEntries) };
}
let ids = new IdGenerator();
function fresh() {
  ids = new IdGenerator(); // each test's blocks start at T0 again
  const dir = mkdtempSync(join(tmpdir(), "sluice-needle-index-"));
  dirs.push(dir);
  return { dir, ...open(dir) };
}

/** writeBlocks writes `count` blocks of `size` (10) entries (test/helpers/needle-blocks.ts). */
const writeBlocks = (store: EntryStore, count: number, from = 0, size = 10) =>
  writeNumberedBlocks({ store, tenant, ids, t0: T0, action: "needle.test" }, count, from, size);
const order = (b: number, i: number) => [[pathTerm("metadata", ["order"], `o-${b}-${i}`)]];
const found = (store: EntryStore, needle: Needle, range = ALL) => [...store.needleBlocks(tenant, needle, range)].map((r) => r.ms - T0);
const sealedSegments = (dbs: Databases) => [...dbs.filters.getKeys({ snapshot: false })].filter((k) => (k as unknown[])[2] === 0).length;
const settle = () => new Promise((r) => setTimeout(r, 20));

test("a value is found in its block whether its filter is held or sealed, and a segment is sealed once it covers enough entries", async () => {
  const { dbs, store } = fresh();
  await writeBlocks(store, 12); // 120 entries: three segments of 40 sealed
  await settle();
  expect(sealedSegments(dbs)).toBe(3);
  expect(dbs.filtersHeld.getKeysCount()).toBe(0);
  await writeBlocks(store, 2, 12); // held
  for (const b of [0, 5, 11, 12, 13]) expect(found(store, order(b, 3))).toContain(b);
  // one entry's value is in one block, and no other block's filter reports it here
  expect(found(store, order(5, 3))).toEqual([5]);
  expect(found(store, [substringTerms("ref 13x9", "message")])).toEqual([13]);
  // an alternative holds in either block, newest first
  expect(found(store, [...order(2, 1), ...order(13, 0)])).toEqual([13, 2]);
  await store.settled();
  await dbs.root.close();
});

test("a sealed segment's partitions fill the pages LMDB stores them on, and the blocks left over are sealed later", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-needle-index-"));
  dirs.push(dir);
  ids = new IdGenerator();
  const { dbs, store } = open(dir, 65_536); // a server's segments: partitions of about 128 stripes of one region each
  await writeBlocks(store, 200, 0, 1000);
  await settle();
  await store.settled();
  let bytes = 0;
  for (const { key, value } of dbs.filters.getRange({ snapshot: false })) if ((key as unknown[])[2] === 1) bytes += (value as Uint8Array).length;
  const stats = dbs.filters.getStats() as { overflowPages: number; pageSize: number };
  const directories = sealedSegments(dbs) * 2 * stats.pageSize; // a directory of about 130 stripes takes two pages
  expect(sealedSegments(dbs)).toBeGreaterThanOrEqual(3);
  expect(stats.overflowPages * stats.pageSize - directories).toBeLessThan(bytes * 1.05);
  for (const b of [0, 64, 65, 66, 130, 199]) expect(found(store, order(b, 999))).toEqual([b]);
  await dbs.root.close();
}, 30_000); // 200,000 entries: over the 5 s default on a loaded machine

test("the blocks come newest first, within the range and at or below a cursor's millisecond", async () => {
  const { dbs, store } = fresh();
  const refs = await writeBlocks(store, 10);
  await settle();
  const everyBlock = [substringTerms("ref ", "message")];
  expect(found(store, everyBlock)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
  expect(found(store, everyBlock, { fromMs: T0 + 3, toMs: T0 + 7 })).toEqual([6, 5, 4, 3]);
  expect(found(store, everyBlock, { ...ALL, after: { ms: refs[4].ms, id: refs[4].firstId } })).toEqual([4, 3, 2, 1, 0]);
  await store.settled();
  await dbs.root.close();
});

test("after a restart, sealed segments and held filters both find their blocks", async () => {
  const { dir, dbs, store } = fresh();
  await writeBlocks(store, 5); // one segment sealed, one block held
  await settle();
  expect(dbs.filtersHeld.getKeysCount()).toBe(1);
  await store.settled();
  await dbs.root.close();
  const again = open(dir);
  expect(found(again.store, order(1, 2))).toEqual([1]);
  expect(found(again.store, order(4, 2))).toEqual([4]);
  await writeBlocks(again.store, 3, 5); // the held block joins the next segment
  await settle();
  expect(again.dbs.filtersHeld.getKeysCount()).toBe(0);
  expect(found(again.store, order(4, 2))).toEqual([4]);
  await again.store.settled();
  await again.dbs.root.close();
});

test("retention drops the segments whose every block went, and a held filter with its block", async () => {
  const { dbs, store } = fresh();
  await writeBlocks(store, 9); // segments of blocks 0–3 and 4–7, block 8 held
  await settle();
  expect(sealedSegments(dbs)).toBe(2);
  while ((await store.deleteBefore(tenant, T0 + 6, 100)) > 0);
  expect(sealedSegments(dbs)).toBe(1); // blocks 4 and 5 went, 6 and 7 keep theirs
  expect(found(store, order(7, 0))).toEqual([7]);
  while ((await store.deleteBefore(tenant, T0 + 9, 100)) > 0);
  expect(sealedSegments(dbs)).toBe(0);
  expect(dbs.filtersHeld.getKeysCount()).toBe(0);
  expect(found(store, [substringTerms("ref ", "message")])).toEqual([]);
  await store.settled();
  await dbs.root.close();
});

test("a data directory of index layout 2, which has no filters, gets them built from its blocks at open", async () => {
  const { dir, dbs, store } = fresh();
  await writeBlocks(store, 6);
  await store.settled();
  dbs.filters.clearSync();
  dbs.filtersHeld.clearSync();
  dbs.layout.putSync("indexes", 2);
  await dbs.root.close();
  const again = open(dir);
  expect(again.dbs.layout.get("indexes")).toBe(INDEX_LAYOUT);
  for (const b of [0, 3, 5]) expect(found(again.store, order(b, 9))).toEqual([b]);
  await again.store.settled();
  await again.dbs.root.close();
});

test("a data directory of index layout 3, whose filters hold no hex grams, gets its filters built anew at open", async () => {
  const { dir, dbs, store } = fresh();
  await writeBlocks(store, 6);
  await store.settled();
  dbs.filters.clearSync(); // what layout 3 left stands for nothing here: without a rebuild, no block is found
  dbs.filtersHeld.clearSync();
  dbs.layout.putSync("indexes", 3);
  await dbs.root.close();
  const again = open(dir);
  expect(again.dbs.layout.get("indexes")).toBe(INDEX_LAYOUT);
  expect(found(again.store, [substringTerms("ref 4x7", "message")])).toEqual([4]);
  await again.store.settled();
  await again.dbs.root.close();
});

test("a rare value names the stripe of STRIPE entries it is in, held or sealed, and nothing else of its block", async () => {
  const { dbs, store } = fresh();
  const { ms, ids: fresh1000 } = ids.next(1000, T0);
  const entries = fresh1000.map(
    (id, i): Entry => ({
      id,
      level: "info",
      action: "needle.test",
      message: i === 100 ? "the one with 8812-a in it" : `line ${i}`,
      tags: [],
      clientMs: ms,
      actor: null,
      target: null,
      context: null,
      metadata: null,
    }),
  );
  await store.append(tenant, ms, entries, -1);
  const firstStripe = Array.from({ length: STRIPE }, (_, i) => i);
  const needle = [substringTerms("with 8812-a", "message")]; // "with": the digits' trigrams are in other lines
  expect([...store.needleBlocks(tenant, needle, ALL)].map((r) => r.positions)).toEqual([firstStripe]);
  await writeBlocks(store, 4, 1); // seals the 1,000 entries with the next blocks
  await settle();
  expect(dbs.filtersHeld.getKeysCount()).toBe(0);
  expect([...store.needleBlocks(tenant, needle, ALL)].map((r) => r.positions)).toEqual([firstStripe]);
  // a value every stripe may hold names the whole block
  expect([...store.needleBlocks(tenant, [substringTerms("line", "message")], ALL)].map((r) => r.positions)).toEqual([null]);
  // the last stripe is as long as the block's entries leave it
  const last = [...store.needleBlocks(tenant, [substringTerms("line 999", "message")], ALL)];
  expect(last.map((r) => r.positions?.length)).toEqual([1000 - Math.floor(999 / STRIPE) * STRIPE]);
  await store.settled();
  await dbs.root.close();
});

test("a value names its block's stripes, held or sealed, whether its needle is one term or many: the last stripe alone, or the whole block", async () => {
  const { dbs, store } = fresh();
  const size = 1000;
  const { ms, ids: drawn } = ids.next(size, T0);
  const inBoth = (i: number) => i === 7 || i === size - 1;
  const entries = drawn.map(
    (id, i): Entry => ({
      id,
      level: "info",
      action: "needle.test",
      message: inBoth(i) ? "the one with 8812-a in it" : i === 900 ? "only 4471-zq here" : `line ${i}`,
      tags: [],
      clientMs: ms,
      actor: null,
      target: null,
      context: null,
      metadata: { order: inBoth(i) ? "o-twice" : `o-${i}` },
    }),
  );
  await store.append(tenant, ms, entries, -1);
  const lastStripe = Array.from({ length: size - STRIPE }, (_, i) => STRIPE + i);
  const positions = (needle: Needle) => [...store.needleBlocks(tenant, needle, ALL)].map((r) => r.positions);
  const check = () => {
    expect(positions([substringTerms("with 8812-a", "message")])).toEqual([null]);
    expect(positions([[pathTerm("metadata", ["order"], "o-twice")]])).toEqual([null]);
    expect(positions([substringTerms("only 4471-zq", "message")])).toEqual([lastStripe]);
    expect(positions([[pathTerm("metadata", ["order"], "o-900")]])).toEqual([lastStripe]);
  };
  check();
  await writeBlocks(store, 4, 1); // seals them with the next blocks
  await settle();
  expect(dbs.filtersHeld.getKeysCount()).toBe(0);
  check();
  await store.settled();
  await dbs.root.close();
});
