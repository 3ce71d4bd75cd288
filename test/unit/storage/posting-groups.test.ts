// Posting groups (posting-groups.ts, postings.ts): a stored value lists a run of a term's blocks; reads through groups
// yield exactly the blocks a key per block did, newest first, each once, within any range and after any cursor, also
// when a flush after a crash stored overlapping groups, and after retention took blocks out of them.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { openDatabases } from "../../../src/storage/db.ts";
import { newer, type ScanRange } from "../../../src/storage/keys.ts";
import { decodeGroup, encodeGroup, GROUP_SPAN_MS, groupExtent, groupsOf, type GroupedBlock } from "../../../src/storage/indexes/posting-groups.ts";
import { Postings } from "../../../src/storage/indexes/postings.ts";
import type { BlockTerms } from "../../../src/storage/indexes/posting-terms.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const uuid = fc.uuid().map((u) => u.toLowerCase());
const firstId = fc.oneof(uuid, fc.string({ maxLength: 40 }));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** withMs is a UUID whose first 48 bits are `ms`, as a UUIDv7 drawn in that millisecond starts. */
const withMs = (id: string, ms: number) => {
  const hex = ms.toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8)}${id.slice(13)}`;
};
const positions = fc.option(
  fc.uniqueArray(fc.integer({ min: 0, max: 2_000 }), { minLength: 1, maxLength: 300 }).map((p) => p.sort((a, b) => a - b)),
  { nil: null },
);

test("a group value returns its blocks as they were given, and groupExtent their count and oldest from its end (or walked, in a value written before): any first id, no positions, sparse or dense ones", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 2 ** 45 }),
      // a group within its span, or (retention's rekeying aside, never stored) one spanning past the extent's 32 bits
      fc.array(fc.record({ back: fc.oneof(fc.nat(GROUP_SPAN_MS), fc.nat(2 ** 33)), firstId, ownMs: fc.boolean(), positions }), { minLength: 1, maxLength: 20 }),
      (top, drafts) => {
        const blocks: GroupedBlock[] = drafts
          .map((d, i) => {
            const ms = top - (i === 0 ? 0 : d.back);
            return { ms, firstId: d.ownMs && UUID.test(d.firstId) ? withMs(d.firstId, ms) : d.firstId, positions: d.positions };
          })
          .sort((a, b) => b.ms - a.ms);
        const value = encodeGroup(blocks);
        expect(value.length % 2).toBe(1);
        expect(decodeGroup(top, value, true).map(({ ms, firstId, positions }) => ({ ms, firstId, positions }))).toEqual(blocks);
        expect(decodeGroup(top, value, false).map((b) => b.positions?.length ?? null)).toEqual(blocks.map((b) => b.positions?.length ?? null));
        const extent = { blocks: blocks.length, oldestBelow: top - blocks[blocks.length - 1].ms };
        expect(groupExtent(value)).toEqual(extent);
        // the same group as stored before its extent was kept at its end (GROUP, 0x47, for the extent and 0x45): still read, its extent walked
        const kept = value[value.length - 1] === 0x45 ? Uint8Array.from([...value.subarray(0, value.length - 5), 0x47]) : value;
        expect(decodeGroup(top, kept, true).map(({ ms, firstId, positions }) => ({ ms, firstId, positions }))).toEqual(blocks);
        expect(groupExtent(kept)).toEqual(extent);
      },
    ),
    { numRuns: 300 },
  );
});

test("a group joined from a stored group's blocks (their bytes copied) is the value the same blocks make given anew, under a new key too", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 2 ** 33, max: 2 ** 45 }),
      fc.array(fc.record({ back: fc.nat(GROUP_SPAN_MS), firstId, ownMs: fc.boolean(), positions }), { minLength: 2, maxLength: 20 }),
      fc.nat({ max: 19 }),
      (top, drafts, cut) => {
        const blocks: GroupedBlock[] = drafts
          .map((d, i) => {
            const ms = top - (i === 0 ? 0 : d.back);
            return { ms, firstId: d.ownMs && UUID.test(d.firstId) ? withMs(d.firstId, ms) : d.firstId, positions: d.positions };
          })
          .sort((a, b) => b.ms - a.ms);
        // the older blocks stored as a group keyed by the newest of them; a flush puts the newer ones before them
        const split = 1 + (cut % (blocks.length - 1));
        const older = blocks.slice(split);
        const stored = decodeGroup(older[0].ms, encodeGroup(older), cut % 2 === 0);
        expect(encodeGroup([...blocks.slice(0, split), ...stored])).toEqual(encodeGroup(blocks));
        expect(encodeGroup(stored)).toEqual(encodeGroup(older));
      },
    ),
    { numRuns: 300 },
  );
});

test("a block's first id drawn in the block's own millisecond takes 10 bytes of a group value, any other UUID 16", () => {
  const ms = Date.UTC(2026, 10, 28, 12, 34, 56, 789);
  const own = withMs("0190c5a1-2b3c-7d4e-8f5a-6b7c8d9e0f1a", ms);
  const other = withMs(own, ms + 1);
  const sizeWith = (firstId: string) => encodeGroup([{ ms, firstId, positions: [3, 9] }]).length;
  expect(sizeWith(other) - sizeWith(own)).toBeGreaterThanOrEqual(5); // 6 bytes, less the padding to an odd length
  expect(decodeGroup(ms, encodeGroup([{ ms, firstId: own, positions: null }]), true)[0].firstId).toBe(own);
  expect(decodeGroup(ms, encodeGroup([{ ms, firstId: other, positions: null }]), true)[0].firstId).toBe(other);
});

test("a damaged group value is refused with an error, never read past its end or looped on, by decodeGroup and groupExtent", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
      try {
        decodeGroup(1_000_000, bytes, true);
      } catch (e) {
        expect(e).toBeInstanceOf(Error);
      }
      try {
        expect(groupExtent(bytes).blocks).toBeLessThanOrEqual(bytes.length); // each block takes bytes of its own
      } catch (e) {
        expect(e).toBeInstanceOf(Error);
        expect(String(e)).toMatch(/posting group/);
      }
    }),
    { numRuns: 2_000 },
  );
});

test("groupsOf keeps a group within GROUP_SPAN_MS of its newest block", () => {
  fc.assert(
    fc.property(fc.array(fc.nat(5 * GROUP_SPAN_MS), { maxLength: 2_000 }), (times) => {
      const blocks = times.sort((a, b) => b - a).map((ms) => ({ ms }));
      const groups = groupsOf(blocks);
      expect(groups.flat()).toEqual(blocks);
      for (const g of groups) expect(g[0].ms - g[g.length - 1].ms).toBeLessThanOrEqual(GROUP_SPAN_MS);
    }),
  );
});

interface Written {
  ms: number;
  firstId: string;
  terms: Map<string, number[] | null>;
}

/** a block's or a range's offset: close together (one group), or spread over spans (groups split by GROUP_SPAN_MS, keyed above a range) */
const nearOrFar = fc.oneof(fc.nat(20_000), fc.nat(3 * GROUP_SPAN_MS));

test("reads through stored groups yield exactly the blocks a key per block would: any range and cursor, overlapping groups, blocks taken out", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-posting-groups-"));
  dirs.push(dir);
  const dbs = openDatabases(dir, () => {});
  const terms = ["a", "b", "c"];
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ at: nearOrFar, id: uuid, has: fc.subarray(terms), dense: fc.boolean(), batch: fc.nat(3), again: fc.boolean() }), {
        minLength: 1,
        maxLength: 60,
      }),
      fc.array(
        fc.record({
          from: nearOrFar,
          span: nearOrFar,
          cursor: fc.option(fc.nat(60)),
          edge: fc.option(fc.nat(60)),
          until: fc.option(fc.nat(60)),
          shift: fc.integer({ min: -1, max: 1 }),
        }),
        { minLength: 1, maxLength: 8 },
      ),
      fc.subarray([...Array(60).keys()]),
      async (drafts, ranges, doomedAt) => {
        const ws = `ws-${Math.random()}`;
        const postings = new Postings(dbs.postings, dbs.unindexed);
        const written: Written[] = [];
        const seen = new Set<string>();
        for (const d of drafts) {
          if (seen.has(`${d.at}/${d.id}`)) continue;
          seen.add(`${d.at}/${d.id}`);
          written.push({ ms: 1_000_000 + d.at, firstId: d.id, terms: new Map(d.has.map((t, k) => [t, d.dense && k === 0 ? null : [k, 7 + k, 300]])) });
        }
        const termsOf = (w: Written): BlockTerms =>
          [...w.terms].map(([t, p]) => ["t", t, p === null ? new Uint8Array(0) : new Uint8Array(Uint16Array.from(p).buffer)] as const);
        // batches in any order of time; blocks held again in a later batch store overlapping groups, as after a crash
        for (let batch = 0; batch < 4; batch++) {
          for (const [i, w] of written.entries())
            if (drafts[i].batch === batch || (drafts[i].again && batch === 3)) postings.hold(ws, "production", w.ms, w.firstId, termsOf(w));
          expect(await postings.flush()).toBe(true);
        }
        const doomed = written.filter((_, i) => doomedAt.includes(i));
        const check = (kept: Written[]) => {
          const ordered = kept.slice().sort((a, b) => (newer(a, b) ? -1 : newer(b, a) ? 1 : 0));
          for (const { from, span, cursor, edge, until, shift } of ranges) {
            const after = cursor === null || ordered.length === 0 ? undefined : ordered[cursor % ordered.length];
            // a range may start or end at a block's millisecond, or one either side of it: a group's edge
            const fromMs = edge === null || ordered.length === 0 ? 1_000_000 + from : ordered[edge % ordered.length].ms + shift;
            const toMs = until === null || ordered.length === 0 ? fromMs + span : ordered[until % ordered.length].ms + shift;
            const range: ScanRange = { fromMs, toMs, after: after && { ms: after.ms, id: after.firstId } };
            for (const t of terms) {
              const expected = ordered
                .filter((w) => w.terms.has(t) && w.ms >= range.fromMs && w.ms < range.toMs)
                .filter((w) => !after || w.ms < after.ms || (w.ms === after.ms && w.firstId <= after.firstId))
                .map((w) => ({ ms: w.ms, firstId: w.firstId, positions: w.terms.get(t) ?? null }));
              expect([...postings.blocks(ws, "production", "t", t, range)]).toEqual(expected);
              expect([...postings.sizes(ws, "production", "t", t, range)]).toEqual(
                expected.map((b) => ({ ms: b.ms, firstId: b.firstId, n: b.positions?.length ?? null })),
              );
              expect(postings.count(ws, "production", "t", t, range, 5)).toBe(Math.min(5, expected.length));
            }
          }
        };
        check(written);
        if (doomed.length > 0)
          await dbs.postings.transaction(() => {
            for (const t of terms) {
              const blocks = doomed.filter((w) => w.terms.has(t));
              if (blocks.length > 0) postings.removeBlocks(ws, "production", "t", t, blocks);
            }
          });
        check(written.filter((w) => !doomed.includes(w)));
      },
    ),
    { numRuns: 150 },
  );
  await dbs.root.close();
}, 60_000);

test("a block held again alone, keyed as the group it heads, does not take the group's other blocks out of it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-posting-groups-"));
  dirs.push(dir);
  const dbs = openDatabases(dir, () => {});
  const postings = new Postings(dbs.postings, dbs.unindexed);
  const tag = (p: number[]): BlockTerms => [["t", "x", new Uint8Array(Uint16Array.from(p).buffer)]];
  const older = { ms: 1_000, firstId: "00000000-0000-7000-8000-000000000000" };
  const newer = { ms: 1_000, firstId: "00000000-0000-7000-8000-000000000001" };
  postings.hold("ws", "production", older.ms, older.firstId, tag([1]));
  postings.hold("ws", "production", newer.ms, newer.firstId, tag([2]));
  expect(await postings.flush()).toBe(true);
  postings.hold("ws", "production", newer.ms, newer.firstId, tag([2]));
  expect(await postings.flush()).toBe(true);
  expect([...postings.blocks("ws", "production", "t", "x", { fromMs: 0, toMs: 8.64e15 })]).toEqual([
    { ...newer, positions: [2] },
    { ...older, positions: [1] },
  ]);
  await dbs.root.close();
});

test("a group that retention keys anew by its next block joins the group already under that key", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-posting-groups-"));
  dirs.push(dir);
  const dbs = openDatabases(dir, () => {});
  const postings = new Postings(dbs.postings, dbs.unindexed);
  const tag: BlockTerms = [["t", "x", new Uint8Array(0)]];
  const a = { ms: 1_000, firstId: "00000000-0000-7000-8000-000000000000" };
  const b = { ms: 1_001, firstId: "00000000-0000-7000-8000-000000000000" };
  const c = { ms: 1_001, firstId: "00000000-0000-7000-8000-000000000001" };
  postings.hold("ws", "production", a.ms, a.firstId, tag);
  postings.hold("ws", "production", b.ms, b.firstId, tag);
  expect(await postings.flush()).toBe(true); // a group keyed b: {b, a}
  postings.hold("ws", "production", c.ms, c.firstId, tag);
  postings.hold("ws", "production", b.ms, b.firstId, tag);
  expect(await postings.flush()).toBe(true); // a group keyed c: {c, b}
  await dbs.postings.transaction(() => postings.removeBlocks("ws", "production", "t", "x", [c])); // {b} keyed b again
  expect([...postings.blocks("ws", "production", "t", "x", { fromMs: 0, toMs: 8.64e15 })]).toEqual([
    { ...b, positions: null },
    { ...a, positions: null },
  ]);
  await dbs.root.close();
});

test("a term that comes once a flush joins its newest stored group while the group has room: a key a group, not a key a flush", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-posting-groups-"));
  dirs.push(dir);
  const dbs = openDatabases(dir, () => {});
  const postings = new Postings(dbs.postings, dbs.unindexed);
  const tag: BlockTerms = [["t", "x", new Uint8Array(Uint16Array.from([0]).buffer)]];
  const blocks = Array.from({ length: 10 }, (_, i) => ({ ms: 5_000 + i * 100, firstId: `00000000-0000-7000-8000-00000000000${i}` }));
  for (const b of blocks) {
    postings.hold("ws", "production", b.ms, b.firstId, tag);
    expect(await postings.flush()).toBe(true);
  }
  // and one past the group's span starts a group of its own
  const far = { ms: 5_000 + GROUP_SPAN_MS + 1_000, firstId: "00000000-0000-7000-8000-00000000000a" };
  postings.hold("ws", "production", far.ms, far.firstId, tag);
  expect(await postings.flush()).toBe(true);
  expect(dbs.postings.getKeysCount({ start: ["ws", "production", "t", "x"], end: ["ws", "production", "t", "x", 8.64e15 + 2] })).toBe(2);
  expect([...postings.blocks("ws", "production", "t", "x", { fromMs: 0, toMs: 8.64e15 })]).toEqual(
    [...blocks, far].reverse().map((b) => ({ ...b, positions: [0] })),
  );
  await dbs.root.close();
});

test("a flush leaves a term's newest stored group alone once its value passes 2 KB, and starts a group of its own", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-posting-groups-"));
  dirs.push(dir);
  const dbs = openDatabases(dir, () => {});
  const postings = new Postings(dbs.postings, dbs.unindexed);
  const tag: BlockTerms = [["t", "x", new Uint8Array(Uint16Array.from([0]).buffer)]];
  const id = (i: number) => `00000000-0000-7000-8000-${i.toString(16).padStart(12, "0")}`;
  const keys = () => dbs.postings.getKeysCount({ start: ["ws", "production", "t", "x"], end: ["ws", "production", "t", "x", 8.64e15 + 2] });
  const written: { ms: number; firstId: string }[] = [];
  // one block a flush, a millisecond apart: each joins the group until its value passes 2 KB (about 17 bytes a block)
  for (let i = 0; keys() < 2; i++) {
    written.push({ ms: 5_000 + i, firstId: id(i) });
    postings.hold("ws", "production", 5_000 + i, id(i), tag);
    expect(await postings.flush()).toBe(true);
    expect(i).toBeLessThan(400);
  }
  const [newest, full] = [...dbs.postings.getRange({ start: ["ws", "production", "t", "x", 8.64e15], end: ["ws", "production", "t", "x", 0], reverse: true })];
  expect((full.value as Uint8Array).length).toBeGreaterThan(2048);
  expect((full.value as Uint8Array).length).toBeLessThan(2048 + 40);
  expect(decodeGroup((newest.key as number[])[4], newest.value as Uint8Array, false)).toHaveLength(1);
  expect([...postings.blocks("ws", "production", "t", "x", { fromMs: 0, toMs: 8.64e15 })]).toEqual(written.reverse().map((b) => ({ ...b, positions: [0] })));
  await dbs.root.close();
});
